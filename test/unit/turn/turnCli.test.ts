import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cliCommands } from '../../../src/core/commands/catalog';
import { parseStateDocument } from '../../../src/core/state/document';
import { buildCliBundle, runNode } from '../support/cliProcess';
import { runLoopx } from '../cli/run';
import { AGENT, removeTempDirs, demo, NOW, newSpends, runRows } from './helpers';

after(removeTempDirs);

const NODE = process.execPath;

describe('loopx turn (CLI)', function () {
  this.timeout(60_000);

  it('is in the catalog: plan, run-once, loop, inspect-journal in "Quota and turns"', () => {
    const turn = cliCommands().filter((c) => c.cli?.startsWith('turn '));
    assert.deepEqual(
      turn.map((c) => [c.key, c.cli, c.title, c.mutation, c.scope, c.group, c.icon ?? null]),
      [
        ['turnPlan', 'turn plan', null, 'read_only', 'goal', 'Quota and turns', null],
        [
          'turnRunOnce',
          'turn run-once',
          'Run One Turn…',
          'writes_after_preview',
          'goal',
          'Quota and turns',
          'debug-step-over',
        ],
        ['turnLoop', 'turn loop', 'Run Loop…', 'writes', 'goal', 'Quota and turns', 'play'],
        ['turnInspectJournal', 'turn inspect-journal', null, 'read_only', 'goal', 'Quota and turns', null],
      ],
    );
  });

  it('turn plan prints the plan with the host request and the settlement identity, and writes nothing', async () => {
    const d = demo();
    const run = await runLoopx(
      [
        'turn',
        'plan',
        '--goal-id',
        'tidy-notes',
        '--agent-id',
        'demo',
        '--turn-instance-id',
        't-1',
        '--format',
        'json',
      ],
      { cwd: d.workspace, now: NOW },
    );
    assert.equal(run.code, 0, run.stderr);
    const plan = run.json();
    assert.equal(plan['route'], 'ready_for_host');
    assert.equal(
      (plan['settlement_identity'] as Record<string, unknown>)['effect_id'],
      'tidy-notes:demo:todo_related:t-1',
    );
    assert.equal((plan['host_request'] as Record<string, unknown>)['schema_version'], 'loopx_turn_host_request_v0');
    assert.equal(fs.existsSync(path.join(d.runtimeGoalDir, 'turns')), false);
    const markdown = await runLoopx(['turn', 'plan', '--goal-id', 'tidy-notes', '--agent-id', 'demo'], {
      cwd: d.workspace,
      now: NOW,
    });
    assert.match(markdown.stdout, /Route: \*\*ready_for_host\*\*/);
    assert.match(markdown.stdout, /todo_links \| claimed_by_other_agent: claimed by codex-main/);
  });

  it('case 33/34 through the CLI: run-once commits (exit 0) and a failed validation exits 1; inspect-journal lists both', async () => {
    const d = demo();
    const base = [
      'turn',
      'run-once',
      '--goal-id',
      'tidy-notes',
      '--agent-id',
      'demo',
      '--host-adapter-command-json',
      JSON.stringify([NODE, AGENT, 'complete']),
      '--format',
      'json',
    ];
    const preview = await runLoopx(base, { cwd: d.workspace, now: NOW, env: { PATH: process.env['PATH'] ?? '' } });
    assert.equal(preview.code, 0);
    assert.equal(preview.json()['status'], 'preview');
    const committed = await runLoopx([...base, '--execute'], {
      cwd: d.workspace,
      now: NOW,
      env: { PATH: process.env['PATH'] ?? '' },
    });
    assert.equal(committed.code, 0, committed.stdout);
    assert.equal(committed.json()['status'], 'committed');
    assert.match(committed.stderr, /✓ quota_spend/);
    const failed = await runLoopx(
      [
        ...base,
        '--execute',
        '--validation-command-json',
        JSON.stringify([NODE, '-e', 'process.exit(9)']),
        '--validation-failure-kind',
        'replan_required',
      ],
      {
        cwd: d.workspace,
        now: NOW,
        env: { PATH: process.env['PATH'] ?? '' },
      },
    );
    assert.equal(failed.code, 1);
    const json = failed.json();
    assert.equal(json['result_kind'], 'validation_failed');
    assert.equal((json['validation'] as Record<string, unknown>)['exit_code'], 9);

    const list = await runLoopx(['turn', 'inspect-journal', '--goal-id', 'tidy-notes', '--format', 'json'], {
      cwd: d.workspace,
      now: NOW,
    });
    const turns = list.json()['turns'] as Record<string, unknown>[];
    assert.deepEqual(turns.map((t) => t['status']).sort(), ['committed', 'failed']);
    const one = await runLoopx(
      ['turn', 'inspect-journal', '--goal-id', 'tidy-notes', '--turn-key', String(json['turn_key'])],
      { cwd: d.workspace, now: NOW },
    );
    assert.match(one.stdout, /"failed_phase": "validation"/);
  });

  it('refuses bad arguments with exit 2', async () => {
    const d = demo();
    const usage = async (args: string[]): Promise<void> => {
      const run = await runLoopx(['turn', ...args], { cwd: d.workspace, now: NOW });
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
    };
    await usage([
      'run-once',
      '--goal-id',
      'tidy-notes',
      '--agent-id',
      'demo',
      '--host-adapter-command-json',
      'node agent.js',
    ]);
    await usage(['run-once', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--retry-failed-turn']);
    await usage([
      'run-once',
      '--goal-id',
      'tidy-notes',
      '--agent-id',
      'demo',
      '--resume-turn-key',
      'nope',
      '--execute',
    ]);
    await usage(['run-once', '--goal-id', '../x', '--agent-id', 'demo']);
    await usage(['loop', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--max-turns', '0']);
    // A malformed turn instance id is refused by the operation: a failed operation, exit 1.
    const badInstance = await runLoopx(
      ['turn', 'plan', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--turn-instance-id', 'has space'],
      { cwd: d.workspace, now: NOW },
    );
    assert.equal(badInstance.code, 1, badInstance.stderr);
    assert.match(badInstance.stderr, /turn instance id "has space" must start with a letter or digit/);
  });
});

describe('the demo, end to end: node cli.js turn loop --goal-id tidy-notes --agent-id demo', function () {
  this.timeout(120_000);
  let cli = '';
  before(async () => {
    cli = await buildCliBundle();
  });

  it('runs the runnable todos with real validation, spends once per turn, and stops at the publish gate with a readable state file', async () => {
    const d = demo();
    const run = await runNode(
      [cli, 'turn', 'loop', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--format', 'json'],
      d.workspace,
      { LOOPX_NOW: NOW },
    );
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as Record<string, unknown>;
    assert.equal(result['stop_reason'], 'user_action');
    assert.equal(result['spend_count'], 2);
    assert.match(
      String(result['message']),
      /todo_gate_publish "Approve publishing the knowledge base to the team wiki\."/,
    );
    assert.match(String(result['message']), /skipped todo_links \(claimed by codex-main\)/);
    assert.match(run.stderr, /⏹ loop stopped \(user_action\) after 2 turn\(s\), 2 spend\(s\)/);
    assert.match(run.stderr, /✓ validation: validation passed: node scripts\/check-notes\.js/);

    // Exactly two spends, each with an accountable run record before it.
    assert.equal((await newSpends(d)).length, 2);
    const deliveries = (await runRows(d)).filter((r) => r.classification === 'validated_completion');
    assert.deepEqual(deliveries.map((r) => r.todo_id).sort(), ['todo_index', 'todo_related']);

    // The state file a person reads afterwards.
    const text = fs.readFileSync(d.statePath, 'utf8');
    const doc = parseStateDocument(text);
    const status = (id: string): string | undefined => doc.todos.find((t) => t.todoId === id)?.status;
    assert.deepEqual(
      ['todo_titles', 'todo_related', 'todo_index', 'todo_links', 'todo_publish', 'todo_gate_publish'].map(status),
      ['done', 'done', 'done', 'open', 'open', 'open'],
    );
    assert.match(
      text,
      /- \[x\] \[P1\] Add a "Related" section linking notes that share a tag\.\n {2}<!-- loopx:todo todo_id=todo_related status=done .*evidence=3%20notes/,
    );
    assert.match(
      text,
      /- \[x\] \[P1\] Write notes\/index\.md listing every note by tag\.\n {2}<!-- loopx:todo todo_id=todo_index status=done .*evidence=notes\/index\.md%20lists%203%20notes%20under%204%20tags/,
    );
    assert.match(text, /- \[ \] \[P0\] Approve publishing the knowledge base to the team wiki\./);
    assert.match(text, /## Next Action\n\n- Run the next turn on the next open todo of the goal\.\n/);
    assert.deepEqual(doc.issues, []);
    // The agent's work is really there.
    assert.match(fs.readFileSync(path.join(d.workspace, 'notes', 'index.md'), 'utf8'), /^# Notes index/);
    assert.match(fs.readFileSync(path.join(d.workspace, 'notes', 'bikes.md'), 'utf8'), /## Related/);

    // Running the loop again changes nothing: the agent still waits at the gate.
    const again = await runNode(
      [cli, 'turn', 'loop', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--format', 'json'],
      d.workspace,
      { LOOPX_NOW: NOW },
    );
    assert.equal(again.code, 0);
    assert.equal((JSON.parse(again.stdout) as Record<string, unknown>)['turn_count'], 0);
    assert.equal(fs.readFileSync(d.statePath, 'utf8'), text);
    assert.equal((await newSpends(d)).length, 2);
  });
});
