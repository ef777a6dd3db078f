import assert from 'node:assert/strict';
import { makeWorkspace, type Workspace } from '../quota/helpers';
import { ONE_TODO, cli } from '../evidence/helpers';
import type { GoalStatusItem } from '../../../src/core/status/goalStatus';

/**
 * The status read model carries the replan obligations the goal's lanes owe (what the editor's
 * warnings panel and Goals tree show): written by the CLI's own turns, discharged by a replan result.
 */

async function stalledTurn(ws: Workspace, turn: string): Promise<void> {
  const guard = await cli(ws, [
    'quota',
    'should-run',
    '--goal-id',
    'g',
    '--agent-id',
    'agent-a',
    '--turn-instance-id',
    turn,
  ]);
  assert.equal(guard.code, 0, guard.stderr);
  const writeback = await cli(ws, [
    'refresh-state',
    '--goal-id',
    'g',
    '--agent-id',
    'agent-a',
    '--classification',
    'monitor_no_progress',
    '--recommended-action',
    'poll the upstream build again',
    '--delivery-outcome',
    'surface_only',
    '--turn-instance-id',
    turn,
  ]);
  assert.equal(writeback.code, 0, writeback.stderr);
}

async function statusItem(ws: Workspace): Promise<GoalStatusItem> {
  const status = await cli(ws, ['status', '--goal-id', 'g']);
  // The fixture registry has no `domain`: the contract check fails (exit 1), the items are still there.
  const items = (status.json()['attention_queue'] as { items: GoalStatusItem[] }).items;
  const item = items.find((i) => i.goal_id === 'g');
  assert.ok(item, 'the goal has a status item');
  return item;
}

describe('replan obligations in the status read model', () => {
  it('two stalled turns of agent-a → one obligation for its lane with the stalled turns and since when', async () => {
    const ws = makeWorkspace({}, ONE_TODO);
    await stalledTurn(ws, 'T1');
    assert.equal((await statusItem(ws)).replan_obligations, undefined, 'one stalled turn owes nothing');
    await stalledTurn(ws, 'T2');
    const item = await statusItem(ws);
    const owed = item.replan_obligations ?? [];
    assert.equal(owed.length, 1, 'agent-b did not stall: only agent-a owes a replan');
    const [replan] = owed;
    assert.equal(replan?.agent_id, 'agent-a');
    assert.deepEqual(
      replan?.stalled_runs.map((r) => [r.turn_instance_id, r.classification]),
      [
        ['T2', 'monitor_no_progress'],
        ['T1', 'monitor_no_progress'],
      ],
    );
    assert.equal(replan?.since, replan?.stalled_runs[1]?.generated_at);
    const guard = await cli(ws, ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'agent-a']);
    assert.equal(
      (guard.json()['replan_obligation'] as { obligation_id: string }).obligation_id,
      replan?.obligation.obligation_id,
      'the status names the obligation should-run surfaces',
    );
  });

  it('a replan result recorded without a turn (as the editor records it) discharges the obligation', async () => {
    const ws = makeWorkspace({}, ONE_TODO);
    await stalledTurn(ws, 'T1');
    await stalledTurn(ws, 'T2');
    const id = (await statusItem(ws)).replan_obligations?.[0]?.obligation.obligation_id ?? '';
    const recorded = await cli(ws, [
      'refresh-state',
      '--goal-id',
      'g',
      '--agent-id',
      'agent-a',
      '--classification',
      'autonomous_replan',
      '--replan-obligation-id',
      id,
    ]);
    assert.equal(recorded.code, 0, recorded.stderr);
    assert.equal((await statusItem(ws)).replan_obligations, undefined);
    const guard = await cli(ws, ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'agent-a']);
    assert.equal(guard.json()['effective_action'], 'normal_run');
  });
});
