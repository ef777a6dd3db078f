import * as l10n from '@vscode/l10n';
import { LOOPX_ERROR_CODES, type LoopxErrorCode } from '../core/errorCodes';
import { isLoopxError } from '../core/errors';

/**
 * What the editor shows for a refusal of the core, by `LoopxErrorCode`. The core words its errors
 * for the `loopx` CLI ("pass --allow-registered…", "requires --agent-id"); the palette, the tree,
 * the webviews and the chat have no command line, so each code says here what the editor shows:
 *
 * - `'asIs'`: the core's message names no CLI option, and is shown as it is;
 * - a sentence: the editor's own words, from the error's details;
 * - `{ action: 'askAgent', … }`: a command that can ask asks which agent (quick pick) and retries;
 *   where nothing can ask (chat, tree tooltips), the sentence is shown.
 * - `{ action: 'configureAgent', … }`: the agent has no executor; a turn command offers
 *   "Configure Agent…" for it and runs the turn once it has one; elsewhere the sentence is shown.
 *
 * `Record<LoopxErrorCode, …>`: a new code does not compile until it has an entry here.
 * `test/unit/editor/errorWording.test.ts` feeds every code and finds no `--flag` in what is shown.
 */

export interface WordedError {
  readonly code: LoopxErrorCode;
  readonly message: string;
  readonly details: Readonly<Record<string, unknown>>;
}

type Sentence = (error: WordedError) => string;

export type EditorWording =
  'asIs' | Sentence | { readonly action: 'askAgent' | 'configureAgent'; readonly sentence: Sentence };

const text = (details: Readonly<Record<string, unknown>>, key: string): string => {
  const value = details[key];
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
};

const goalOf = (error: WordedError): string => text(error.details, 'goal_id') || text(error.details, 'goal');
const todoOf = (error: WordedError): string => text(error.details, 'todo_id');

/** The sentence for "this needs an agent" (every asking command retries with the agent picked). */
const agentRequired: Sentence = (error) =>
  goalOf(error) === ''
    ? l10n.t('This goal has several agents: choose the agent this is for.')
    : l10n.t('"{0}" has several agents: choose the agent this is for.', goalOf(error));

const askAgent = { action: 'askAgent', sentence: agentRequired } as const;

/** The sentence for an agent with no executor (the core's names `loopx agent configure` and its options). */
export function executorMissingSentence(agentId: string): string {
  return agentId === ''
    ? l10n.t('This agent has no executor to run its turns: set one up with "LoopX: Configure Agent…".')
    : l10n.t('Agent "{0}" has no executor to run its turns: set one up with "LoopX: Configure Agent…".', agentId);
}

/** For codes from the CLI's own checks, which the editor's dialogs do not produce: the gist, details in the log. */
const requestNotAccepted: Sentence = () =>
  l10n.t('LoopX did not accept this request as given; nothing was written. Show Log for the details.');

