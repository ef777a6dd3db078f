import assert from 'node:assert/strict';
import { parseStateDocument } from '../../../src/core/state/document';
import {
  statusTodoContractDiagnostics as statusContract,
  todoContractDiagnostics as shouldRunContract,
} from '../../../src/core/todo/contract';
import {
  attentionRoute,
  BLOCKING_CLASSIFICATIONS,
  CONNECTED_ADAPTER_STATUSES,
  goalAttention,
  OWNER_CLASSIFICATIONS,
  type AttentionRouteInput,
} from '../../../src/core/todo/attention';
import type { RunIndexEntry } from '../../../src/core/runtime/runIndex';

/**
 * Two readings (docs/architecture.md): `quota should-run` and `status` read the goal's attention route
 * (src/core/todo/attention.ts) and the per-todo contract rules (src/core/todo/contract.ts) each their own
 * way, side by side in one file each. The compatibility kit passes with both, yet they differ on the inputs
 * below; merging either pair changes one command's JSON on these inputs, so a merge is a compatibility
 * decision (which reading the original has), documented in docs/compatibility.md. When a merge lands, the
 * case it settles goes with it. The readings of `resume_when` are pinned in resume.test.ts.
 */

const run = (fields: Record<string, unknown>): RunIndexEntry =>
  ({ json_exists: true, markdown_exists: true, ...fields }) as unknown as RunIndexEntry;

const statusInput = (fields: Partial<AttentionRouteInput>): AttentionRouteInput => ({
  registryStatus: 'active',
  adapterStatus: null,
  adapterKind: null,
  registryWaitingOn: null,
  attentionStatus: null,
  latestStatusRun: null,
  userTodos: null,
  agentTodos: null,
  hasProjectionGap: false,
  ...fields,
});

const stateFile = (section: string, todo: string, metadata: string): string =>
  `# State\n\n## ${section}\n\n- [ ] [P1] ${todo}\n  <!-- loopx:todo ${metadata} -->\n`;

describe('known debt: should-run and status read the attention route and the todo contract differently', () => {
  it('agree where they share the vocabulary of scheduling/goalAttention: owner classifications, connected adapters', () => {
    for (const classification of [...BLOCKING_CLASSIFICATIONS, ...OWNER_CLASSIFICATIONS]) {
      const latest = run({ classification });
      assert.equal(goalAttention({ goal: {}, latestRun: latest, doc: null }).waiting_on, 'user_or_controller');
      assert.equal(attentionRoute(statusInput({ latestStatusRun: latest as never })).waiting_on, 'user_or_controller');
    }
    for (const adapter of CONNECTED_ADAPTER_STATUSES) {
      assert.deepEqual(goalAttention({ goal: { adapter_status: adapter }, latestRun: null, doc: null }), {
        status: 'connected_without_run',
        waiting_on: 'codex',
      });
      assert.equal(attentionRoute(statusInput({ adapterStatus: adapter })).status, 'connected_without_run');
    }
  });

  it('attention route: four inputs where the two readings differ', () => {
    const agentTodo = parseStateDocument(stateFile('Agent Todo', 'do it', 'todo_id=todo_agent1'));
    const cases: {
      name: string;
      shouldRun: Parameters<typeof goalAttention>[0];
      status: AttentionRouteInput;
      expected: [shouldRun: [string, string], status: [string, string]];
    }[] = [
      {
        name: 'no run yet, a planned read-only map adapter',
        shouldRun: {
          goal: { status: 'planned', adapter: { status: 'planned', kind: 'x_read_only_map_v0' } },
          latestRun: null,
          doc: null,
        },
        status: statusInput({ registryStatus: 'planned', adapterStatus: 'planned', adapterKind: 'x_read_only_map_v0' }),
        expected: [
          ['planned', 'controller'],
          ['planned', 'user_or_controller'],
        ],
      },
      {
        name: 'a codex-ready classification with an open agent todo',
        shouldRun: { goal: {}, latestRun: run({ classification: 'needs_validation' }), doc: agentTodo },
        status: statusInput({
          latestStatusRun: run({ classification: 'needs_validation' }) as never,
          agentTodos: { open: [{ task_class: null }], open_count: 1 },
        }),
        expected: [
          ['active_state_agent_todo', 'codex'],
          ['needs_validation', 'codex'],
        ],
      },
      {
        name: 'an external-evidence classification',
        shouldRun: { goal: {}, latestRun: run({ classification: 'await_ci' }), doc: null },
        status: statusInput({ latestStatusRun: run({ classification: 'await_ci' }) as never }),
        expected: [
          ['await_ci', 'codex'],
          ['await_ci', 'external_evidence'],
        ],
      },
      {
        name: "the run's own waiting_on",
        shouldRun: { goal: {}, latestRun: run({ classification: 'foo', waiting_on: 'controller' }), doc: null },
        status: statusInput({ latestStatusRun: run({ classification: 'foo', waiting_on: 'controller' }) as never }),
        expected: [
          ['foo', 'controller'],
          ['foo', 'codex'],
        ],
      },
    ];
    for (const c of cases) {
      const a = goalAttention(c.shouldRun);
      const b = attentionRoute(c.status);
      assert.deepEqual(
        [
          [a.status, a.waiting_on],
          [b.status, b.waiting_on],
        ],
        c.expected,
        c.name,
      );
    }
  });

  it('todo contract: five state files where the two readings differ', () => {
    const cases: { name: string; text: string; shouldRun: string[]; status: string[] }[] = [
      {
        name: 'a malformed status',
        text: stateFile('Agent Todo', 'do it', 'todo_id=todo_agent1 status=bogus'),
        shouldRun: [],
        status: ['todo_status_invalid'],
      },
      {
        name: 'a malformed excluded_agents',
        text: stateFile('Agent Todo', 'do it', 'todo_id=todo_agent2 excluded_agents=Bad%20Agent%21'),
        shouldRun: [],
        status: ['todo_excluded_agents_invalid'],
      },
      {
        name: 'the singular excluded_agent',
        text: stateFile('Agent Todo', 'do it', 'todo_id=todo_agent3 excluded_agent=zed claimed_by=zed'),
        shouldRun: ['todo_claimed_by_excluded_agent', 'todo_excludes_unregistered_agent'],
        status: [],
      },
      {
        name: 'excluded_agents on an open todo of an agent archive section',
        text: stateFile('Agent Todo Archive', 'old', 'todo_id=todo_agent4 excluded_agents=a'),
        shouldRun: ['todo_executor_exclusion_scope_invalid'],
        status: [],
      },
      {
        name: 'a task class in capitals',
        text: stateFile('User Todo', 'approve', 'todo_id=todo_user1 task_class=USER_GATE global_gate=true'),
        shouldRun: ['user_todo_task_class_missing'],
        status: [],
      },
    ];
    for (const c of cases) {
      const doc = parseStateDocument(c.text);
      const registeredAgents = ['a', 'b'];
      assert.deepEqual(
        [
          shouldRunContract(doc, registeredAgents).map((d) => d.code),
          statusContract(doc, { goalId: 'g', registeredAgents, stateFileLabel: 'S.md' }).map((d) => d.code),
        ],
        [c.shouldRun, c.status],
        c.name,
      );
    }
  });
});
