/**
 * Field-by-field comparison of status payloads (the original's against ours), used by status.test.ts: every key the
 * original emits is looked for in ours, at every depth; a difference is named by its rule-level path (array indexes
 * as `[]`), so one rule's difference on many todos is one entry. Keys only ours emits are not differences (ours adds
 * fields; docs/compatibility.md lists them).
 */

export type Difference = `missing ${string}` | `value ${string}` | `length ${string}`;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function differences(theirs: unknown, ours: unknown, path = ''): Set<Difference> {
  const found = new Set<Difference>();
  const walk = (a: unknown, b: unknown, at: string): void => {
    if (isRecord(a) && isRecord(b)) {
      for (const [key, value] of Object.entries(a)) {
        const next = at === '' ? key : `${at}.${key}`;
        if (!Object.hasOwn(b, key)) found.add(`missing ${next}`);
        else walk(value, b[key], next);
      }
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      if (a.length !== b.length) found.add(`length ${at}`);
      for (let i = 0; i < Math.min(a.length, b.length); i++) walk(a[i], b[i], `${at}[]`);
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) found.add(`value ${at}`);
  };
  walk(theirs, ours, path);
  return found;
}

const TODO_SUMMARY_COMPARED = [
  'schema_version',
  'source_section',
  'total_count',
  'open_count',
  'done_count',
  'deferred_count',
  'claimed_open_count',
  'unclaimed_open_count',
  'claimed_advancement_open_count',
  'claimed_monitor_open_count',
  'blocker_open_count',
  'resume_blocked_count',
].join('|');
const TODO_LISTS = [
  'first_open_items',
  'first_executable_items',
  'monitor_open_items',
  'unclaimed_priority_open_items',
  'claimed_open_items',
  'claimed_advancement_open_items',
  'claimed_monitor_open_items',
  'backlog_items',
  'executable_backlog_items',
  'deferred_items',
  'deferred_resume_candidates',
  'blocker_items',
  'resume_blocked_items',
].join('|');
const COMPACT_TODO_COMPARED = [
  'index',
  'done',
  'text',
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
  'claimed_by',
  'decision_scope',
  'required_decision_scopes',
  'bound_agent',
  'goal_bound',
  'blocks_agent',
  'global_gate',
  'unblocks_todo_id',
  'created_by',
  'last_actor_agent_id',
  'note',
  'evidence',
  'reason',
  'completed_at',
  'completion_turn_key',
  'updated_at',
  'superseded_by',
].join('|');
/** A todo-summary path ours leaves different: anything below `user_todos`/`agent_todos` but the compared ones. */
const TODO_SUMMARY_LEFT = new RegExp(
  `^(user|agent)_todos\\.(?!((${TODO_SUMMARY_COMPARED})|(${TODO_LISTS})|(${TODO_LISTS})\\[\\]\\.(${COMPACT_TODO_COMPARED})|items\\[\\]\\.(schema_version|role|archive_state|source_section))$)`,
);

/**
 * The differences left, by rule (docs/compatibility.md, "Status items field by field"): a difference is accepted when
 * its path matches one of these. Each names a block whose rule we read differently or do not have; everything else of
 * an item (its route, action, source, lifecycle, handoff readiness, cadence hint, warnings, the todo summaries'
 * counts, the quota's numbers and state) must be equal.
 */
export const ITEM_RULES: readonly { pattern: RegExp; rule: string }[] = [
  { pattern: /^project_asset(\.|$)/, rule: 'project-asset-block' },
  { pattern: /^goal_channel_projection(\.|$)/, rule: 'goal-channel-block' },
  // The todo summaries' counts and lists are compared (projection/todoLists.ts), and in each listed todo the fields of
  // the original's `compact_todo_item` that ours carries; left: the monitor-due counts and lists (time of the read),
  // the closure proofs and succession reports, the per-todo handoff notes and resume readiness, and `items` (the
  // original's lists every todo, ours the first open ones: their per-todo fields beyond the four below).
  { pattern: TODO_SUMMARY_LEFT, rule: 'todo-summary-lists' },
];

/** Top-level keys of the original's status payload that ours does not carry (docs/compatibility.md). */
export const PAYLOAD_KEYS_NOT_CARRIED: readonly string[] = [
  'global_registry',
  'event_ledger_summary',
  'promotion_readiness_summary',
  'decision_freshness_summary',
  'usage_summary',
  'promotion_gate',
  'runtime_projection_routes',
];

/**
 * Top-level reports compared by value, every key at every depth, but the named time fields (the answer's time in
 * each program: `generated_at`).
 */
export const PAYLOAD_REPORTS_COMPARED: readonly { key: string; times: readonly string[] }[] = [
  { key: 'todo_index', times: [] },
  { key: 'agent_management_projection', times: ['generated_at'] },
];

/** A report without its named time fields (top-level keys of it). */
export function withoutTimes(report: unknown, times: readonly string[]): unknown {
  if (!isRecord(report)) return report;
  return Object.fromEntries(Object.entries(report).filter(([key]) => !times.includes(key)));
}

/** Payload keys compared by value (the rest are per-run paths and times). */
export const PAYLOAD_KEYS_COMPARED: readonly string[] = [
  'ok',
  'goal_count',
  'run_count',
  'goal_filter',
  'contract_errors',
  'contract_errors_total_count',
  'contract_errors_truncated',
  'contract_warnings',
  'contract_warnings_total_count',
  'contract_warnings_truncated',
];

/** The original's check lines of its public-boundary scan (contract.py `check_contract`, `include_public_boundary_scan`). */
const PUBLIC_SCAN_CHECKS = [
  'public boundary scan clean: ',
  'credential references downgraded: ',
  'private state scan skipped: ',
  'public boundary policy allowed: ',
];

/**
 * The original's contract checks as ours carries them: its public-boundary scan (of its scan roots, by default its own
 * installed package, so the counts are its install's) replaced by the line its status hot path writes instead.
 */
export function ownChecksOf(checks: readonly string[]): string[] {
  const kept = checks.filter((check) => !PUBLIC_SCAN_CHECKS.some((prefix) => check.startsWith(prefix)));
  const at = checks.findIndex((check) => PUBLIC_SCAN_CHECKS.some((prefix) => check.startsWith(prefix)));
  if (at < 0) return kept;
  const before = checks.slice(0, at).filter((check) => !PUBLIC_SCAN_CHECKS.some((p) => check.startsWith(p))).length;
  return [...kept.slice(0, before), 'public boundary scan deferred for status hot path', ...kept.slice(before)];
}

export function unexplained(found: Iterable<Difference>): Difference[] {
  return [...found].filter((d) => !ITEM_RULES.some((r) => r.pattern.test(d.slice(d.indexOf(' ') + 1))));
}
