import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseStateDocument } from '../../../src/core/state/document';
import { buildCliBundle, runNode } from '../support/cliProcess';
import { AGENT, removeTempDirs, demo, NOW, newSpends, runRows, tempDir } from './helpers';

after(removeTempDirs);

/**
 * Issue 34, defect 4: an owed replan (two stalled turns on the lane) stopped the turn driver with
 * "the plan is broken (session binding rejected: missing_turn_lineage)". The driver now runs it as
 * a replan turn: the agent is told it is a replan, replans through LoopX's own CLI, and the turn's
 * record discharges the obligation, so the loop goes on with the todos.
 */
describe('an owed replan through the real CLI: node cli.js turn loop runs it as a replan turn', function () {
  this.timeout(120_000);
  let cli = '';
  before(async () => {
    cli = await buildCliBundle();
  });

  it('two stalled turns, then quota should-run owes a replan, then the loop runs the replan turn and goes on with the todos', async () => {
    const log = path.join(tempDir('loopx-replan-log-'), 'requests.log');
    const d = demo((goal) => {
      const coordination = goal['coordination'] as Record<string, unknown>;
      coordination['agent_profiles'] = {
        demo: { executor: { preset: 'command', command: [process.execPath, AGENT, 'stall', cli, log] } },
      };
    });
    // No user gate: an operator gate outranks the replan guard (shouldRun.ts), and this lane is the agent's alone.
    const state = fs.readFileSync(d.statePath, 'utf8');
    fs.writeFileSync(
      d.statePath,
      state.replace(
        /- \[ \] \[P\d\] [^\n]*\n {2}<!-- loopx:todo todo_id=todo_(gate_publish|review_index) [^\n]*\n/g,
        '',
      ),
    );
    assert.doesNotMatch(fs.readFileSync(d.statePath, 'utf8'), /todo_gate_publish|todo_review_index/);
    const loop = (maxTurns: number) =>
      runNode(
        [
          cli,
          'turn',
          'loop',
          '--goal-id',
          'tidy-notes',
          '--agent-id',
          'demo',
          '--max-turns',
          String(maxTurns),
          '--format',
          'json',
        ],
        d.workspace,
        { LOOPX_NOW: NOW },
      );

    // Two turns that repeat the same poll without progress.
    const stalled = await loop(2);
    assert.equal(stalled.code, 0, stalled.stderr);
    const first = JSON.parse(stalled.stdout) as { turns: Record<string, unknown>[]; stop_reason: string };
    assert.deepEqual(
      first.turns.map((t) => [t['status'], t['result_kind']]),
      [
        ['committed', 'validated_progress'],
        ['committed', 'validated_progress'],
      ],
    );
    assert.equal(first.stop_reason, 'max_turns');

    const guard = await runNode(
      [cli, 'quota', 'should-run', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--format', 'json'],
      d.workspace,
      { LOOPX_NOW: NOW },
    );
    assert.equal(guard.code, 0, guard.stderr);
    const decision = JSON.parse(guard.stdout) as Record<string, unknown>;
    assert.equal(decision['effective_action'], 'autonomous_replan_required');
    const obligationId = (decision['replan_obligation'] as { obligation_id: string }).obligation_id;

    // The plan is a replan turn bound to the obligation, not a broken plan.
    const plan = await runNode(
      [cli, 'turn', 'plan', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--turn-instance-id', 't-replan'],
      d.workspace,
      { LOOPX_NOW: NOW },
    );
    assert.equal(plan.code, 0, plan.stderr);
    assert.doesNotMatch(plan.stdout, /missing_turn_lineage/);
    assert.match(plan.stdout, /Route: \*\*replan_required\*\*/);
    assert.match(plan.stdout, new RegExp(`tidy-notes:demo:autonomous_replan:${obligationId}:t-replan`));

    // The loop runs the replan turn, then goes on with a todo turn.
    const through = await loop(2);
    assert.equal(through.code, 0, through.stderr);
    const second = JSON.parse(through.stdout) as { turns: Record<string, unknown>[]; stop_reason: string };
    assert.equal(second.stop_reason, 'max_turns', through.stdout);
    assert.deepEqual(
      second.turns.map((t) => [t['status'], t['result_kind'], t['todo_id'] === null]),
      [
        ['committed', 'validated_progress', true],
        ['committed', 'validated_progress', false],
      ],
    );

    // The agent was told: the second run's request was a replan turn naming the obligation.
    assert.deepEqual(fs.readFileSync(log, 'utf8').trim().split('\n'), [
      'ready_for_host -',
      'ready_for_host -',
      `replan_required ${obligationId}`,
      'ready_for_host -',
    ]);
    // The replan went through LoopX's CLI into the state file, and the turn's record discharges the obligation.
    const doc = parseStateDocument(fs.readFileSync(d.statePath, 'utf8'));
    assert.ok(doc.todos.some((t) => t.title.includes('Write notes/summary.md instead of polling upstream.')));
    const replanRows = (await runRows(d)).filter(
      (r) => (r as Record<string, unknown>)['replan_obligation_id'] === obligationId,
    );
    // The replan turn's record and its spend.
    assert.deepEqual(replanRows.map((r) => r.classification).sort(), ['quota_slot_spent', 'validated_progress']);
    // Four turns, four spends, the replan's bound to the obligation.
    const spends = await newSpends(d);
    assert.equal(spends.length, 4);
    const effectIds = spends.map(
      (s) => ((s as Record<string, unknown>)['settlement_identity'] as { effect_id: string }).effect_id,
    );
    assert.equal(
      effectIds.filter((id) => id.startsWith(`tidy-notes:demo:autonomous_replan:${obligationId}:`)).length,
      1,
    );
    const after = await runNode(
      [cli, 'quota', 'should-run', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--format', 'json'],
      d.workspace,
      { LOOPX_NOW: NOW },
    );
    assert.notEqual(
      (JSON.parse(after.stdout) as Record<string, unknown>)['effective_action'],
      'autonomous_replan_required',
    );
  });
});
