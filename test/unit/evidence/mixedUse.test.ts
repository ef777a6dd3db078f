import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { rolloutEventId, rolloutEventLogPath } from '../../../src/core/evidence/rolloutLog';
import { makeWorkspace, type Workspace } from '../quota/helpers';
import { cli, events, TWO_TODOS } from './helpers';

/**
 * Mixed use with the original LoopX, second pass. The fixture is a heartbeat chain as the original's
 * writer lays it out (`json.dumps(sort_keys=True, ensure_ascii=False)`, `event_id` = sha256 of the row
 * without `event_id`, recorded_at included; a receipt whose `settlement_effect_id` is left for the reader
 * to infer; lane, state_transition, causality, handoff, labels, private_source blocks). Our evidence-log
 * reads it, filters it by turn, and our should-run replays its receipt. The other way: every row our CLI
 * writes for a heartbeat carries what the original's readers use (load_rollout_events: schema_version;
 * find_heartbeat_receipt: event_kind, goal_id, agent_id, run_id and details.todo_id xor
 * details.replan_obligation_id plus details.settlement_effect_id; the summary view's keys; its event_id rule).
 */

const FIXTURE = fs.readFileSync(path.join(__dirname, 'fixtures', 'original-heartbeat-chain.jsonl'), 'utf8');

function withOriginalLog(): Workspace {
  const ws = makeWorkspace({}, TWO_TODOS);
  const file = rolloutEventLogPath(ws.runtimeRoot, 'g');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, FIXTURE);
  return ws;
}

describe('mixed use: the original heartbeat chain read by ours, ours read by the original rules', () => {
  it('evidence-log reads every row of the original chain, keeps its blocks, and filters it by turn', async () => {
    const ws = withOriginalLog();
    const all = await cli(ws, ['evidence-log', '--goal-id', 'g']);
    assert.equal(all.code, 0, all.stderr);
    const rows = all.json()['events'] as Record<string, unknown>[];
    assert.deepEqual(
      rows.map((r) => r['event_kind']),
      ['quota_should_run', 'refresh_state', 'quota_spend', 'todo_claim'],
    );
    for (const row of rows) assert.equal(row['event_id'], rolloutEventId(row), 'its event_id is our event_id rule');
    const claim = rows[3] ?? {};
    assert.deepEqual(claim['state_transition'], { from_state: 'open', to_state: 'claimed' });
    assert.deepEqual(claim['causality'], { blocks: ['todo_docs'], caused_by: 'operator' });
    assert.deepEqual(claim['handoff'], { to_agent_id: 'agent-b' });
    assert.equal(rows[1]?.['summary'], 'parser lexer done — café');

    const turn = await cli(ws, ['evidence-log', '--goal-id', 'g', '--turn-instance-id', 'py-hb']);
    assert.deepEqual(
      (turn.json()['events'] as Record<string, unknown>[]).map((r) => r['event_kind']),
      ['quota_should_run', 'refresh_state', 'quota_spend'],
    );
    assert.equal(
      fs.readFileSync(rolloutEventLogPath(ws.runtimeRoot, 'g'), 'utf8'),
      FIXTURE,
      'reading rewrites nothing',
    );
  });

  it("our should-run with the original's turn id replays its receipt (effect id inferred) and appends nothing", async () => {
    const ws = withOriginalLog();
    const run = await cli(ws, [
      'quota',
      'should-run',
      '--goal-id',
      'g',
      '--agent-id',
      'agent-a',
      '--turn-instance-id',
      'py-hb',
    ]);
    assert.equal(run.code, 0, run.stderr);
    const receipt = run.json()['heartbeat_receipt'] as Record<string, unknown>;
    assert.deepEqual(
      [receipt['replayed'], receipt['todo_id'], receipt['event_id']],
      [true, 'todo_parser', '20fc7cd20a488860'],
    );
    // No effect id in its row: the settlement identity is inferred from the binding, as its reader does.
    const identity = run.json()['settlement_identity'] as Record<string, unknown>;
    assert.ok(typeof identity['effect_id'] === 'string' && identity['effect_id'] !== '', JSON.stringify(identity));
    assert.equal(identity['todo_id'], 'todo_parser');
    assert.equal(events(ws).length, 4, 'nothing appended');
  });

  it('every row of our heartbeat chain carries the fields the original readers use', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const T = 'ts-hb';
    const steps = [
      ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'agent-a', '--turn-instance-id', T],
      [
        ...['refresh-state', '--goal-id', 'g', '--agent-id', 'agent-a', '--classification', 'validated_progress'],
        ...['--delivery-outcome', 'outcome_progress', '--turn-instance-id', T],
      ],
      ['quota', 'spend-slot', '--goal-id', 'g', '--agent-id', 'agent-a', '--turn-instance-id', T, '--execute'],
    ];
    for (const step of steps) assert.equal((await cli(ws, step)).code, 0, step.join(' '));
    const text = fs.readFileSync(rolloutEventLogPath(ws.runtimeRoot, 'g'), 'utf8');
    const rows = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(
      rows.map((r) => r['event_kind']),
      ['quota_should_run', 'refresh_state', 'quota_spend'],
    );
    for (const row of rows) {
      // load_rollout_events keeps only its schema; the summary view shows these keys.
      assert.equal(row['schema_version'], 'loopx_rollout_event_v0');
      for (const key of ['event_id', 'recorded_at', 'event_kind', 'goal_id', 'agent_id', 'run_id'])
        assert.ok(typeof row[key] === 'string' && row[key] !== '', `${String(row['event_kind'])}.${key}`);
      assert.equal(row['event_id'], rolloutEventId(row));
    }
    // find_heartbeat_receipt: one quota_should_run for (goal, agent, run_id) with exactly one settlement binding.
    const receipts = rows.filter(
      (r) =>
        r['event_kind'] === 'quota_should_run' &&
        r['goal_id'] === 'g' &&
        r['agent_id'] === 'agent-a' &&
        r['run_id'] === T,
    );
    assert.equal(receipts.length, 1);
    const details = (receipts[0]?.['details'] ?? {}) as Record<string, unknown>;
    assert.equal(details['todo_id'], 'todo_parser');
    assert.equal(details['replan_obligation_id'], undefined, 'a todo xor a replan obligation');
    assert.ok(typeof details['settlement_effect_id'] === 'string' && details['settlement_effect_id'] !== '');
  });
});