export const EDITOR_ERROR_WORDING: Record<LoopxErrorCode, EditorWording> = {
  agent_id_invalid: () =>
    l10n.t('That agent id is not valid: use a short token of letters, digits and dashes, such as codex-main.'),
  agent_not_registered: 'asIs',
  agent_registry_roster_missing: (error) =>
    l10n.t(
      '"{0}" lists no registered agents yet: add one with "LoopX: Register Agent…" or "LoopX: Configure Goal…".',
      goalOf(error),
    ),
  archive_cross_device: () =>
    l10n.t(
      'The archive folder is on another drive, and LoopX only moves folders: choose an archive folder on the same drive.',
    ),
  archive_root_inside_source: () =>
    l10n.t('The archive folder lies inside the runtime folder being archived: choose an archive folder outside it.'),
  corrupt_lease: 'asIs',
  credential_refused: 'asIs',
  demo_agent_unavailable: 'asIs',
  executor_config_invalid: (error) =>
    l10n.t("The agent's executor settings are not valid: {0}", withoutCliFlags(error.message)),
  executor_missing: {
    action: 'configureAgent',
    sentence: (error) => executorMissingSentence(text(error.details, 'agent_id')),
  },
  executor_unavailable_here: 'asIs',
  file_not_found: 'asIs',
  file_not_regular: 'asIs',
  file_system_error: 'asIs',
  file_too_large: 'asIs',
  file_unreadable: 'asIs',
  gate_cannot_be_deferred: () => l10n.t('A user gate is approved, rejected or superseded, not deferred.'),
  gate_decision_outcome_not_a_gate: () => l10n.t('Only a user gate takes a decision (approve or reject).'),
  gate_decision_outcome_required: (error) =>
    l10n.t('Completing the gate {0} needs a decision: approve or reject it.', todoOf(error)),
  gate_scope_conflict: 'asIs',
  gate_scope_required: () =>
    l10n.t('On a goal with several agents a user gate must say whom it holds back: one agent, or the whole goal.'),
  gate_target_not_agent_todo: 'asIs',
  git_unavailable: 'asIs',
  global_registry_not_found: () =>
    l10n.t(
      "The global registry that names this goal's project registry was not found; run the command from the project folder.",
    ),
  global_route_collision: 'asIs',
  goal_exists: (error) =>
    l10n.t(
      'A goal "{0}" already exists in this registry: choose another id, or open the existing goal.',
      goalOf(error),
    ),
  goal_not_found: (error) =>
    l10n.t('There is no goal "{0}" in this registry; reload the LoopX view to see its goals.', goalOf(error)),
  goal_plan_state_file_exists: () =>
    l10n.t("The goal's state file already exists, so the plan was not written; edit the existing file instead."),
  goal_registered: (error) =>
    l10n.t(
      '"{0}" is still registered, so LoopX refuses to archive its runtime; archive it anyway only if the goal is obsolete.',
      goalOf(error),
    ),
  handoff_mode_forbids_lease: 'asIs',
  handoff_mode_not_quiescent: 'asIs',
  handoff_mode_requires_lease: (error) =>
    l10n.t('{0} is leased under hard_lease mode: only the agent holding its task lease may change it.', todoOf(error)),
  heartbeat_receipt_binding_mismatch: () =>
    l10n.t("This step names another todo than the one the turn's heartbeat is bound to; nothing was written."),
  idempotency_key_reuse: 'asIs',
  invalid_argument: (error) => withoutCliFlags(error.message),
  invalid_clock: 'asIs',
  invalid_decision_scope: 'asIs',
  invalid_frontmatter_key: 'asIs',
  invalid_frontmatter_value: 'asIs',
  invalid_goal_config: (error) => l10n.t('This goal setting is not valid: {0}', withoutCliFlags(error.message)),
  invalid_goal_id: 'asIs',
  invalid_handoff_mode: 'asIs',
  invalid_idempotency_key: 'asIs',
  invalid_json: 'asIs',
  invalid_port: 'asIs',
  invalid_projection_input: 'asIs',
  invalid_resume_condition: 'asIs',
  invalid_run_record: 'asIs',
  invalid_task_class: 'asIs',
  invalid_time_range: 'asIs',
  invalid_todo_field: (error) => l10n.t('A todo field is not valid: {0}', withoutCliFlags(error.message)),
  invalid_ttl: () => l10n.t('A lease lasts a whole number of seconds from 1 to 86400.'),
  json_too_deep: 'asIs',
  lane_git_failed: 'asIs',
  lane_human_only: 'asIs',
  lane_not_found: 'asIs',
  lane_not_git_repository: () =>
    l10n.t("An agent that works in its own worktree needs the goal's repo to be a git repository with a commit."),
  lane_state_invalid: 'asIs',
  lane_unmerged_commits: () =>
    l10n.t(
      'A lane has commits the main branch lacks; merge or reject the lane first (LoopX: Merge Lane / Reject Lane).',
    ),
  lease_cas_mismatch: () =>
    l10n.t(
      'The task lease is held by another agent or was changed meanwhile; nothing was written. Reload and try again.',
    ),
  lease_fence_required: (error) =>
    l10n.t('{0} is leased: use the lease actions (Renew / Transfer / Release Lease) of its holder.', todoOf(error)),
  lease_not_active: 'asIs',
  listen_failed: 'asIs',
  lock_acquire_timeout: 'asIs',
  lock_not_reentrant: 'asIs',
  mcp_config_unparseable: 'asIs',
  merge_gate_needs_lane_merge: () => l10n.t('This gate is approved by merging its lane: use "LoopX: Merge Lane".'),
  next_action_credential: 'asIs',
  next_action_empty: 'asIs',
  not_loopback: 'asIs',
  owner_conflicts_with_claim: 'asIs',
  owner_excluded_from_todo: 'asIs',
  path_outside_root: 'asIs',
  port_in_use: 'asIs',
  project_not_found: () => l10n.t('The project folder does not exist; open or create it first.'),
  quota_agent_id_invalid: 'asIs',
  quota_agent_not_registered: 'asIs',
  quota_agent_registry_roster_missing: 'asIs',
  quota_replan_obligation_id_invalid: 'asIs',
  quota_reservations_invalid: 'asIs',
  quota_settlement_agent_required: askAgent,
  quota_settlement_binding_conflict: 'asIs',
  quota_slots_invalid: 'asIs',
  quota_ttl_invalid: 'asIs',
  quota_turn_instance_id_invalid: 'asIs',
  quota_window_out_of_range: 'asIs',
  read_only_file_system: () =>
    l10n.t(
      'The folder is read-only here (an agent sandbox?); nothing was written. Run this where the folder is writable.',
    ),
  recommended_action_credential: 'asIs',
  refresh_agent_id_invalid: 'asIs',
  refresh_agent_id_required: askAgent,
  refresh_agent_lane_cannot_write_next_action: () =>
    l10n.t("An agent lane's refresh cannot change the Next Action; refresh the goal as a whole to change it."),
  refresh_agent_not_registered: 'asIs',
  refresh_agent_registry_roster_missing: 'asIs',
  refresh_invalid_classification: 'asIs',
  refresh_invalid_field: 'asIs',
  refresh_multi_agent_requires_agent_id: askAgent,
  registry_goals_not_list: 'asIs',
  registry_invalid_json: 'asIs',
  registry_missing: () =>
    l10n.t('No LoopX registry found: create a goal ("LoopX: Create Goal…") or set loopx.registryPath.'),
  registry_not_found: () => l10n.t('The registry file does not exist: check the loopx.registryPath setting.'),
  registry_not_object: 'asIs',
  registry_unreadable: () =>
    l10n.t('The registry could not be read: check the loopx.registryPath setting and the file.'),
  review_revert_conflict: 'asIs',
  review_revert_refused: 'asIs',
  review_turn_not_found: () => l10n.t('No recorded turn with a snapshot matches this one; it may have been archived.'),
  rollout_event_not_public_safe: 'asIs',
  runtime_goal_missing: 'asIs',
  runtime_goal_not_directory: 'asIs',
  runtime_goal_outside_goals_root: 'asIs',
  selected_todo_not_open: 'asIs',
  source_registry_missing: () =>
    l10n.t("The goal's global registry entry names no project registry; run this from the project folder."),
  state_changed_concurrently: 'asIs',
  state_file_missing: 'asIs',
  state_file_not_utf8: 'asIs',
  state_file_unreadable: 'asIs',
  state_file_unresolved: 'asIs',
  state_frontmatter_missing: 'asIs',
  symlink_loop: 'asIs',
  sync_source_is_global: () => l10n.t('This is the global registry; sync from a project registry instead.'),
  task_class_role_mismatch: 'asIs',
  todo_agent_excluded: 'asIs',
  todo_archived: 'asIs',
  todo_binding_conflict: 'asIs',
  todo_binding_required: () =>
    l10n.t('On a goal with several agents a user todo must say whom it is for: one agent, or the whole goal.'),
  todo_binding_user_only: 'asIs',
  todo_bound_to_other_agent: 'asIs',
  todo_claim_actor_mismatch: () => l10n.t('An agent can claim a todo only for itself.'),
  todo_claim_actor_required: askAgent,
  todo_claim_agent_only: 'asIs',
  todo_claimed_by_other_agent: (error) =>
    l10n.t(
      '{0} is claimed by another agent; take it over only if that agent has stopped working on it.',
      todoOf(error),
    ),
  todo_completion_continuation_conflict: () =>
    l10n.t('Completing a todo takes either a follow-up todo or "no follow-up", not both.'),
  todo_completion_continuation_required: () =>
    l10n.t('Completing an agent todo needs a follow-up todo, or saying there is none.'),
  todo_defer_reason_required: () => l10n.t('Deferring a todo needs a reason.'),
  todo_defer_resume_when_required: 'asIs',
  todo_evidence_required: () => l10n.t('Completing this todo needs evidence: say what shows it is done.'),
  todo_gate_fields_need_user_gate: () => l10n.t('Gate fields apply only to a user gate.'),
  todo_id_ambiguous: 'asIs',
  todo_lease_conflict: 'asIs',
  todo_lifecycle_actor_required: askAgent,
  todo_monitor_unbounded: () =>
    l10n.t('A continuous monitor todo needs an end: an expiry, a resume condition, or watch-only.'),
  todo_not_found: 'asIs',
  todo_not_open: 'asIs',
  todo_priority_conflict: () => l10n.t("The todo's text and its priority name different priorities."),
  todo_supersede_role_mismatch: 'asIs',
  todo_supersede_self: 'asIs',
  todo_supersede_target_required: () =>
    l10n.t('Superseding a todo needs exactly one replacement: a new todo text or an existing todo.'),
  todo_terminal: (error) => l10n.t('{0} is done or superseded and cannot be edited.', todoOf(error)),
  todo_text_required: () => l10n.t('A todo needs text.'),
  turn_budget_invalid: 'asIs',
  turn_disposition_stale_input: 'asIs',
  turn_journal_invalid: 'asIs',
  turn_journal_not_found: () => l10n.t('There is no journal for that turn on this goal.'),
  unknown_slash_surface: 'asIs',
  usage: requestNotAccepted,
  validation_command_invalid: 'asIs',
  version_mismatch: 'asIs',
  version_required: () => l10n.t('The lease changed since it was read; reload and try again.'),
  write_scope_conflict: 'asIs',
};

