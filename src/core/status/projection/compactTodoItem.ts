import { repositoryIdentity } from '../../snapshots/deliveryWorkspace';
import { MONITOR_KEYS } from './monitorDue';
import { normalizedClaim } from './claimedCounts';
import { attachHandoffNote } from './handoffNote';
import { decisionScope, todoId, type DecisionScope } from './standingDecisionAuthority';
import { collapseWhitespace } from './text';
import { todoTaskClass } from './todoTaskClass';

/**
 * One todo as the original's status shows it (loopx/control_plane/todos/): the structured todo
 * (`parse_active_state_todos` then `structured_todo_item`, `project_completion_validation_authority` and
 * `apply_resume_conditions`: what a summary's `items` lists) and its `compact_todo_item` (what every other list of a
 * summary holds: the same keys, and its `handoff_note_v0`). The rules, each read from the original:
 * - the metadata keys: only those of its todo metadata schema (contract.py `_TODO_METADATA_FIELD_SCHEMA`), each
 *   normalized as it reads it, and kept only when the result is present (not null, "" or []): agent tokens
 *   (`claimed_by`, `bound_agent`, `blocks_agent`; `excluded_agents` a sorted set), flags (`goal_bound`, `global_gate`,
 *   `no_followup`: booleans, false kept), token lists (`required_write_scopes`, `required_capabilities`,
 *   `target_capabilities`, `explore_result_node_refs`, `successor_todo_ids`), decision scopes as objects
 *   (`decision_scope`, `required_decision_scopes`, `decision_scope_outcomes`), enums (`continuation_policy` with a
 *   removed value kept as `removed_continuation_policy`, `completion_continuation`, `completion_recovery`,
 *   `decision_outcome`), patterns (`action_kind`, `task_domain`, `capability_binding_ref`, `replan_obligation_id`,
 *   `resume_when`, `unblocks_todo_id`, `superseded_by`), `task_repository` as a credential-free `git:<host>/<path>`,
 *   and the monitor and record fields (`target_key`, `cadence`, `next_due_at`, …, `note`, `evidence`, …) as
 *   whitespace-collapsed text; keys it does not know (e.g. `created_by`) are dropped;
 * - a controller validation command (`validation_command`, `validation_command_argv`) becomes
 *   `completion_validation_required: true`, the command itself never shown;
 * - a `resume_when` gets its `resume_condition` (`todo_resume_condition_v0`) and `resume_ready`: `todo_done:<id>`
 *   holds when that todo (any section, the archive included) is done; `pr_merged:<ref>` holds when the goal's rollout
 *   event log (its last 500 events) has a merge event for that PR and repository; `capacity_available:<c>`
 *   needs a runtime capability provider (never satisfied); any other kind, or one without a target, is unsupported;
 * - `handoff_note` (handoff_note.py `build_todo_handoff_note`, ours projection/handoffNote.ts: one rule for every
 *   reader) only when the todo has a hand-off signal: excluded agents, successors, an unblocked todo or a superseding
 *   one.
 */

export type TodoRecord = Record<string, unknown>;

/** What one parsed todo gives this module (ours: state/structured.ts `StructuredTodoItem`). */
export interface SourceTodo {
  index: number;
  status: string;
  text: string;
  todo_id: string;
  priority: string | null;
  title: string;
  metadata: Readonly<Record<string, string>>;
}

const CAPABILITY = /^[a-z][a-z0-9_:-]{0,63}$/;
const ACTION_KIND = /^[a-z][a-z0-9_-]{0,63}$/;
const TASK_DOMAIN = /^[a-z][a-z0-9_.-]{0,63}$/;
const CAPABILITY_BINDING_REF = /^[a-z][a-z0-9_.-]{0,31}:[a-z][a-z0-9_.:-]{2,95}$/;
const REPLAN_OBLIGATION_ID = /^replan-[a-f0-9]{16}$/;
const EXPLORE_NODE_REF = /^[A-Za-z][A-Za-z0-9_.:-]{0,95}$/;
const RESUME_WHEN = /^[a-z][a-z0-9_-]{0,31}(?::[a-z0-9_.:@-]{1,96})?$/;
const RESUME_PR_MERGED = /^pr_merged:(?:(?:[a-z0-9_.-]{1,80})\/(?:[a-z0-9_.-]{1,100}))?#[1-9][0-9]{0,8}$/;
const CONTINUATION_POLICIES = new Set(['independent_handoff', 'same_agent_non_delivery']);
const REMOVED_CONTINUATION_POLICIES = new Set(['primary_review', 'review_handoff']);
const COMPLETION_CONTINUATIONS = new Set(['active_goal', 'successor', 'no_followup']);
const DECISION_OUTCOMES = new Set(['approve', 'reject', 'cancel']);
/** Kept as whitespace-collapsed text: the monitor fields (monitorDue.ts reads the same) and the written notes. */
const TEXT_KEYS = [
  ...MONITOR_KEYS,
  'note',
  'evidence',
  'reason',
  'completed_at',
  'updated_at',
  'completion_turn_key',
] as const;

