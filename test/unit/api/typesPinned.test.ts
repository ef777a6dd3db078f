import assert from 'node:assert/strict';
import type {
  LoopxGate,
  LoopxGateBlock,
  LoopxGateList,
  LoopxGateState,
  LoopxGoal,
  LoopxGoalStatus,
  LoopxQuota,
  LoopxRoleCounts,
  LoopxTodo,
  LoopxTodoList,
  LoopxTodoStatus,
  LoopxWarning,
} from '../../../src/api/types';
import {
  GateListResultSchema,
  GateSchema,
  GoalStatusSchema,
  TodoListResultSchema,
  type Gate,
  type GateBlock,
  type GateListResult,
  type GoalStatus,
  type TodoListResult,
} from '../../../src/core/ops/resultSchemas';
import type { ProjectionWarning } from '../../../src/core/status/projection/schemas';
import { NormalizedQuotaSchema, type NormalizedQuota } from '../../../src/core/registry/schema';
import type { RunIndexEntry } from '../../../src/core/runtime/runIndex';
import { GoalSummarySchema, type GoalSummary } from '../../../src/core/ops/goalRows';

/**
 * src/api/types.ts copies the API's shapes so other extensions can copy that one file without our
 * core. These checks pin each copy to the zod schema it mirrors: if either side gains, loses or
 * retypes a field, `npm run typecheck` fails here. The runtime tests parse a value typed by the
 * copy with the schema and require it back unchanged (zod drops fields it does not know).
 */

/** Deeply flattens intersections and `extend`ed objects, so equal shapes compare equal. */
type Flat<T> = T extends (infer E)[] ? Flat<E>[] : T extends object ? { [K in keyof T]: Flat<T[K]> } : T;
/** True only when A and B are the same type (not merely assignable either way). */
type Equals<A, B> = (<T>() => T extends Flat<A> ? 1 : 2) extends <T>() => T extends Flat<B> ? 1 : 2 ? true : false;
/** Compiles only when given `true`. */
function pinned<T extends true>(holds: T): T {
  return holds;
}

type RoleCounts = NonNullable<GoalStatus['state']>['todos']['user'];

/** The copies, each against what it mirrors: `true` for every entry, or this file does not compile. */
const PINS = {
  LoopxQuota: pinned<Equals<LoopxQuota, NormalizedQuota>>(true),
  LoopxGoal: pinned<Equals<LoopxGoal, GoalSummary>>(true),
  LoopxTodoStatus: pinned<Equals<LoopxTodoStatus, TodoListResult['todos'][number]['status']>>(true),
  LoopxGateState: pinned<Equals<LoopxGateState, GateBlock['gate_state']>>(true),
  LoopxGateBlock: pinned<Equals<LoopxGateBlock, GateBlock>>(true),
  LoopxTodo: pinned<Equals<LoopxTodo, TodoListResult['todos'][number]>>(true),
  LoopxGate: pinned<Equals<LoopxGate, Gate>>(true),
  // The API leaves out the CLI's `ok` flag and the parser's diagnostics.
  LoopxTodoList: pinned<Equals<LoopxTodoList, Omit<TodoListResult, 'ok' | 'diagnostics'>>>(true),
  LoopxGateList: pinned<Equals<LoopxGateList, GateListResult>>(true),
  LoopxRoleCounts: pinned<Equals<LoopxRoleCounts, RoleCounts>>(true),
  // The fields every warning kind has; `kind` is widened to string so new kinds stay compatible.
  LoopxWarning:
    pinned<Equals<LoopxWarning, { kind: string } & Pick<ProjectionWarning, 'severity' | 'message' | 'id'>>>(true),
  LoopxWarningKind: pinned<ProjectionWarning['kind'] extends LoopxWarning['kind'] ? true : false>(true),
  // Without `schema_version`; warnings and the latest run as above, with the run fields it names.
  LoopxGoalStatus: pinned<
    Equals<
      LoopxGoalStatus,
      Omit<GoalStatus, 'schema_version' | 'warnings' | 'runs'> & {
        runs: {
          count: number;
          latest_status_run: Pick<
            RunIndexEntry,
            'generated_at' | 'classification' | 'recommended_action' | 'agent_id' | 'todo_id'
          > | null;
        };
        warnings: LoopxWarning[];
      }
    >
  >(true),
  GoalStatusAssignable: pinned<GoalStatus extends LoopxGoalStatus ? true : false>(true),
};

