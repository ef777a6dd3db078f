import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  GOAL_STATE,
  mixedWorkspace,
  quotaOf,
  run,
  stopLeftovers,
  writeGoal,
  type MixedWorkspace,
  type Program,
  type RunResult,
} from './helpers';

/**
 * Settlement evidence the original accepts (issue 30): a turn worked and written back by one program is spent by the
 * other. The original's `quota spend-slot --turn-instance-id` asks for a *delivery workspace snapshot* on the turn's
 * accountable writeback row whenever the turn's todo does not explicitly say it writes nothing (loopx/control_plane/
 * quota/slot_accounting.py `_missing_delivery_workspace_preview`): the checkout's `origin` identity and kind, taken by
 * refresh-state in a git checkout with a credential-free origin (agents/workspace_guard.py
 * `capture_delivery_workspace`). So the workspace here is such a checkout and the todo declares a write scope (the
 * original then classifies the workspace as `required`). Without an origin the original refuses its own turns too.
 */

const TODO = 'todo_aaaaaaaaaaaa';
const ORIGIN = 'https://github.com/example/mixed-settlement.git';

function ok(result: RunResult, step: string): Record<string, unknown> {
  assert.equal(result.code, 0, `${step}: exit ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result.json;
}

function gitIn(w: MixedWorkspace, args: readonly string[]): void {
  const done = spawnSync('git', ['-c', 'user.email=mixed@example.invalid', '-c', 'user.name=mixed', ...args], {
    cwd: w.ws,
    env: w.env,
    encoding: 'utf8',
  });
  assert.equal(done.status, 0, `git ${args.join(' ')}: ${done.stderr}`);
}

/** The goal's run index rows, oldest first. */
function indexRows(w: MixedWorkspace): Record<string, unknown>[] {
  const file = path.join(w.ws, 'runtime', 'goals', 'g', 'runs', 'index.jsonl');
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function lastReceipt(w: MixedWorkspace, turn: string): Record<string, unknown> {
  const file = path.join(w.ws, 'runtime', 'goals', 'g', 'rollout-event-log.jsonl');
  const events = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const receipt = events.findLast((e) => e['event_kind'] === 'quota_should_run' && e['run_id'] === turn);
  assert.ok(receipt, `no heartbeat receipt of ${turn}`);
  return receipt['details'] as Record<string, unknown>;
}

/** One turn's guard and writeback by `worker`: should-run bound to the turn, then the accountable refresh-state. */
function workTurn(w: MixedWorkspace, worker: Program, turn: string): Record<string, unknown> {
  const guard = ok(
    run(worker, w, ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'a', '--turn-instance-id', turn]),
    `${worker} should-run ${turn}`,
  );
  assert.equal(guard['should_run'], true, JSON.stringify(guard));
  assert.equal((guard['selected_todo'] as Record<string, unknown> | null)?.['todo_id'], TODO);
  ok(
    run(worker, w, [
      'refresh-state',
      '--goal-id',
      'g',
      '--agent-id',
      'a',
      '--turn-instance-id',
      turn,
      '--todo-id',
      TODO,
      '--delivery-outcome',
      'outcome_progress',
      '--classification',
      'work_delivered',
    ]),
    `${worker} refresh-state ${turn}`,
  );
  const row = indexRows(w).findLast((r) => r['turn_instance_id'] === turn && r['classification'] === 'work_delivered');
  assert.ok(row, `${worker}'s writeback row of ${turn}`);
  return row;
}

function spend(program: Program, w: MixedWorkspace, turn: string): RunResult {
  return run(program, w, [
    'quota',
    'spend-slot',
    '--goal-id',
    'g',
    '--agent-id',
    'a',
    '--turn-instance-id',
    turn,
    '--todo-id',
    TODO,
    '--execute',
  ]);
}

function bothSpent(w: MixedWorkspace): { ours: number; original: number } {
  const args = ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'a'];
  return { ours: quotaOf(run('ours', w, args)).spent_slots, original: quotaOf(run('original', w, args)).spent_slots };
}