const lower = (value: string | undefined): string => (value ?? '').trim().toLowerCase();
const compact = (value: string | undefined): string => collapseWhitespace(value ?? '');
const split = (value: string | undefined, separators: RegExp): string[] => (value ?? '').split(separators);

function patterned(value: string | undefined, pattern: RegExp): string | null {
  const candidate = lower(value);
  return candidate !== '' && pattern.test(candidate) ? candidate : null;
}

/** contract.py `normalize_todo_global_gate` (also `goal_bound`'s). */
export function metadataFlag(value: string | undefined): boolean | null {
  const candidate = compact(value).toLowerCase();
  if (['1', 'true', 'yes', 'y', 'global_gate', 'global-gate'].includes(candidate)) return true;
  if (['0', 'false', 'no', 'n'].includes(candidate)) return false;
  return null;
}

/** completion_state.ts `normalizeTodoNoFollowup`. */
function noFollowup(value: string | undefined): boolean | null {
  const candidate = lower(value);
  if (['1', 'true', 'yes', 'y', 'no_followup', 'no-followup'].includes(candidate)) return true;
  if (['0', 'false', 'no', 'n'].includes(candidate)) return false;
  return null;
}

/** contract.py `normalize_todo_required_decision_scopes`: split on `,;|`, each read as a scope, the first of each. */
export function requiredDecisionScopes(value: string | undefined): DecisionScope[] {
  const scopes: DecisionScope[] = [];
  const seen = new Set<string>();
  for (const raw of split(value, /[,;|]/u)) {
    const scope = decisionScope(raw);
    if (scope === null) continue;
    const identity = `${scope.kind}\u0000${scope.granularity}\u0000${scope.scope_key}`;
    if (seen.has(identity)) continue;
    seen.add(identity);
    scopes.push(scope);
  }
  return scopes;
}

/** contract.py `normalize_todo_decision_scope_outcomes`: `outcome|scope|source_todo_id` items, the last per scope. */
function decisionScopeOutcomes(value: string | undefined): TodoRecord[] {
  const outcomes: TodoRecord[] = [];
  const positions = new Map<string, number>();
  for (const raw of split(value, /,/u)) {
    if (raw === '') continue;
    const parts = raw.split('|');
    if (parts.length < 3) continue;
    const outcome = compact(parts[0]).toLowerCase();
    const scope = decisionScope(parts[1]);
    const source = todoId(parts.slice(2).join('|'));
    if (!DECISION_OUTCOMES.has(outcome) || scope === null || source === null) continue;
    const payload = {
      schema_version: 'todo_decision_scope_outcome_v0',
      outcome,
      decision_scope: scope,
      source_todo_id: source,
    };
    const identity = `${scope.kind}\u0000${scope.granularity}\u0000${scope.scope_key}`;
    const at = positions.get(identity);
    if (at !== undefined) outcomes[at] = payload;
    else {
      positions.set(identity, outcomes.length);
      outcomes.push(payload);
    }
  }
  return outcomes;
}

/** contract.py `normalize_required_write_scopes`: relative, public-safe scope tokens, deduplicated. */
function writeScopes(value: string | undefined): string[] {
  const scopes: string[] = [];
  for (const raw of split(value, /[,;|]/u)) {
    const scope = compact(raw);
    if (scope === '' || [...scope].length > 160) continue;
    if (scope.startsWith('/') || scope.startsWith('~') || scope.split('/').includes('..')) continue;
    if (/[\s<>]/u.test(scope) || scopes.includes(scope)) continue;
    scopes.push(scope);
  }
  return scopes;
}