const quota: LoopxQuota = { compute: 0.5, window_hours: 24, slot_minutes: 30, allowed_slots: 24, spent_slots: 2 };
const goal: LoopxGoal = {
  goalId: 'g',
  displayName: 'G',
  status: 'active',
  domain: null,
  registryPath: '/p/.loopx/registry.json',
  projectRoot: '/p',
  runtimeRoot: '/p/.loopx',
  stateFile: '/p/ACTIVE_GOAL_STATE.md',
  agents: ['codex-main'],
  quota,
};
const block: LoopxGateBlock = { gate_todo_id: 'todo_gate', relation: 'gate_targets_todo', gate_state: 'open' };
const todo: LoopxTodo = {
  index: 0,
  done: false,
  text: 'Run it',
  title: 'Run it',
  todo_id: 'todo_run',
  todo_id_source: 'metadata',
  priority: 'P1',
  status: 'open',
  claimed_by: 'codex-main',
  task_class: 'advancement_task',
  role: 'agent',
  section: 'Agent Todo',
  line: 12,
  metadata: { todo_id: 'todo_run' },
  blocked_by: [block],
};
const gate: LoopxGate = {
  todo_id: 'todo_gate',
  text: 'Approve',
  title: 'Approve',
  status: 'open',
  gate_state: 'open',
  line: 8,
  blocks_agent: null,
  global_gate: false,
  unblocks_todo_ids: ['todo_run'],
  decision_scope: null,
  decision_outcome: null,
  unscoped: false,
  blocked_todo_ids: ['todo_run'],
  due_at: '2026-01-31T12:00:00Z',
  updated_at: null,
};
const counts: LoopxRoleCounts = { total_count: 2, open_count: 1, done_count: 1, blocked_count: 0, deferred_count: 0 };

describe('src/api/types.ts is pinned to the zod schemas', () => {
  it('every copied type equals the schema type it mirrors (checked by the compiler)', () => {
    assert.ok(Object.keys(PINS).length >= 13);
    for (const [name, holds] of Object.entries(PINS)) assert.equal(holds, true, name);
  });

  it('values typed by the copies parse unchanged with the schemas', () => {
    assert.deepEqual(NormalizedQuotaSchema.parse(quota), quota);
    assert.deepEqual(GoalSummarySchema.parse(goal), goal);
    assert.deepEqual(TodoListResultSchema.shape.todos.element.parse(todo), todo);
    assert.deepEqual(GateSchema.parse(gate), gate);
    const list: LoopxTodoList = {
      goal_id: 'g',
      state_file: '/p/ACTIVE_GOAL_STATE.md',
      count: 1,
      todos: [todo],
      open_gates: [gate],
      holding_gates: [gate],
      lane_gates_by_agent: { 'codex-main': ['todo_gate'] },
    };
    assert.deepEqual(TodoListResultSchema.omit({ ok: true, diagnostics: true }).strict().parse(list), list);
    const gates: LoopxGateList = {
      goal_id: 'g',
      state_file: '/p/ACTIVE_GOAL_STATE.md',
      open_gates: [gate],
      holding_gates: [],
      agent_todos: [{ todo_id: 'todo_run', claimed_by: 'codex-main', blocked: true, blocked_by: [block] }],
      lane_gates_by_agent: {},
    };
    assert.deepEqual(GateListResultSchema.strict().parse(gates), gates);
    const status: LoopxGoalStatus = {
      goal,
      state: {
        state_file: '/p/ACTIVE_GOAL_STATE.md',
        updated_at: null,
        next_action: 'Run it',
        todos: { user: counts, agent: counts },
        open_gate_count: 1,
        diagnostics: { parseable: true, warning_count: 0, error_count: 0 },
      },
      state_error: null,
      runs: { count: 0, latest_status_run: null },
      warnings: [],
    };
    const statusSchema = GoalStatusSchema.omit({ schema_version: true }).strict();
    assert.deepEqual(statusSchema.parse(status), status);
  });
});
