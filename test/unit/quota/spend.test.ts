import assert from 'node:assert/strict';
import { type ShouldRunDecision } from '../../../src/core/scheduling/decisionContract';
import { shouldRunFor } from '../../support/goalRef';
import { effectIdsMatch, settlementIdentity } from '../../../src/core/quota/identity';
import { evaluateSpend, spendSlot, voidSlot, type SpendEvaluationInput } from '../../../src/core/quota/spend';
import { reserveTurn } from '../../../src/core/quota/admission';
import type { RunIndexEntry } from '../../../src/core/runtime/runIndex';
import {
  addRun,
  clockAt,
  hoursBefore,
  identityFor,
  loadGoal,
  makeWorkspace,
  readIndexRows,
  type Workspace,
} from './helpers';

type Decision = SpendEvaluationInput['decision'];
const decisionOf = (fields: Partial<Decision>): Decision => ({
  ok: true,
  should_run: false,
  state: 'eligible',
  effective_action: 'normal_run',
  safe_bypass_allowed: false,
  safe_bypass_kind: null,
  selected_todo: null,
  ...fields,
});
let minute = 0;
/** Rows in append order (oldest first); evaluateSpend wants newest first. */
function rows(...appendOrder: Partial<RunIndexEntry & Record<string, unknown>>[]): RunIndexEntry[] {
  return appendOrder
    .map(
      (row) =>
        ({
          generated_at: `2026-01-15T09:${String(minute++ % 60).padStart(2, '0')}:00Z`,
          json_exists: true,
          markdown_exists: true,
          ...row,
        }) as RunIndexEntry,
    )
    .reverse();
}
const evaluate = (decision: Decision, indexRows: RunIndexEntry[], agentId: string | null = null) =>
  evaluateSpend({
    decision,
    rows: indexRows,
    agentId,
    todoId: null,
    identity: null,
    source: 'controller',
    hasLiveReservation: false,
  });

const materialPoll = (agent: string) => ({
  classification: 'quota_monitor_poll',
  agent_id: agent,
  delivery_outcome: 'outcome_progress',
});
const spendBy = (agent: string) => ({ classification: 'quota_slot_spent', agent_id: agent });

describe('quota spend-slot: when a spend is allowed (§5.6)', () => {
  it('case 12: only an unchanged monitor poll and a quiet skip → no spend', () => {
    const result = evaluate(
      decisionOf({ effective_action: 'monitor_quiet_skip' }),
      rows({ classification: 'quota_monitor_poll', agent_id: 'agent-a' }),
    );
    assert.equal(result.ok, false);
  });

  it('case 13: a safe-bypass decision with an empty index needs an unspent accountable delivery', () => {
    for (const kind of ['operator_gate', 'recovery', 'outcome_floor_recovery']) {
      const result = evaluate(
        decisionOf({ state: 'operator_gate', safe_bypass_allowed: true, safe_bypass_kind: kind }),
        [],
      );
      assert.equal(result.ok, false);
      assert.match(result.reason, /requires a latest unspent accountable delivery writeback/);
    }
  });

  it('case 14: a delivery behind a neutral refresh is spendable by safe bypass, until a spend row follows it', () => {
    const decision = decisionOf({
      state: 'operator_gate',
      safe_bypass_allowed: true,
      safe_bypass_kind: 'operator_gate',
    });
    const history = [
      { classification: 'validated_progress', delivery_outcome: 'outcome_progress' },
      { classification: 'state_refreshed' },
    ];
    const ok = evaluate(decision, rows(...history));
    assert.deepEqual([ok.ok, ok.category], [true, 'safe_bypass_spend']);
    assert.equal(evaluate(decision, rows(...history, { classification: 'quota_slot_spent' })).ok, false);
  });

  it('case 15: polls by A and B, spend by B — A may spend, B not; unscoped finds A too (fixes the original, which stopped at any spend)', () => {
    const history = rows(materialPoll('agent-a'), materialPoll('agent-b'), spendBy('agent-b'));
    const decision = decisionOf({ state: 'waiting', effective_action: 'quiet_wait' });
    const scopedA = evaluate(decision, history, 'agent-a');
    assert.deepEqual([scopedA.ok, scopedA.delivery_run?.agent_id], [true, 'agent-a']);
    assert.equal(evaluate(decision, history, 'agent-b').ok, false);
    const unscoped = evaluate(decision, history, null);
    assert.deepEqual([unscoped.ok, unscoped.delivery_run?.agent_id], [true, 'agent-a']);
  });

  it('case 16: a poll already followed by its spend is not spent twice', () => {
    assert.equal(
      evaluate(
        decisionOf({ state: 'waiting', effective_action: 'quiet_wait' }),
        rows(materialPoll('agent-a'), spendBy('agent-a')),
        'agent-a',
      ).ok,
      false,
    );
  });

  it('case 17: a later surface-only refresh ends the search; a plain refresh does not', () => {
    const decision = decisionOf({ state: 'waiting', effective_action: 'quiet_wait' });
    assert.equal(
      evaluate(
        decision,
        rows(materialPoll('agent-a'), { classification: 'state_refreshed', delivery_outcome: 'surface_only' }),
        'agent-a',
      ).ok,
      false,
    );
    assert.equal(
      evaluate(decision, rows(materialPoll('agent-a'), { classification: 'state_refreshed' }), 'agent-a').ok,
      true,
    );
  });

  it('case 23: a settlement binds a todo or a replan obligation, never both; effect id matching', () => {
    assert.throws(
      () =>
        settlementIdentity({
          goalId: 'g',
          agentId: 'a',
          turnInstanceId: 't',
          todoId: 'todo_x01',
          replanObligationId: 'replan-0123456789abcdef',
        }),
      { code: 'quota_settlement_binding_conflict' },
    );
    assert.equal(
      settlementIdentity({
        goalId: 'g',
        agentId: 'a',
        turnInstanceId: 't',
        replanObligationId: 'replan-0123456789abcdef',
      }).effect_id,
      'g:a:autonomous_replan:replan-0123456789abcdef:t',
    );
    assert.equal(settlementIdentity({ goalId: 'g', agentId: 'a', turnInstanceId: 't' }).effect_id, 'g:a::t');
    assert.equal(effectIdsMatch(null, 'X'), true);
    assert.equal(effectIdsMatch('X', 'X'), true);
    assert.equal(effectIdsMatch('other', 'X'), false);
    for (const bad of ['', 'contains space', 'private/path', 'x'.repeat(129)]) {
      assert.throws(() => settlementIdentity({ goalId: 'g', agentId: 'a', turnInstanceId: bad }), {
        code: 'quota_turn_instance_id_invalid',
      });
    }
  });
});