/**
 * A message with its CLI options taken out: `(--quota-compute)` asides are dropped and any other
 * `--some-option` reads "some option". The last line of defence for `'asIs'` codes whose message a
 * caller built elsewhere; the codes that name options on purpose have their own sentences above.
 */
export function withoutCliFlags(message: string): string {
  return message
    .replace(/\s*\((?:--[a-z][a-z0-9-]*(?:,\s*|\s+or\s+)?)+\)/g, '')
    .replace(
      /(^|[^\w-])--([a-z][a-z0-9-]*)/g,
      (_match, before: string, name: string) => `${before}${name.replace(/-/g, ' ')}`,
    );
}

function asWordedError(error: unknown): WordedError | undefined {
  return isLoopxError(error) ? { code: error.code, message: error.message, details: error.details } : undefined;
}

function wordingText(worded: WordedError): string {
  const wording = EDITOR_ERROR_WORDING[worded.code];
  if (wording === 'asIs') return withoutCliFlags(worded.message);
  if (typeof wording === 'function') return wording(worded);
  return wording.sentence(worded);
}

/** The sentence the editor shows for `error` (any thrown value; a LoopX refusal is worded by its code). */
export function editorErrorText(error: unknown): string {
  const worded = asWordedError(error);
  if (worded !== undefined) return wordingText(worded);
  return withoutCliFlags(error instanceof Error ? error.message : String(error));
}

/** The sentence for a refusal an operation returned as data (`ok: false`, `error_code`, `error`), not threw. */
export function editorRefusalText(
  code: string,
  message: string,
  details: Readonly<Record<string, unknown>> = {},
): string {
  const known = LOOPX_ERROR_CODES.find((candidate) => candidate === code);
  return known === undefined ? withoutCliFlags(message) : wordingText({ code: known, message, details });
}

/** Whether a command that can ask which agent should ask and retry after `error`. */
export function asksForAgent(error: unknown): boolean {
  const worded = asWordedError(error);
  if (worded === undefined) return false;
  const wording = EDITOR_ERROR_WORDING[worded.code];
  return typeof wording === 'object' && wording.action === 'askAgent';
}

/** Whether a turn command should offer "Configure Agent…" for the agent and run the turn after `error`. */
export function asksToConfigureAgent(error: unknown): boolean {
  const worded = asWordedError(error);
  if (worded === undefined) return false;
  const wording = EDITOR_ERROR_WORDING[worded.code];
  return typeof wording === 'object' && wording.action === 'configureAgent';
}
