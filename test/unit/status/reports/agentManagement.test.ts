import assert from 'node:assert/strict';
import { agentManagementProjection } from '../../../../src/core/status/reports/agentManagement';

/**
 * The status payload's `agent_management_projection` (the original's management_projection.py; the mixed tier
 * compares it with the original's, times aside). Each rule pinned on rows of ours.
 */

const NOW = new Date('2026-03-10T12:00:00Z');

function compact(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    done: false,
    schema_version: 'todo_item_v0',
    role: 'agent',
    status: 'open',
    task_class: 'advancement_task',
    ...fields,
  };
}

function project(
  goals: Parameters<typeof agentManagementProjection>[0]['goals'],
  todoIndexItems: Record<string, unknown>[] = [],
) {
  return agentManagementProjection({ goals, todoIndexItems, goalFilter: null, now: NOW });
}

type Agent = Record<string, unknown> & { agent_id: string };

describe('status: agent_management_projection', () => {
  it('no agents: no projection', () => {
    assert.equal(project([{ goalId: 'g', registeredAgents: [], agentTodos: null, budget: [] }]), null);
  });

  it('registered agents by id; an agent without todos is unknown; the first goal only', () => {
    const out = project([
      { goalId: 'z-goal', registeredAgents: ['codex-b', 'codex-a'], agentTodos: null, budget: [] },
      { goalId: 'a-goal', registeredAgents: ['codex-a'], agentTodos: null, budget: [] },
    ])!;
    const agents = out['agents'] as Agent[];
    assert.deepEqual(
      agents.map((a) => [a.agent_id, a['agent_model'], a['state'], a['goal_ids'], a['next_action']]),
      [
        ['codex-a', 'peer_v1', 'unknown', ['a-goal'], 'Inspect status projection before taking work.'],
        ['codex-b', 'peer_v1', 'unknown', ['z-goal'], 'Inspect status projection before taking work.'],
      ],
    );
    assert.deepEqual(out['source_summary'], {
      registered_agent_count: 2,
      projected_agent_count: 2,
      todo_source:
        'status.attention_queue + authoritative status.todo_index rows; event-only rollout receipts are evidence, not runtime work',
    });
    assert.equal(out['generated_at'], '2026-03-10T12:00:00Z');
  });

  it('the current todo: runnable advancement work before blocked and monitor work, then priority; stale claim hints', () => {
    const claimed = (id: string, fields: Record<string, unknown>) =>
      compact({ todo_id: id, index: Number(id.slice(-1)), text: id, claimed_by: 'codex-a', ...fields });
    const out = project([
      {
        goalId: 'g',
        registeredAgents: ['codex-a'],
        agentTodos: {
          claimed_open_items: [
            claimed('todo_mon1', { task_class: 'continuous_monitor', priority: 'P0' }),
            claimed('todo_blk2', { status: 'blocked', priority: 'P0' }),
            claimed('todo_run3', { priority: 'P2', updated_at: '2026-03-01T00:00:00Z' }),
          ],
        },
        budget: [],
      },
    ])!;
    const agent = (out['agents'] as Agent[])[0]!;
    assert.deepEqual(agent['current_todo'], {
      schema_version: 'todo_row_v0',
      todo_id: 'todo_run3',
      goal_id: 'g',
      role: 'agent',
      status: 'open',
      priority: 'P2',
      title: 'todo_run3',
      task_class: 'advancement_task',
      claimed_by: 'codex-a',
      updated_at: '2026-03-01T00:00:00Z',
    });
    assert.equal(agent['state'], 'running');
    assert.equal((agent['blocked_on'] as { todo_id: string }).todo_id, 'todo_blk2');
    assert.equal(agent['last_activity_at'], '2026-03-01T00:00:00Z');
    assert.deepEqual(
      (agent['stale_claim_hint'] as { state: string; threshold_hours: number }).state,
      'suspected_stale',
    );
    const fresh = project([
      {
        goalId: 'g',
        registeredAgents: [],
        agentTodos: { claimed_open_items: [claimed('todo_run3', { updated_at: '2026-03-10T00:00:00Z' })] },
        budget: [],
      },
    ])!;
    const row = (fresh['agents'] as Agent[])[0]!;
    assert.deepEqual([row['agent_model'], row['stale_claim_hint']], ['unregistered', undefined]);
  });

  it('done todos only: waiting; a todo index row of the event log is evidence, not work', () => {
    const out = project(
      [
        {
          goalId: 'g',
          registeredAgents: ['codex-a'],
          agentTodos: {},
          budget: [
            compact({ todo_id: 'todo_old1', index: 1, text: 'Old', status: 'done', done: true, claimed_by: 'codex-a' }),
          ],
        },
      ],
      [
        {
          todo_id: 'todo_evt1',
          goal_id: 'g',
          role: 'agent',
          status: 'open',
          done: false,
          source: 'rollout_event_log',
          agent_id: 'codex-a',
        },
        {
          todo_id: 'todo_idx1',
          goal_id: 'g',
          role: 'agent',
          status: 'open',
          done: false,
          index: 2,
          text: 'Idx',
          source: 'attention_queue',
          agent_id: 'codex-z',
        },
      ],
    )!;
    const agents = out['agents'] as Agent[];
    assert.deepEqual(
      agents.map((a) => [a.agent_id, a['state'], (a['current_todo'] as { todo_id?: string } | undefined)?.todo_id]),
      [
        ['codex-a', 'waiting', undefined],
        ['codex-z', 'running', 'todo_idx1'],
      ],
    );
  });
});