/** contract.py `normalize_required_capabilities` (also `target_capabilities`). */
function capabilities(value: string | undefined): string[] {
  const found: string[] = [];
  for (const raw of split(value, /[,;|]/u)) {
    const capability = compact(raw).toLowerCase().replaceAll('-', '_').replaceAll(' ', '_');
    if (capability === '' || !CAPABILITY.test(capability) || found.includes(capability)) continue;
    found.push(capability);
  }
  return found;
}

/** contract.py `normalize_explore_result_node_refs`: at most 8. */
function exploreRefs(value: string | undefined): string[] {
  const refs: string[] = [];
  for (const raw of split(value, /[,;|]/u)) {
    const ref = compact(raw);
    if (ref === '' || !EXPLORE_NODE_REF.test(ref)) continue;
    if (!refs.includes(ref)) refs.push(ref);
    if (refs.length >= 8) break;
  }
  return refs;
}

/** contract.py `normalize_todo_id_list`: every `todo_…` token found in the value, then the value itself. */
export function todoIdList(value: string | undefined): string[] {
  if (value === undefined) return [];
  const ids: string[] = [];
  for (const match of value.matchAll(/\btodo_[A-Za-z0-9_-]+\b/gu)) {
    const id = todoId(match[0]);
    if (id !== null && !ids.includes(id)) ids.push(id);
  }
  const whole = todoId(value);
  if (whole !== null && !ids.includes(whole)) ids.push(whole);
  return ids;
}

/** contract.py `normalize_todo_excluded_agents`: comma-separated agent tokens, a sorted set. */
function excludedAgents(value: string | undefined): string[] {
  const agents = new Set<string>();
  for (const raw of split(value, /,/u)) {
    const agent = normalizedClaim(raw);
    if (agent !== null) agents.add(agent);
  }
  return [...agents].sort();
}

/** contract.py `normalize_todo_resume_when`. */
export function normalizedResumeWhen(value: string | undefined): string | null {
  const candidate = compact(value).toLowerCase();
  if (candidate === '') return null;
  return RESUME_PR_MERGED.test(candidate) || RESUME_WHEN.test(candidate) ? candidate : null;
}

type Normalizer = (value: string) => unknown;

const enumOf =
  (values: ReadonlySet<string>): Normalizer =>
  (value) => {
    const candidate = lower(value);
    return values.has(candidate) ? candidate : null;
  };

/** The original's todo metadata schema (contract.py `_TODO_METADATA_FIELD_SCHEMA`): each key it reads, and how. */
const NORMALIZERS: Readonly<Record<string, Normalizer>> = {
  task_domain: (v) => patterned(v, TASK_DOMAIN),
  capability_binding_ref: (v) => patterned(v, CAPABILITY_BINDING_REF),
  task_repository: (v) => repositoryIdentity(v),
  removed_continuation_policy: enumOf(REMOVED_CONTINUATION_POLICIES),
  required_write_scopes: writeScopes,
  required_capabilities: capabilities,
  target_capabilities: capabilities,
  explore_result_node_refs: exploreRefs,
  decision_scope: (v) => decisionScope(v),
  required_decision_scopes: requiredDecisionScopes,
  decision_outcome: (v) => {
    const outcome = compact(v).toLowerCase();
    return DECISION_OUTCOMES.has(outcome) ? outcome : null;
  },
  decision_scope_outcomes: decisionScopeOutcomes,
  claimed_by: (v) => normalizedClaim(v),
  bound_agent: (v) => normalizedClaim(v),
  goal_bound: metadataFlag,
  blocks_agent: (v) => normalizedClaim(v),
  excluded_agents: excludedAgents,
  global_gate: metadataFlag,
  unblocks_todo_id: (v) => todoId(v),
  successor_todo_ids: todoIdList,
  completion_continuation: enumOf(COMPLETION_CONTINUATIONS),
  completion_recovery: enumOf(new Set(['same_turn_terminal_closeout'])),
  replan_obligation_id: (v) => (REPLAN_OBLIGATION_ID.test(v.trim()) ? v.trim() : null),
  resume_when: normalizedResumeWhen,
  no_followup: noFollowup,
  superseded_by: (v) => todoId(v),
  ...Object.fromEntries(TEXT_KEYS.map((key) => [key, compact])),
};

/**
 * The metadata keys of the original's todo schema, normalized as its parser reads them (absent when not present), in
 * the order they were written: a `continuation_policy` of a removed value is kept as `removed_continuation_policy`; a
 * validation command becomes `completion_validation_required`. Only the keys the todo has are looked at.
 */
