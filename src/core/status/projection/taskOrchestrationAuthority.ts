import { registryOrchestration } from './projectAsset';
import { todoId } from './standingDecisionAuthority';
import { projectedOpenTodos, type CompactTodo, type ListedTodo } from './todoLists';
import { todoTaskClass } from './todoTaskClass';

/**
 * The original's task orchestration authority on a todo summary (loopx/control_plane/todos/todo_summary.py
 * `_task_orchestration_authority`, switched on by active_state_todo_parser.py): only for a goal whose registry
 * `spawn_policy` allows sub-agents, i.e. its compacted policy (the one `project_asset.orchestration` shows,
 * projection/projectAsset.ts `registryOrchestration`) has `mode: multi_subagent`, `spawn_allowed` and
 * `max_children` > 0. Both summaries then carry `{schema_version: task_orchestration_authority_v0, role,
 * candidate_items, user_blocker_items}`:
 * - `candidate_items` (agent summary only): the projected open todos (projection/todoLists.ts) of class
 *   `advancement_task` (actionable or not), each its compact todo cut to the candidate fields;
 * - `user_blocker_items` (user summary only): the projected open todos with an `unblocks_todo_id`, each cut to the
 *   blocker fields.
 * A field is kept only when the compact todo has it (`compact_todo_item` leaves out unset keys).
 */

export const TASK_ORCHESTRATION_AUTHORITY_SCHEMA_VERSION = 'task_orchestration_authority_v0';

const CANDIDATE_FIELDS = [
  'todo_id',
  'status',
  'done',
  'task_class',
  'action_kind',
  'task_domain',
  'task_repository',
  'required_write_scopes',
  'required_capabilities',
  'claimed_by',
  'excluded_agents',
  'resume_when',
  'resume_ready',
  'continuation_policy',
  'target_key',
  'title',
  'text',
] as const;

const USER_BLOCKER_FIELDS = ['todo_id', 'status', 'done', 'task_class', 'unblocks_todo_id'] as const;

export interface TaskOrchestrationAuthority {
  schema_version: typeof TASK_ORCHESTRATION_AUTHORITY_SCHEMA_VERSION;
  role: 'user' | 'agent';
  candidate_items: Record<string, unknown>[];
  user_blocker_items: Record<string, unknown>[];
}

/** Whether the goal's registry entry switches the authority on (see the module comment). */
export function allowsSubAgents(registryEntry: Readonly<Record<string, unknown>> | undefined): boolean {
  const orchestration = registryOrchestration(registryEntry);
  return (
    orchestration !== null &&
    orchestration.mode === 'multi_subagent' &&
    orchestration.spawn_allowed &&
    orchestration.max_children > 0
  );
}

function picked(compact: CompactTodo, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) if (Object.hasOwn(compact, field)) out[field] = compact[field];
  return out;
}

/** The original's `normalize_todo_id` of the todo's `unblocks_todo_id` is set. */
function unblocks(value: unknown): boolean {
  return typeof value === 'string' && todoId(value) !== null;
}

/** The authority of one role's summary, from every todo of the role (`compact`: the summary's compact todo). */
export function taskOrchestrationAuthority(
  todos: readonly ListedTodo[],
  role: 'user' | 'agent',
  compact: (item: ListedTodo) => CompactTodo,
): TaskOrchestrationAuthority {
  const open = projectedOpenTodos(todos);
  return {
    schema_version: TASK_ORCHESTRATION_AUTHORITY_SCHEMA_VERSION,
    role,
    candidate_items:
      role === 'agent'
        ? open.filter((t) => todoTaskClass(t) === 'advancement_task').map((t) => picked(compact(t), CANDIDATE_FIELDS))
        : [],
    user_blocker_items:
      role === 'user'
        ? open
            .filter((t) => unblocks(t.structured['unblocks_todo_id']))
            .map((t) => picked(compact(t), USER_BLOCKER_FIELDS))
        : [],
  };
}