async function decideFor(ws: Workspace, agentId = 'agent-a'): Promise<ShouldRunDecision> {
  return shouldRunFor({ registryPath: ws.registryPath, goalId: ws.goalId, agentId, clock: clockAt(), homeDir: ws.dir });
}

const TWO_TODOS = [
  '---',
  'status: active',
  '---',
  '# Goal',
  '',
  '## Agent Todo',
  '- [ ] [P0] X.',
  '  <!-- loopx:todo todo_id=todo_x01 status=open -->',
  '- [ ] [P1] Y.',
  '  <!-- loopx:todo todo_id=todo_y01 status=open -->',
  '',
].join('\n');

describe('quota spend-slot: settlement through the ledger', () => {
  it('case 18: a heartbeat spend under normal_run must name the selected todo', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const goal = await loadGoal(ws);
    const decision = await decideFor(ws);
    const base = {
      decision,
      agentId: 'agent-a',
      turnInstanceId: 't1',
      slots: 1,
      source: 'heartbeat' as const,
      execute: true,
    };
    const missing = await spendSlot(goal, clockAt(), { ...base, todoId: null });
    assert.equal(missing.ok, false);
    assert.match(missing.reason, /requires --todo-id todo_x01/);
    const mismatch = await spendSlot(goal, clockAt(), { ...base, todoId: 'todo_y01' });
    assert.equal(mismatch.ok, false);
    assert.match(mismatch.reason, /binding mismatch/);
    const ok = await spendSlot(goal, clockAt(), { ...base, todoId: 'todo_x01' });
    assert.deepEqual([ok.ok, ok.appended, ok.category], [true, true, 'eligible_spend']);
    assert.equal(ok.quota_event?.['todo_id'], 'todo_x01');
    assert.equal(readIndexRows(ws).length, 1);
  });

  it('preview by default: spend-slot without execute writes nothing', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const preview = await spendSlot(await loadGoal(ws), clockAt(), {
      decision: await decideFor(ws),
      agentId: 'agent-a',
      todoId: 'todo_x01',
      turnInstanceId: 't1',
      slots: 1,
      source: 'heartbeat',
      execute: false,
    });
    assert.deepEqual([preview.ok, preview.dry_run, preview.appended], [true, true, false]);
    assert.equal((preview.spend_record?.['quota_event'] as { after: { spent_slots: number } }).after.spent_slots, 1);
    assert.equal(readIndexRows(ws).length, 0);
  });

  it('case 19: a turn-bound writeback for todo_a still settles after the frontier moved to todo_b', async () => {
    const ws = makeWorkspace({}, TWO_TODOS.replace('todo_x01', 'todo_b01').replace('todo_y01', 'todo_a01'));
    await addRun(ws, hoursBefore(0.2), {
      classification: 'validated_progress',
      agent_id: 'agent-a',
      todo_id: 'todo_a01',
      turn_instance_id: 't',
      delivery_outcome: 'outcome_progress',
    });
    const result = await spendSlot(await loadGoal(ws), clockAt(), {
      decision: await decideFor(ws),
      agentId: 'agent-a',
      todoId: 'todo_a01',
      turnInstanceId: 't',
      slots: 1,
      source: 'heartbeat',
      execute: true,
    });
    assert.deepEqual([result.ok, result.category], [true, 'delivery_completion_spend']);
    assert.equal(result.settlement_identity?.effect_id, 'g:agent-a:todo_a01:t');
  });

  it('case 20: spending again without a turn id recovers it and replays without appending', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const goal = await loadGoal(ws);
    const first = await spendSlot(goal, clockAt(), {
      decision: await decideFor(ws),
      agentId: 'agent-a',
      todoId: 'todo_x01',
      turnInstanceId: 't',
      slots: 1,
      source: 'heartbeat',
      execute: true,
    });
    assert.equal(first.appended, true);
    const replay = await spendSlot(goal, clockAt(), {
      decision: await decideFor(ws),
      agentId: 'agent-a',
      todoId: 'todo_x01',
      turnInstanceId: null,
      slots: 1,
      source: 'heartbeat',
      execute: true,
    });
    assert.deepEqual(
      [
        replay.ok,
        replay.appended,
        replay.idempotent_replay,
        replay.turn_instance_id,
        replay.recovered_turn_instance_id,
      ],
      [true, false, true, 't', true],
    );
    assert.equal(readIndexRows(ws).length, 1);
  });

  it('case 21: a persisted row of the turn whose effect id drifted is an identity mismatch', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    await addRun(ws, hoursBefore(0.2), {
      classification: 'validated_progress',
      agent_id: 'agent-a',
      todo_id: 'todo_x01',
      turn_instance_id: 't',
      delivery_outcome: 'outcome_progress',
      settlement_identity: { ...identityFor(ws, 'agent-a', 't', 'todo_x01'), effect_id: 'drifted' },
    });
    const result = await spendSlot(await loadGoal(ws), clockAt(), {
      decision: await decideFor(ws),
      agentId: 'agent-a',
      todoId: 'todo_x01',
      turnInstanceId: 't',
      slots: 1,
      source: 'heartbeat',
      execute: true,
    });
    assert.equal(result.ok, false);
    assert.match(result.reason, /persisted settlement identity mismatch/);
    assert.equal(result.failure_kind, 'identity_mismatch');
  });

  it('a throttled goal still settles a turn that holds a reservation (no under-recording)', async () => {
    const ws = makeWorkspace({ quota: { allowed_slots: 1 } }, TWO_TODOS);
    const goal = await loadGoal(ws);
    await reserveTurn(goal, clockAt(), { identity: identityFor(ws, 'agent-a', 't', 'todo_x01') });
    const decision = await decideFor(ws);
    assert.equal(decision.state, 'throttled');
    const result = await spendSlot(goal, clockAt(), {
      decision,
      agentId: 'agent-a',
      todoId: 'todo_x01',
      turnInstanceId: 't',
      slots: 1,
      source: 'heartbeat',
      execute: true,
    });
    assert.deepEqual([result.ok, result.category, result.admission], [true, 'reserved_turn', 'reservation']);
  });

  it('void-slot cancels a spend with a compensating record; the spend stays in the index', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const goal = await loadGoal(ws);
    await spendSlot(goal, clockAt(), {
      decision: await decideFor(ws),
      agentId: 'agent-a',
      todoId: 'todo_x01',
      turnInstanceId: 't',
      slots: 1,
      source: 'heartbeat',
      execute: true,
    });
    const preview = await voidSlot(goal, clockAt(), {
      agentId: 'agent-a',
      todoId: 'todo_x01',
      turnInstanceId: 't',
      generatedAt: null,
      reason: 'mistake',
      execute: false,
    });
    assert.deepEqual([preview.ok, preview.appended], [true, false]);
    const voided = await voidSlot(goal, clockAt(), {
      agentId: 'agent-a',
      todoId: 'todo_x01',
      turnInstanceId: 't',
      generatedAt: null,
      reason: 'mistake',
      execute: true,
    });
    assert.deepEqual([voided.ok, voided.appended, voided.target, voided.quota.spent_slots], [true, true, 'spend', 0]);
    assert.deepEqual(
      readIndexRows(ws).map((r) => r['classification']),
      ['quota_slot_spent', 'quota_slot_voided'],
    );
    const again = await voidSlot(goal, clockAt(), {
      agentId: 'agent-a',
      todoId: 'todo_x01',
      turnInstanceId: 't',
      generatedAt: null,
      reason: 'again',
      execute: true,
    });
    assert.equal(again.ok, false);
  });
});
