import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { makeWorkspace, readIndexRows, type Workspace } from '../quota/helpers';
import { parseRolloutEvents, rolloutEventLogPath } from '../../../src/core/evidence/rolloutLog';
import { replanObligationFromRuns } from '../../../src/core/scheduling/replanObligation';
import type { RunIndexRow } from '../../../src/core/runtime/runIndex';
import { ONE_TODO, cli, spend } from './helpers';

/**
 * Autonomous replan obligations (spec §3.1 step 4, case 10): two stalled turns on a lane owe a
 * replan; should-run surfaces it, a receipt binds it, a replan result discharges it.
 */

const stall = (at: string, extra: Partial<RunIndexRow> & Record<string, unknown> = {}): RunIndexRow => ({
  generated_at: at,
  classification: 'monitor_no_progress',
  recommended_action: 'poll the upstream build again',
  health_check: 'state_file 1/1',
  agent_id: 'agent-a',
  delivery_outcome: 'surface_only',
  ...extra,
});

describe('replan obligation rule (replanObligationFromRuns)', () => {
  const obligation = (rows: RunIndexRow[], agentId: string | null = 'agent-a') =>
    replanObligationFromRuns({ goalId: 'g', agentId, rowsNewestFirst: rows });

  it('two stalled runs owe a replan with a stable replan-<16 hex> id; one does not', () => {
    const rows = [stall('2026-01-02T00:00:00Z'), stall('2026-01-01T00:00:00Z')];
    const first = obligation(rows);
    assert.match(first?.obligation_id ?? '', /^replan-[0-9a-f]{16}$/);
    assert.equal(first?.triggers[0]?.kind, 'run_history_no_progress_repeat');
    assert.equal(obligation(rows)?.obligation_id, first?.obligation_id, 'same history, same id');
    assert.equal(obligation(rows.slice(0, 1)), null);
    const later = obligation([stall('2026-01-03T00:00:00Z'), ...rows]);
    assert.notEqual(later?.obligation_id, first?.obligation_id, 'a newer streak is a new obligation');
  });

  it('material progress, a replan result or a non-stall run ends the streak', () => {
    const older = stall('2026-01-01T00:00:00Z');
    assert.equal(obligation([stall('t2', { delivery_outcome: 'outcome_progress' }), older]), null);
    assert.equal(
      obligation([stall('t3'), stall('t2', { replan_obligation_id: 'replan-0123456789abcdef' }), older]),
      null,
    );
    assert.equal(
      obligation([
        stall('t3'),
        { generated_at: 't2', classification: 'validated_progress', agent_id: 'agent-a' },
        older,
      ]),
      null,
    );
  });

  it('settlement rows are skipped; other agents do not count for this lane', () => {
    const spent = { generated_at: 't', classification: 'quota_slot_spent', agent_id: 'agent-a' };
    assert.notEqual(obligation([stall('t3'), spent, stall('t1')]), null);
    assert.equal(obligation([stall('t3'), stall('t2', { agent_id: 'agent-b' })]), null);
    assert.notEqual(obligation([stall('t3'), stall('t2', { agent_id: 'agent-b' })], null), null, 'unscoped: all lanes');
  });

  it('two stalls with different actions and classifications do not owe a replan', () => {
    const other = stall('t2', { classification: 'observe_only', recommended_action: 'watch the queue' });
    assert.equal(obligation([stall('t3'), other]), null);
  });

  it('a monitor-poll lane owes one only after six polls of the same target', () => {
    const poll = (at: string, todo = 'todo_watch') =>
      stall(at, { classification: 'quota_monitor_poll', recommended_action: 'poll', todo_id: todo });
    const five = ['t5', 't4', 't3', 't2', 't1'].map((t) => poll(t));
    assert.equal(obligation(five), null);
    assert.equal(obligation([poll('t6'), ...five])?.triggers[0]?.kind, 'dead_monitor_repeat');
    assert.equal(obligation([poll('t6', 'todo_other'), ...five]), null);
  });
});

const guard = (ws: Workspace, turn: string, extra: string[] = []) =>
  cli(ws, ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'agent-a', '--turn-instance-id', turn, ...extra]);
const writeback = (ws: Workspace, turn: string, classification: string, extra: string[] = []) =>
  cli(ws, [
    'refresh-state',
    '--goal-id',
    'g',
    '--agent-id',
    'agent-a',
    '--classification',
    classification,
    '--recommended-action',
    classification === 'monitor_no_progress' ? 'poll the upstream build again' : 'continue with the new plan',
    '--turn-instance-id',
    turn,
    ...extra,
  ]);

/** A turn that only polled: guard and writeback, no material progress (and nothing to spend). */
async function stalledTurn(ws: Workspace, turn: string): Promise<void> {
  const g = await guard(ws, turn);
  assert.equal(g.code, 0, g.stderr);
  const w = await writeback(ws, turn, 'monitor_no_progress', ['--delivery-outcome', 'surface_only']);
  assert.equal(w.code, 0, w.stderr);
}

