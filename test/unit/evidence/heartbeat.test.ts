import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeWorkspace, readIndexRows, type Workspace } from '../quota/helpers';
import { rolloutEventId, rolloutEventLogPath } from '../../../src/core/evidence/rolloutLog';
import { TWO_TODOS, cli, events, spend } from './helpers';

/**
 * Heartbeat receipts (spec §3.1 step 6, §5.4, cases 22 and 24): should-run → refresh-state →
 * spend-slot with one turn id, through the CLI.
 */

const guard = (ws: Workspace, turn: string, extra: string[] = []) =>
  cli(ws, ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'agent-a', '--turn-instance-id', turn, ...extra]);
const writeback = (ws: Workspace, turn: string, extra: string[] = []) =>
  cli(ws, [
    'refresh-state',
    '--goal-id',
    'g',
    '--agent-id',
    'agent-a',
    '--classification',
    'validated_progress',
    '--delivery-outcome',
    'outcome_progress',
    '--turn-instance-id',
    turn,
    ...extra,
  ]);

describe('heartbeat receipts (quota should-run --turn-instance-id)', () => {
  it('appends exactly one receipt binding the todo and the effect id; a retry replays it', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const first = await guard(ws, 't1');
    assert.equal(first.code, 0, first.stderr);
    const receipt = first.json()['heartbeat_receipt'] as Record<string, unknown>;
    assert.deepEqual(
      [receipt['todo_id'], receipt['settlement_effect_id'], receipt['replayed']],
      ['todo_parser', 'g:agent-a:todo_parser:t1', false],
    );
    const again = await guard(ws, 't1');
    assert.equal((again.json()['heartbeat_receipt'] as Record<string, unknown>)['replayed'], true);
    const receipts = events(ws).filter((e) => e['event_kind'] === 'quota_should_run');
    assert.equal(receipts.length, 1);
    assert.equal(
      (receipts[0]?.['details'] as Record<string, unknown>)['settlement_effect_id'],
      'g:agent-a:todo_parser:t1',
    );
  });

  it('keeps the bound todo when the frontier moved, and refuses a conflicting --todo-id', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    await guard(ws, 't1');
    // Another writer takes todo_parser away from the frontier (claims it for agent-b).
    fs.writeFileSync(
      ws.statePath,
      TWO_TODOS.replace('todo_id=todo_parser status=open', 'todo_id=todo_parser status=open claimed_by=agent-b'),
    );
    const fresh = await guard(ws, 't2');
    assert.equal((fresh.json()['selected_todo'] as { todo_id: string }).todo_id, 'todo_printer');
    const replay = await guard(ws, 't1');
    const json = replay.json();
    assert.equal((json['selected_todo'] as { todo_id: string }).todo_id, 'todo_parser');
    assert.equal((json['settlement_identity'] as { effect_id: string }).effect_id, 'g:agent-a:todo_parser:t1');
    const conflict = await guard(ws, 't1', ['--todo-id', 'todo_printer']);
    assert.equal(conflict.code, 1);
    assert.equal(conflict.error().code, 'heartbeat_receipt_binding_mismatch');
    const refusedWriteback = await writeback(ws, 't1', ['--todo-id', 'todo_printer']);
    assert.equal(refusedWriteback.error().code, 'heartbeat_receipt_binding_mismatch');
    assert.equal(readIndexRows(ws).length, 0, 'a refused writeback writes no row');
    const refusedSpend = await spend(ws, 't1', ['--todo-id', 'todo_printer']);
    assert.equal(refusedSpend.error().code, 'heartbeat_receipt_binding_mismatch');
  });

  it('case 22: a receipt whose effect id does not match its binding is refused (effect identity without a Todo)', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const file = rolloutEventLogPath(ws.runtimeRoot, 'g');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(
      file,
      `${JSON.stringify({
        schema_version: 'loopx_rollout_event_v0',
        event_kind: 'quota_should_run',
        goal_id: 'g',
        agent_id: 'agent-a',
        run_id: 't9',
        details: { settlement_effect_id: 'g:agent-a:todo_parser:t9' },
      })}\n`,
    );
    const refused = await writeback(ws, 't9', ['--todo-id', 'todo_parser']);
    assert.equal(refused.error().code, 'heartbeat_receipt_binding_mismatch');
    assert.match(refused.error().message, /effect identity without a Todo/);
  });

  it('case 24: guard → writeback → spend, each replayed, ends with one row of each and one receipt chain', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    for (let i = 0; i < 3; i++) {
      const g = await guard(ws, 'T');
      assert.equal(g.code, 0, g.stderr);
      const w = await writeback(ws, 'T');
      assert.equal(w.code, 0, w.stderr);
      assert.equal(w.json()['idempotent_replay'], i > 0);
      assert.equal(w.json()['todo_id'], 'todo_parser', 'the writeback takes the todo from the receipt');
      const s = await spend(ws, 'T');
      assert.equal(s.code, 0, s.stderr);
      assert.equal(s.json()['appended'], i === 0);
    }
    const rows = readIndexRows(ws);
    assert.deepEqual(
      rows.map((r) => r['classification']),
      ['validated_progress', 'quota_slot_spent'],
    );
    assert.deepEqual(
      events(ws).map((e) => e['event_kind']),
      ['quota_should_run', 'refresh_state', 'quota_spend'],
    );
    const log = await cli(ws, ['evidence-log', '--goal-id', 'g', '--turn-instance-id', 'T']);
    assert.equal(log.code, 0, log.stderr);
    assert.deepEqual(log.json()['counts_by_kind'], { quota_should_run: 1, quota_spend: 1, refresh_state: 1 });
  });

  it('a turn id without --agent-id writes no receipt and is refused', async () => {
    const ws = makeWorkspace({ coordination: {} }, TWO_TODOS);
    const run = await cli(ws, ['quota', 'should-run', '--goal-id', 'g', '--turn-instance-id', 't1']);
    assert.equal(run.code, 1);
    assert.equal(run.error().code, 'quota_settlement_agent_required');
    assert.equal(events(ws).length, 0);
  });
});