describe('mixed team: one program works a turn, the other spends it', () => {
  it("the original spends our turn of a write-scoped todo, and we spend the original's; both count the same slots", () => {
    const w = mixedWorkspace('settlement');
    const state = GOAL_STATE.replace(
      `todo_id=${TODO} status=open task_class=advancement_task`,
      `todo_id=${TODO} status=open task_class=advancement_task required_write_scopes=src/**`,
    );
    writeGoal(w, 'g', { compute: 1, allowed_slots: 5, window_hours: 24 }, ['a'], state);
    gitIn(w, ['init', '-q']);
    gitIn(w, ['remote', 'add', 'origin', ORIGIN]);
    gitIn(w, ['commit', '-q', '--allow-empty', '-m', 'fixture']);
    const snapshot = {
      schema_version: 'delivery_workspace_v0',
      task_repository: 'git:github.com/example/mixed-settlement',
      repository_source: 'current_git_origin',
      workspace_kind: 'canonical_checkout',
      peer_independent_worktree_required: false,
    };

    // Our turn: our receipt names the todo's write contract as the original's does, our writeback the checkout.
    const ourRow = workTurn(w, 'ours', 'turn-ours');
    assert.deepEqual(
      [lastReceipt(w, 'turn-ours')['delivery_workspace_requirement'], ourRow['delivery_workspace']],
      ['required', snapshot],
    );
    // The original spends it: the snapshot is valid and matches the checkout it runs in.
    const theirSpend = spend('original', w, 'turn-ours');
    assert.equal(theirSpend.code, 0, `original spend-slot of our turn: ${theirSpend.stdout}\n${theirSpend.stderr}`);
    assert.deepEqual(
      [theirSpend.json['ok'], theirSpend.json['appended'], theirSpend.json['delivery_workspace_validated']],
      [true, true, true],
      theirSpend.stdout,
    );
    // Our turn settles after it: a replay (the slot is spent once), which releases the hold our guard wrote.
    const ourSettle = ok(spend('ours', w, 'turn-ours'), 'ours spend-slot replay');
    assert.deepEqual([ourSettle['appended'], ourSettle['idempotent_replay']], [false, true], JSON.stringify(ourSettle));
    assert.deepEqual(bothSpent(w), { ours: 1, original: 1 });

    // The reverse: the original's turn, our spend. Its writeback row carries the same snapshot ours wrote.
    const theirRow = workTurn(w, 'original', 'turn-original');
    assert.deepEqual(
      [lastReceipt(w, 'turn-original')['delivery_workspace_requirement'], theirRow['delivery_workspace']],
      ['required', snapshot],
    );
    const ourSpend = ok(spend('ours', w, 'turn-original'), "ours spend-slot of the original's turn");
    assert.equal(ourSpend['appended'], true, JSON.stringify(ourSpend));
    // The original sees that slot spent: a spend of its own for the turn is a replay, not a second slot.
    const theirReplay = spend('original', w, 'turn-original');
    assert.notEqual(theirReplay.json['appended'], true, theirReplay.stdout);
    assert.deepEqual(bothSpent(w), { ours: 2, original: 2 });

    // What the original requires: the same turn written back from a folder that is no git checkout (our
    // refresh-state, like the original's, snapshots the folder it runs in) has no snapshot, and the original refuses
    // to spend it; we spend it (our spend asks for the writeback, not the snapshot), and both count it.
    const elsewhere = { ...w, ws: w.home };
    ok(
      run('ours', w, ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'a', '--turn-instance-id', 'turn-bare']),
      'ours should-run bare',
    );
    ok(
      run('ours', elsewhere, [
        'refresh-state',
        '--goal-id',
        'g',
        '--agent-id',
        'a',
        '--turn-instance-id',
        'turn-bare',
        '--todo-id',
        TODO,
        '--delivery-outcome',
        'outcome_progress',
        '--classification',
        'work_delivered',
      ]),
      'ours refresh-state outside the checkout',
    );
    const bare = indexRows(w).findLast((r) => r['turn_instance_id'] === 'turn-bare');
    assert.equal(bare?.['delivery_workspace'], undefined);
    const refused = spend('original', w, 'turn-bare');
    assert.deepEqual([refused.json['ok'], refused.json['appended']], [false, false], refused.stdout);
    assert.equal(
      refused.json['reason'],
      'quota spend requires a valid delivery workspace snapshot for settlement causality requirement required',
    );
    assert.equal(ok(spend('ours', w, 'turn-bare'), 'ours spend-slot of the bare turn')['appended'], true);
    assert.deepEqual(bothSpent(w), { ours: 3, original: 3 });
    stopLeftovers(w);
    fs.rmSync(w.dir, { recursive: true, force: true });
  });
});