describe('replan obligations through the CLI', () => {
  it('two stalled turns → autonomous_replan_required bound in the receipt → replan result discharges it', async () => {
    const ws = makeWorkspace({}, ONE_TODO);
    await stalledTurn(ws, 'T1');
    const afterOne = await guard(ws, 'probe-1');
    assert.equal(afterOne.json()['effective_action'], 'normal_run', 'one stalled turn owes nothing');
    await stalledTurn(ws, 'T2');

    const owed = await guard(ws, 'T3');
    assert.equal(owed.code, 0, owed.stderr);
    const json = owed.json();
    assert.equal(json['effective_action'], 'autonomous_replan_required');
    assert.equal(json['should_run'], true);
    assert.equal(json['route'], 'replan_required');
    assert.equal(json['selected_todo'], null);
    assert.equal((json['permissions'] as Record<string, unknown>)['normal_delivery_allowed'], false);
    const id = (json['replan_obligation'] as { obligation_id: string }).obligation_id;
    assert.match(id, /^replan-[0-9a-f]{16}$/);
    const receipt = json['heartbeat_receipt'] as Record<string, unknown>;
    assert.deepEqual(
      [receipt['todo_id'], receipt['replan_obligation_id'], receipt['settlement_effect_id']],
      [null, id, `g:agent-a:autonomous_replan:${id}:T3`],
    );
    const plan = (json['interaction_contract'] as { cli_channel: { settlement_plan: string[] } }).cli_channel;
    assert.match(plan.settlement_plan[0] ?? '', new RegExp(`--replan-obligation-id ${id}`));

    // Binding a todo to a replan-bound turn is refused at every step.
    assert.equal(
      (await guard(ws, 'T3', ['--todo-id', 'todo_parser'])).error().code,
      'heartbeat_receipt_binding_mismatch',
    );
    const wrongWriteback = await writeback(ws, 'T3', 'autonomous_replan', ['--todo-id', 'todo_parser']);
    assert.equal(wrongWriteback.error().code, 'heartbeat_receipt_binding_mismatch');

    // The replan result: the writeback takes the obligation from the receipt.
    for (let i = 0; i < 2; i++) {
      const w = await writeback(ws, 'T3', 'autonomous_replan');
      assert.equal(w.code, 0, w.stderr);
      const s = await spend(ws, 'T3');
      assert.equal(s.code, 0, s.stderr);
      assert.equal(s.json()['appended'], i === 0, 'the replan turn spends once');
      assert.equal(s.json()['replan_obligation_id'], id);
      assert.equal(
        (s.json()['settlement_identity'] as { effect_id: string }).effect_id,
        `g:agent-a:autonomous_replan:${id}:T3`,
      );
    }
    const rows = readIndexRows(ws);
    const replanRows = rows.filter(
      (r) => r['replan_obligation_id'] === id && r['classification'] === 'autonomous_replan',
    );
    assert.equal(replanRows.length, 1);
    assert.equal(rows.filter((r) => r['classification'] === 'quota_slot_spent').length, 1);

    const after = await guard(ws, 'T4');
    assert.equal(after.json()['effective_action'], 'normal_run', 'the replan result discharged the obligation');
    // Replaying T3's guard keeps its replan binding even though the frontier moved on.
    const replay = await guard(ws, 'T3');
    assert.equal((replay.json()['heartbeat_receipt'] as Record<string, unknown>)['replan_obligation_id'], id);
    assert.equal(replay.json()['selected_todo'], null);
    const log = fs.readFileSync(rolloutEventLogPath(ws.runtimeRoot, 'g'), 'utf8');
    const spendEvents = parseRolloutEvents(log).events.filter(
      (e) => e.event_kind === 'quota_spend' && e.run_id === 'T3',
    );
    assert.equal(spendEvents.length, 1);
    assert.equal(spendEvents[0]?.details?.['replan_obligation_id'], id);
  });

  it('another agent stalling does not oblige agent-a; a terminal frontier outranks the obligation', async () => {
    const ws = makeWorkspace({}, ONE_TODO);
    await stalledTurn(ws, 'T1');
    await stalledTurn(ws, 'T2');
    const other = await cli(ws, ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'agent-b']);
    assert.equal(other.json()['effective_action'], 'normal_run');
    fs.writeFileSync(
      ws.statePath,
      ONE_TODO.replace('status=open', 'status=done no_followup=true').replace('- [ ]', '- [x]'),
    );
    const terminal = await cli(ws, ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'agent-a']);
    assert.equal(terminal.json()['state'], 'terminal_no_followup');
  });

  it('spend-slot refuses binding both a todo and a replan obligation', async () => {
    const ws = makeWorkspace({}, ONE_TODO);
    const both = await spend(ws, 'T9', [
      '--todo-id',
      'todo_parser',
      '--replan-obligation-id',
      'replan-0123456789abcdef',
    ]);
    assert.equal(both.code, 1);
    assert.equal(both.error().code, 'quota_settlement_binding_conflict');
    const bad = await spend(ws, 'T9', ['--replan-obligation-id', 'replan-xyz']);
    assert.equal(bad.error().code, 'quota_replan_obligation_id_invalid');
  });
});