function metadataFields(meta: Readonly<Record<string, string>>): TodoRecord {
  const out: TodoRecord = {};
  for (const key in meta) {
    const value = meta[key] ?? '';
    if (key === 'continuation_policy') {
      const policy = lower(value);
      if (CONTINUATION_POLICIES.has(policy)) out['continuation_policy'] = policy;
      else if (REMOVED_CONTINUATION_POLICIES.has(policy)) out['removed_continuation_policy'] = policy;
      continue;
    }
    if (key === 'validation_command' || key === 'validation_command_argv') {
      if ((key === 'validation_command' ? compact(value) : value.trim()) !== '')
        out['completion_validation_required'] = true;
      continue;
    }
    const normalize = Object.hasOwn(NORMALIZERS, key) ? NORMALIZERS[key] : undefined;
    if (normalize === undefined) continue;
    const normalized = normalize(value);
    if (normalized === null || normalized === '' || (Array.isArray(normalized) && normalized.length === 0)) continue;
    out[key] = normalized;
  }
  return out;
}

/**
 * The original's structured todo (`structured_todo_item` over its parser's todo), without the resume condition
 * (`applyResumeConditions` adds it, knowing every todo).
 */
export function structuredTodo(
  todo: SourceTodo,
  role: 'user' | 'agent' | null,
  sourceSection: string | null,
  archiveState = 'active',
): TodoRecord {
  const actionKind = patterned(todo.metadata['action_kind'], ACTION_KIND);
  return {
    index: todo.index,
    done: todo.status === 'done' || todo.status === 'deferred',
    status: todo.status,
    text: todo.text,
    archive_state: archiveState,
    source_section: sourceSection,
    role,
    schema_version: 'todo_item_v0',
    todo_id: todo.todo_id,
    task_class: todoTaskClass({
      task_class: todo.metadata['task_class'] ?? null,
      action_kind: todo.metadata['action_kind'],
      text: todo.text,
    }),
    ...(actionKind !== null ? { action_kind: actionKind } : {}),
    ...metadataFields(todo.metadata),
    ...(todo.priority !== null ? { priority: todo.priority, title: todo.title } : {}),
  };
}