describe('quota plan', () => {
  it('groups goals in the original order and names the first eligible goal', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const registry = JSON.parse(fs.readFileSync(ws.registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
    const base = registry.goals[0] ?? {};
    registry.goals.push({ ...base, id: 'paused-goal', quota: { compute: 0 } });
    registry.goals.push({ ...base, id: 'big', quota: { compute: 2 } });
    fs.writeFileSync(ws.registryPath, JSON.stringify(registry));
    const run = await cli(ws, ['quota', 'plan']);
    assert.equal(run.code, 0, run.stderr);
    const json = run.json() as {
      groups: { state: string; goals: { goal_id: string }[] }[];
      next_automatic_turn: { goal_id: string };
    };
    assert.deepEqual(
      json.groups.map((g) => g.state),
      ['blocked_health', 'operator_gate', 'focus_wait', 'eligible', 'waiting', 'throttled', 'paused'],
    );
    const byState = Object.fromEntries(json.groups.map((g) => [g.state, g.goals.map((x) => x.goal_id)]));
    assert.deepEqual(byState['paused'], ['paused-goal']);
    assert.equal(json.next_automatic_turn.goal_id, byState['eligible']?.[0]);
    assert.deepEqual(byState['eligible'], ['big', 'g'], 'compute high first');
  });
});

describe('mixed use: a log written by the original LoopX', () => {
  const fixture = fs.readFileSync(path.join(__dirname, 'fixtures', 'original-log.jsonl'), 'utf8');

  it('reads its rows (unknown fields kept, same event_id), reports a torn and a foreign line, rewrites nothing', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const file = rolloutEventLogPath(ws.runtimeRoot, 'g');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, fixture);
    const log = await cli(ws, ['evidence-log', '--goal-id', 'g']);
    assert.equal(log.code, 0, log.stderr);
    const json = log.json() as { events: Record<string, unknown>[]; skipped_lines: { line: number }[] };
    assert.equal(json.events.length, 1);
    const event = json.events[0] ?? {};
    assert.deepEqual(event['lane'], { lane_id: 'lane-1' });
    assert.equal(rolloutEventId(event), '887d4ec7f1a80617', 'our event id of its row equals the one it wrote');
    assert.deepEqual(
      json.skipped_lines.map((s) => s.line),
      [2, 3],
    );
    // Its receipt binds the turn for our CLI too: the writeback of the turn takes todo_parser from it.
    const w = await writeback(ws, 'py-turn');
    assert.equal(w.code, 0, w.stderr);
    assert.equal(w.json()['todo_id'], 'todo_parser');
    assert.ok(fs.readFileSync(file, 'utf8').startsWith(fixture), 'the original rows are left as written');
  });

  it('our rows carry the fields its readers use, and our event_id is its sha256 rule', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    await guard(ws, 't1');
    const [row] = events(ws);
    for (const key of ['schema_version', 'goal_id', 'event_kind', 'recorded_at', 'agent_id', 'run_id', 'event_id'])
      assert.ok(row !== undefined && key in row, key);
    assert.equal(row?.['event_id'], rolloutEventId(row ?? {}));
  });
});
