import { collapseWhitespace } from './text';

/**
 * The task class the original reads for a todo (loopx/control_plane/todos/contract.py `normalize_todo_task_class`):
 * a valid explicit `task_class`; else an `action_kind` of its advancement or monitor values; else its text: hard
 * monitor words (`do not … run … until`, credentials missing, …) → `continuous_monitor`, advancement verbs at the start
 * (`implement`, `fix`, `run`, …) → `advancement_task`, blocked/monitor words (`waiting … owner`, `watch`, `poll`, …) →
 * `continuous_monitor`, else `advancement_task`. Used where a status field of the original counts todos by class
 * (projection/claimedCounts.ts); the scheduler reads a todo without a class as an advancement task.
 * Python's `\b` is Unicode-aware, JavaScript's ASCII: the two differ only beside non-ASCII letters.
 */

const TASK_CLASSES = new Set(['advancement_task', 'continuous_monitor', 'user_gate', 'user_action', 'blocker']);
const ACTION_KIND = /^[a-z][a-z0-9_-]{0,63}$/;
const ADVANCEMENT_KINDS = new Set([
  'advance',
  'analyze',
  'benchmark_run',
  'codex_run',
  'compact_blocker_writeback',
  'compare',
  'execute',
  'fix',
  'implement',
  'rebuild',
  'rebuild_score',
  'repair',
  'run',
  'run_eval',
  'test',
  'validate',
  'writeback',
]);
const MONITOR_KINDS = new Set(['external_evidence', 'monitor', 'observe', 'poll', 'watch']);

const HARD_MONITOR = [
  /\bdo not\b.*\b(?:launch|run|execute|start)\b.*\buntil\b/i,
  /\b(?:only|just)\b.*\b(?:after|when|once)\b.*\b(?:owner|user|credential|approval|prerequisite|evidence)\b/i,
  /\b(?:credential|gcp|gcs|gcp_project|gcp_sa_key|gs:\/\/)\b.*\b(?:missing|required|provide|proof|prerequisite|gate|gated)\b/i,
  /\b(?:readiness|proof)\b.*\bbefore any formal\b.*\brun\b/i,
  /\bremaining formal\b.*\bpath\b/i,
  /\b(?:route|input)\b.*\babsent\b/i,
  /\b0\b.*\b(?:candidate|candidates)\b/i,
];
const ADVANCEMENT_OVERRIDE = [
  /(?:^|[:：]\s*)(?:implement|add|make|fix|build|wire|define|compare|run|execute|test|validate|rebuild|repair|archive|publish|merge|write|attribute|collect|aggregate|generate|produce|materialize|rerun|repeat|eval|evaluate|score)\b/i,
  /\b(?:implementation slice|validation-backed patch|smoke fixture|regression suite|readiness scan|source preflight|setup-readiness scan)\b/i,
];
const BLOCKED_MONITOR = [
  ...HARD_MONITOR,
  /\b(?:blocked|gated|waiting)\b.*\b(?:owner|user|credential|substrate|proof|prerequisite|evidence)\b/i,
];
const MONITOR = [
  /\bdependency monitor\b/i,
  /\bobservation lane\b/i,
  /(?:^|[:：]\s*)observe\b/i,
  /(?:^|[:：]\s*)poll\b/i,
  /(?:^|[:：]\s*)watch\b/i,
  /\bmonitor-only\b/i,
  ...BLOCKED_MONITOR,
];

function classForText(text: string): string {
  const compact = collapseWhitespace(text);
  const matches = (patterns: readonly RegExp[]): boolean => patterns.some((pattern) => pattern.test(compact));
  if (matches(HARD_MONITOR)) return 'continuous_monitor';
  if (matches(ADVANCEMENT_OVERRIDE)) return 'advancement_task';
  if (matches(MONITOR)) return 'continuous_monitor';
  return 'advancement_task';
}

export function todoTaskClass(todo: { task_class: string | null; action_kind?: string; text: string }): string {
  const explicit = (todo.task_class ?? '').trim().toLowerCase();
  if (TASK_CLASSES.has(explicit)) return explicit;
  const kind = (todo.action_kind ?? '').trim().toLowerCase();
  if (ACTION_KIND.test(kind)) {
    if (ADVANCEMENT_KINDS.has(kind)) return 'advancement_task';
    if (MONITOR_KINDS.has(kind)) return 'continuous_monitor';
  }
  return classForText(todo.text);
}
