import assert from 'node:assert/strict';
import { runLoopx } from '../cli/run';
import { makeWorkspace, NOW, readIndexRows } from './helpers';

describe('loopx quota CLI', () => {
  it('should-run prints the decision as one JSON object and exits 0', async () => {
    const ws = makeWorkspace();
    const run = await runLoopx(
      [
        '--registry',
        ws.registryPath,
        '--format',
        'json',
        'quota',
        'should-run',
        '--goal-id',
        'g',
        '--agent-id',
        'agent-a',
      ],
      { cwd: ws.dir, env: { HOME: ws.dir }, now: NOW },
    );
    assert.equal(run.code, 0, run.stderr);
    const json = run.json();
    assert.deepEqual(
      [json['should_run'], json['decision'], json['state'], json['effective_action']],
      [true, 'run', 'eligible', 'normal_run'],
    );
    assert.equal((json['selected_todo'] as { todo_id: string }).todo_id, 'todo_parser');
  });

  it('should-run for an unknown goal exits 1 with ok=false; a bad turn id is a usage error (exit 2)', async () => {
    const ws = makeWorkspace();
    const missing = await runLoopx(
      ['--registry', ws.registryPath, '--format', 'json', 'quota', 'should-run', '--goal-id', 'nope'],
      { cwd: ws.dir, env: { HOME: ws.dir } },
    );
    assert.equal(missing.code, 1);
    assert.equal(missing.json()['status'], 'goal_not_found');
    const bad = await runLoopx(
      ['--registry', ws.registryPath, 'quota', 'should-run', '--goal-id', 'g', '--turn-instance-id', 'private/path'],
      { cwd: ws.dir, env: { HOME: ws.dir } },
    );
    assert.equal(bad.code, 1, 'a malformed id is refused by the operation: exit 1, as the original');
  });

  it('the should-run operation answers an unknown goal itself: the refusal names the id asked; a padded id of a goal is refused with its decision', async () => {
    const ws = makeWorkspace();
    const ask = (goalId: string) =>
      runLoopx(
        [
          '--registry',
          ws.registryPath,
          '--format',
          'json',
          'quota',
          'should-run',
          '--goal-id',
          goalId,
          '--agent-id',
          'agent-a',
        ],
        {
          cwd: ws.dir,
          env: { HOME: ws.dir },
        },
      );
    const missing = await ask('nope');
    assert.equal(missing.code, 1);
    const refusal = missing.json();
    assert.deepEqual(
      [refusal['status'], refusal['goal_id'], refusal['agent_id'], refusal['state'], refusal['reason']],
      [
        'goal_not_found',
        'nope',
        'agent-a',
        'unknown',
        "goal 'nope' is not in the quota plan (registry); check --goal-id",
      ],
    );
    // As before the goal lookup moved into the operation: the registry lists the id once trimmed, so the goal is
    // decided on, and the answer is still the not-found refusal, carrying that decision's goal id and reason.
    const padded = await ask(` ${ws.goalId}`);
    assert.equal(padded.code, 1);
    const answer = padded.json();
    assert.deepEqual([answer['status'], answer['goal_id']], ['goal_not_found', ws.goalId]);
    assert.doesNotMatch(String(answer['reason']), /is not in the quota plan/);
  });

  it('case 11: an unregistered agent exits 1 with quota_agent_not_registered', async () => {
    const ws = makeWorkspace();
    const run = await runLoopx(
      [
        '--registry',
        ws.registryPath,
        '--format',
        'json',
        'quota',
        'should-run',
        '--goal-id',
        'g',
        '--agent-id',
        'stranger',
      ],
      { cwd: ws.dir, env: { HOME: ws.dir } },
    );
    assert.equal(run.code, 1);
    assert.equal(run.error().code, 'quota_agent_not_registered');
  });

  it('spend-slot previews by default, writes once with --execute, and replays without writing', async () => {
    const ws = makeWorkspace();
    const args = [
      '--registry',
      ws.registryPath,
      '--format',
      'json',
      'quota',
      'spend-slot',
      '--goal-id',
      'g',
      '--agent-id',
      'agent-a',
      '--todo-id',
      'todo_parser',
      '--turn-instance-id',
      't1',
      '--tokens',
      '900',
      '--cost-usd',
      '0.12',
      '--usage-estimated',
    ];
    const options = { cwd: ws.dir, env: { HOME: ws.dir }, now: NOW };
    const preview = await runLoopx(args, options);
    assert.equal(preview.code, 0, preview.stdout);
    assert.deepEqual([preview.json()['dry_run'], preview.json()['appended']], [true, false]);
    assert.equal(readIndexRows(ws).length, 0);
    const written = await runLoopx([...args, '--execute'], options);
    assert.equal(written.code, 0, written.stdout);
    assert.equal(written.json()['appended'], true);
    const replay = await runLoopx([...args, '--execute'], options);
    assert.deepEqual([replay.code, replay.json()['appended'], replay.json()['idempotent_replay']], [0, false, true]);
    const rows = readIndexRows(ws);
    assert.equal(rows.length, 1);
    assert.deepEqual(rows[0]?.['usage'], { estimated: true, tokens: 900, cost_usd: 0.12 });

    const status = await runLoopx(
      ['--registry', ws.registryPath, '--format', 'json', 'quota', 'status', '--goal-id', 'g'],
      options,
    );
    assert.equal(status.code, 0);
    const summary = status.json();
    assert.deepEqual([summary['spent_slots'], summary['remaining_slots'], summary['state']], [1, 1439, 'eligible']);
    assert.deepEqual((summary['budgets'] as Record<string, { used: number }>)['max_tokens']?.used, 900);
  });

  it('spend-slot that is not allowed exits 1 (a paused goal spends nothing)', async () => {
    const ws = makeWorkspace({ quota: { compute: 0 } });
    const run = await runLoopx(
      [
        '--registry',
        ws.registryPath,
        '--format',
        'json',
        'quota',
        'spend-slot',
        '--goal-id',
        'g',
        '--agent-id',
        'agent-a',
        '--turn-instance-id',
        't1',
        '--execute',
      ],
      { cwd: ws.dir, env: { HOME: ws.dir }, now: NOW },
    );
    assert.equal(run.code, 1);
    assert.equal(run.json()['ok'], false);
    assert.equal(readIndexRows(ws).length, 0);
  });

  it('void-slot previews, then writes a compensating record with --execute', async () => {
    const ws = makeWorkspace();
    const options = { cwd: ws.dir, env: { HOME: ws.dir }, now: NOW };
    await runLoopx(
      [
        '--registry',
        ws.registryPath,
        'quota',
        'spend-slot',
        '--goal-id',
        'g',
        '--agent-id',
        'agent-a',
        '--todo-id',
        'todo_parser',
        '--turn-instance-id',
        't1',
        '--execute',
      ],
      options,
    );
    const spentAt = String(readIndexRows(ws)[0]?.['generated_at']);
    const args = [
      '--registry',
      ws.registryPath,
      '--format',
      'json',
      'quota',
      'void-slot',
      '--goal-id',
      'g',
      '--void-generated-at',
      spentAt,
      '--reason',
      'double count',
    ];
    const preview = await runLoopx(args, options);
    assert.deepEqual([preview.code, preview.json()['appended']], [0, false]);
    const written = await runLoopx([...args, '--execute'], options);
    assert.deepEqual(
      [written.code, written.json()['appended'], (written.json()['quota'] as { spent_slots: number }).spent_slots],
      [0, true, 0],
    );
    const none = await runLoopx(['--registry', ws.registryPath, 'quota', 'void-slot', '--goal-id', 'g'], options);
    assert.equal(none.code, 2);
  });

  it('status in Markdown names the state and the budgets; config warnings are shown', async () => {
    const ws = makeWorkspace({ quota: { compute: 3, max_cost_usd: 5 } });
    const run = await runLoopx(['--registry', ws.registryPath, 'quota', 'status', '--goal-id', 'g'], {
      cwd: ws.dir,
      env: { HOME: ws.dir },
      now: NOW,
    });
    assert.equal(run.code, 0);
    assert.match(run.stdout, /State: \*\*eligible\*\*/);
    assert.match(run.stdout, /Cost \(USD\) \| 0 of 5 \(0%\)/);
    assert.match(run.stdout, /quota\.compute: compute is a fraction from 0 to 1 with 2 decimals; 3 was read as 1/);
  });
});