const PR_REF = /^(?:([A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)#|#|pr[-_\s]*)([0-9]+)/iu;
const GITHUB_PULL_URL = /^https:\/\/github\.com\/([^/]+\/[^/]+)\/pull\/([0-9]+)(?:\b|\/|#|\?)/iu;
const PR_MERGED_EVENT_KINDS = new Set(['pr_merge', 'pr_merged', 'pull_request_merge', 'pull_request_merged']);

interface PrRef {
  repo: string | null;
  number: number;
  normalized: string;
}

/** todo_summary.py `normalized_pr_ref_parts`: a GitHub pull URL, `owner/repo#n`, `#n` or `pr n`, lowercased. */
function prRefParts(value: unknown): PrRef | null {
  const candidate = (typeof value === 'string' ? value : value == null ? '' : String(value)).trim().toLowerCase();
  if (candidate === '') return null;
  const url = GITHUB_PULL_URL.exec(candidate);
  if (url !== null) {
    const repo = url[1] ?? '';
    return { repo, number: Number(url[2]), normalized: `${repo}#${url[2]}` };
  }
  const match = PR_REF.exec(candidate);
  if (match === null) return null;
  const repo = match[1] ?? null;
  const number = Number(match[2]);
  return { repo, number, normalized: repo !== null ? `${repo}#${number}` : `#${number}` };
}

/** todo_summary.py `rollout_event_pr_refs`: its `code_refs.pr_ref`, `pr_ref` and pull-request source refs, each once. */
function eventPrRefs(event: TodoRecord): PrRef[] {
  const codeRefs = event['code_refs'];
  const values: unknown[] = [
    typeof codeRefs === 'object' && codeRefs !== null && !Array.isArray(codeRefs)
      ? (codeRefs as TodoRecord)['pr_ref']
      : undefined,
    event['pr_ref'],
  ];
  const sourceRefs = event['source_refs'];
  if (Array.isArray(sourceRefs))
    for (const ref of sourceRefs) {
      if (typeof ref !== 'object' || ref === null || Array.isArray(ref)) continue;
      const kind = String((ref as TodoRecord)['kind'] ?? '')
        .trim()
        .toLowerCase();
      if (kind === 'pull_request' || kind === 'pr') values.push((ref as TodoRecord)['ref']);
    }
  const refs: PrRef[] = [];
  const seen = new Set<string>();
  for (const value of values) {
    const ref = prRefParts(value);
    if (ref === null) continue;
    const key = `${ref.repo ?? ''}\u0000${ref.number}`;
    if (seen.has(key)) continue;
    seen.add(key);
    refs.push(ref);
  }
  return refs;
}

const isMergeEvent = (event: TodoRecord): boolean =>
  PR_MERGED_EVENT_KINDS.has(
    String(event['event_kind'] ?? '')
      .trim()
      .toLowerCase(),
  );

/**
 * todo_summary.py `pr_merged_condition`: the PR the target names, its repository (qualified, else the todo's
 * `task_repository` on github.com, else ambiguous with the repositories of merge events for that number), and the
 * first merge event of the rollout log (`events`: its last 500, as the todo index reads them) for that number and
 * repository, which satisfies it.
 */
export function prMergedCondition(target: string, taskRepository: unknown, events: readonly TodoRecord[]): TodoRecord {
  const condition: TodoRecord = { pr_number: null, pr_repo: null, source: 'rollout_event_log' };
  const targetRef = prRefParts(target);
  if (targetRef === null) return { ...condition, invalid_target: true };
  condition['pr_number'] = targetRef.number;
  let targetRepo = targetRef.repo;
  if (targetRepo !== null) {
    condition['pr_repo'] = targetRepo;
    condition['repository_binding_source'] = 'qualified_resume_when';
  } else {
    const repository = typeof taskRepository === 'string' && taskRepository !== '' ? taskRepository : null;
    const prefix = 'git:github.com/';
    const repoPath =
      repository !== null && repository.toLowerCase().startsWith(prefix)
        ? repository.slice(prefix.length).replace(/^\/+|\/+$/gu, '')
        : null;
    if (repoPath !== null && repoPath.split('/').length === 2) {
      targetRepo = repoPath.toLowerCase();
      condition['pr_repo'] = targetRepo;
      condition['repository_binding_source'] = 'task_repository';
    } else {
      const candidates = new Set<string>();
      for (const event of events)
        if (isMergeEvent(event))
          for (const ref of eventPrRefs(event))
            if (ref.number === targetRef.number && ref.repo) candidates.add(ref.normalized);
      return {
        ...condition,
        repository_binding_state: 'ambiguous',
        repository_binding_reason: repository === null ? 'task_repository_missing' : 'task_repository_not_github',
        candidate_pr_refs: [...candidates].sort().slice(0, 8),
      };
    }
  }
  for (const event of events) {
    if (!isMergeEvent(event)) continue;
    for (const ref of eventPrRefs(event)) {
      if (ref.number !== targetRef.number || ref.repo !== targetRepo) continue;
      return {
        ...condition,
        satisfied: true,
        matched_event_id: event['event_id'] ?? null,
        matched_event_kind: event['event_kind'] ?? null,
        matched_pr_ref: ref.normalized,
        matched_event_at: event['recorded_at'] ?? null,
      };
    }
  }
  return condition;
}

/**
 * todo_summary.py `apply_resume_conditions`: each todo of `items` with a `resume_when` gets its `resume_condition` and
 * `resume_ready`. A `todo_done:<id>` target is looked up among `sources` (every active todo of both roles, then the
 * archive's todos with an explicit id) and then `items`, the later winning; a `pr_merged:<ref>` among `rolloutEvents`.
 */
export function applyResumeConditions(
  items: readonly TodoRecord[],
  sources: readonly TodoRecord[],
  rolloutEvents: readonly TodoRecord[] = [],
): void {
  let byId: Map<string, TodoRecord> | null = null;
  const lookup = (id: string): TodoRecord | undefined => {
    if (byId === null) {
      byId = new Map();
      for (const source of [...sources, ...items]) {
        const key = todoId(typeof source['todo_id'] === 'string' ? source['todo_id'] : undefined);
        if (key !== null) byId.set(key, source);
      }
    }
    return byId.get(id);
  };
  for (const item of items) {
    const resumeWhen = item['resume_when'];
    if (typeof resumeWhen !== 'string') continue;
    const colon = resumeWhen.indexOf(':');
    const kind = colon < 0 ? resumeWhen : resumeWhen.slice(0, colon);
    const target = colon < 0 ? '' : resumeWhen.slice(colon + 1);
    let condition: TodoRecord = {
      schema_version: 'todo_resume_condition_v0',
      resume_when: resumeWhen,
      satisfied: false,
      kind,
      ...(colon >= 0 ? { target } : {}),
    };
    if (kind === 'todo_done' && target !== '') {
      const found = lookup(target);
      condition['target_todo_id'] = target;
      condition['target_status'] = found === undefined ? null : found['status'];
      if (found !== undefined) {
        condition['target_archive_state'] = found['archive_state'];
        condition['target_source_section'] = found['source_section'];
        condition['target_task_class'] = found['task_class'];
        if (typeof found['claimed_by'] === 'string') condition['target_claimed_by'] = found['claimed_by'];
      }
      condition['satisfied'] = condition['target_status'] === 'done';
    } else if (kind === 'pr_merged' && target !== '') {
      condition = { ...condition, ...prMergedCondition(target, item['task_repository'], rolloutEvents) };
    } else if (kind === 'capacity_available' && target !== '') {
      condition = {
        ...condition,
        provider: 'runtime_available_capabilities',
        provider_required: true,
        capability: target,
      };
    } else {
      condition['unsupported'] = true;
    }
    item['resume_condition'] = condition;
    item['resume_ready'] = condition['satisfied'] === true;
  }
}

/** The keys `compact_todo_item` copies, in its order, each when not null. */
const COMPACT_KEYS = [
  'schema_version',
  'todo_id',
  'role',
  'status',
  'priority',
  'title',
  'archive_state',
  'source_section',
  'task_class',
  'action_kind',
  'task_domain',
  'capability_binding_ref',
  'task_repository',
  'continuation_policy',
  'removed_continuation_policy',
  'required_write_scopes',
  'required_capabilities',
  'target_capabilities',
  'explore_result_node_refs',
  'decision_scope',
  'required_decision_scopes',
  'decision_outcome',
  'decision_scope_outcomes',
  'claimed_by',
  'created_by',
  'last_actor_agent_id',
  'bound_agent',
  'goal_bound',
  'blocks_agent',
  'excluded_agents',
  'global_gate',
  'unblocks_todo_id',
  'resume_when',
  'resume_condition',
  'resume_ready',
  'no_followup',
  'successor_todo_ids',
  'completion_continuation',
  'completion_recovery',
  'replan_obligation_id',
  // The monitor metadata, in the same order.
  ...MONITOR_KEYS,
  'note',
  'evidence',
  'reason',
  'completed_at',
  'completion_turn_key',
  'updated_at',
  'superseded_by',
  'completion_validation_required',
] as const;

/**
 * todo_summary.py `compact_todo_item`: `index`, `done`, `text`, then each of its keys the todo has, and its hand-off note
 * (handoffNote.ts, without a goal or source).
 */
export function compactTodoItem(item: TodoRecord): TodoRecord {
  const out: TodoRecord = { index: item['index'], done: item['done'] === true, text: item['text'] };
  for (const key of COMPACT_KEYS) {
    const value = item[key];
    if (value !== undefined && value !== null) out[key] = value;
  }
  return attachHandoffNote(out);
}

/** todo_summary.py `MAX_STATUS_TODOS_PER_ROLE`. */
export const STATUS_TODOS_PER_ROLE = 12;

function priorityRank(item: TodoRecord): number {
  const match = /^P([0-4])/u.exec((typeof item['priority'] === 'string' ? item['priority'] : '').trim().toUpperCase());
  return match === null ? 50 : Number(match[1]);
}

/**
 * A summary's `items` (`compact_todo_group`'s `budgeted_items`, the first 12): the open todos by priority then position
 * (P0 first, none last), then the deferred ones in the same order, then the done ones in document order.
 */
export function budgetedItems(items: readonly TodoRecord[]): TodoRecord[] {
  const sorted = (list: TodoRecord[]): TodoRecord[] =>
    list.sort((a, b) => priorityRank(a) - priorityRank(b) || (a['index'] as number) - (b['index'] as number));
  const open = items.filter((t) => t['done'] !== true);
  const deferred = items.filter((t) => t['status'] === 'deferred');
  const done = items.filter((t) => t['done'] === true && t['status'] !== 'deferred');
  return [...sorted(open), ...sorted(deferred), ...done].slice(0, STATUS_TODOS_PER_ROLE);
}
