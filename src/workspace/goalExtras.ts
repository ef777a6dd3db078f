import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import type { GoalStatusItem } from '../core/status/goalStatus';
import type { GoalSummary } from '../core/ops/goalRows';
import type { RunIndexEntry } from '../core/runtime/runIndex';
import type { RecentRunRow } from '../core/goal/recentRuns';
import { RECENT_RUNS_KEPT, recentRunRows } from '../core/ops/editorHost';

/**
 * What the editor shows beside the status read model, computed from the same parsed files:
 * a goal's recent runs (with what each spent and its Markdown evidence), each agent's claims and
 * last turn, and which goals a reload changed (so the tree refreshes those nodes only). No VS Code
 * here, so it is unit-tested directly.
 */

/** How many runs the "Recent runs" group lists. */
export const RECENT_RUNS = RECENT_RUNS_KEPT;

/** A time-active hard task lease on a todo, as the Goals tree shows it. */
export interface TodoLease {
  owner: string;
  expires_at: string;
  version: number;
}

/**
 * The tree's words for a lease: a short description part (`🔒 agent-b until 12:45`, local time of
 * day, the date too when it is not today) and a tooltip line with the exact instant and version.
 */
export function leaseLabel(lease: TodoLease, now: Date): { description: string; tooltip: string; until: string } {
  const expires = new Date(lease.expires_at);
  const valid = !Number.isNaN(expires.getTime());
  const pad = (n: number) => String(n).padStart(2, '0');
  const time = valid ? `${pad(expires.getHours())}:${pad(expires.getMinutes())}` : '?';
  const sameDay = valid && expires.toDateString() === now.toDateString();
  const when = !valid
    ? l10n.t('an unknown time')
    : sameDay
      ? time
      : `${expires.getFullYear()}-${pad(expires.getMonth() + 1)}-${pad(expires.getDate())} ${time}`;
  return {
    description: `🔒 ${l10n.t('{0} until {1}', lease.owner, when)}`,
    tooltip: l10n.t(
      'Leased to {0} until {1} (lease version {2}); only the holder may complete it.',
      lease.owner,
      lease.expires_at || l10n.t('an unknown time'),
      lease.version,
    ),
    until: when,
  };
}

export interface RecentRun {
  generated_at: string | null;
  classification: string | null;
  agent_id: string | null;
  todo_id: string | null;
  recommended_action: string | null;
  /** Slots its turn spent (null: no spend record for this turn). */
  spent_slots: number | null;
  cost_usd: number | null;
  tokens: number | null;
  /**
   * The run's Markdown record, absolute, or null when it lies outside the goal's project and runtime
   * root. Not checked for existence here (that costs a stat per run at every fill, for a group most
   * people never expand): `withExistingEvidence` checks it when the runs are shown.
   */
  markdown_file: string | null;
}

/** A folder as a prefix: resolved once, so each file is checked with a string comparison. */
function folderPrefix(root: string): string {
  const resolved = path.resolve(root);
  return caseFold(resolved.endsWith(path.sep) ? resolved : resolved + path.sep);
}

/** Windows paths compare without case, as `path.relative` compares them there. */
const caseFold = (p: string): string => (process.platform === 'win32' ? p.toLowerCase() : p);

/**
 * A row's Markdown path as a file the editor may open: relative paths are the project's; a path
 * that leaves both the project and the runtime root (an index written by hand or tampered with) is
 * not offered. `prefixes` are the two roots as `folderPrefix` gives them.
 */
function markdownCandidate(given: unknown, projectRoot: string, prefixes: readonly string[]): string | null {
  if (typeof given !== 'string' || given === '') return null;
  const file = path.isAbsolute(given) ? path.normalize(given) : path.resolve(projectRoot, given);
  const folded = caseFold(file);
  return prefixes.some((prefix) => folded.startsWith(prefix)) ? file : null;
}

/** The runs as the Recent runs group offers them: a Markdown record removed since is not offered. */
export function withExistingEvidence(
  runs: readonly RecentRun[],
  exists: (file: string) => boolean = fs.existsSync,
): RecentRun[] {
  return runs.map((run) =>
    run.markdown_file === null || exists(run.markdown_file) ? run : { ...run, markdown_file: null },
  );
}

/** The newest runs of a goal (rows newest first), bookkeeping rows left out, each with its turn's spend. */
export function recentRunsFrom(
  rows: readonly RunIndexEntry[],
  goal: Pick<GoalSummary, 'projectRoot' | 'runtimeRoot'>,
  limit: number = RECENT_RUNS,
): RecentRun[] {
  return recentRunsOf(recentRunRows(rows, limit), goal);
}

/**
 * The Recent runs group from the rows kept with the run index's digest (the status cache); whether
 * each Markdown record still exists is checked when they are shown (`withExistingEvidence`).
 */
export function recentRunsOf(
  kept: readonly RecentRunRow[],
  goal: Pick<GoalSummary, 'projectRoot' | 'runtimeRoot'>,
): RecentRun[] {
  const prefixes = [folderPrefix(goal.projectRoot), folderPrefix(goal.runtimeRoot)];
  return kept.map(({ markdown_path, ...run }) => ({
    ...run,
    markdown_file: markdownCandidate(markdown_path, goal.projectRoot, prefixes),
  }));
}

export interface AgentClaim {
  goalId: string;
  registryPath: string;
  todoId: string;
  title: string;
}

export interface AgentDetails {
  agentId: string;
  goals: { goalId: string; displayName: string; registryPath: string }[];
  /** Open agent todos claimed by this agent, across goals. */
  claims: AgentClaim[];
  /** Its newest run across goals. */
  lastTurn: (RecentRun & { goalId: string }) | null;
  /** The executor preset of its profile per goal (`demo`, `claude-code`…), or why it could not be read. */
  executors: string[];
}

export interface GoalFacts {
  goal: GoalSummary;
  status: GoalStatusItem | undefined;
  runs: readonly RecentRun[];
  /** Executor label per agent id of this goal. */
  executors: ReadonlyMap<string, string>;
}

/** Per agent of the workspace's goals: goals, claims, last turn and executor, sorted by agent id. */
export function agentDetailsOf(facts: readonly GoalFacts[]): AgentDetails[] {
  const agents = new Map<string, AgentDetails>();
  const entry = (agentId: string): AgentDetails => {
    let found = agents.get(agentId);
    if (found === undefined) {
      found = { agentId, goals: [], claims: [], lastTurn: null, executors: [] };
      agents.set(agentId, found);
    }
    return found;
  };
  for (const { goal, status, runs, executors } of facts) {
    for (const agentId of goal.agents) {
      const details = entry(agentId);
      details.goals.push({ goalId: goal.goalId, displayName: goal.displayName, registryPath: goal.registryPath });
      const executor = executors.get(agentId) ?? 'no executor configured';
      if (!details.executors.includes(executor)) details.executors.push(executor);
    }
    for (const todo of status?.agent_todos?.items ?? []) {
      if (todo.claimed_by === null || todo.done) continue;
      entry(todo.claimed_by).claims.push({
        goalId: goal.goalId,
        registryPath: goal.registryPath,
        todoId: todo.todo_id,
        title: todo.title,
      });
    }
    for (const run of runs) {
      if (run.agent_id === null || !agents.has(run.agent_id)) continue;
      const details = entry(run.agent_id);
      if (details.lastTurn === null || (run.generated_at ?? '') > (details.lastTurn.generated_at ?? ''))
        details.lastTurn = { ...run, goalId: goal.goalId };
    }
  }
  return [...agents.values()].sort((a, b) => a.agentId.localeCompare(b.agentId));
}

/**
 * A digest of a goal's facts as JSON, so a comparison keeps no second copy of every status item as
 * text.
 */
export function factsFingerprint(facts: unknown): string {
  return createHash('sha1')
    .update(JSON.stringify(facts) ?? 'undefined')
    .digest('base64');
}

/**
 * What the tree shows of a goal, as the model keeps it to tell a change: its small facts as text,
 * its large ones (status item, quota, runs) by reference, and their digest, worked out only when a
 * comparison needs it. The live model hands an unchanged goal's objects back as they were, so most
 * comparisons are by reference; a goal read for the first time is changed without digesting either
 * side (the first fill of M digested 100 status items for nothing).
 */
export class GoalFactsSeen {
  private digest: string | undefined;

  constructor(
    readonly text: string,
    private readonly objects: readonly unknown[],
  ) {}

  private digestOf(): string {
    return (this.digest ??= factsFingerprint(this.objects));
  }

  /** Whether `next` shows something this does not. */
  changedIn(next: GoalFactsSeen): boolean {
    if (this.text !== next.text || this.objects.length !== next.objects.length) return true;
    if (this.objects.every((object, i) => object === next.objects[i])) {
      next.digest ??= this.digest;
      return false;
    }
    if (this.objects.some((object, i) => (object === undefined) !== (next.objects[i] === undefined))) return true;
    return this.digestOf() !== next.digestOf();
  }
}

/**
 * Which goals a reload changed, by key: `'all'` when the list of goals or registries changed shape
 * (added, removed, reordered, a registry error), else the keys whose facts differ.
 */
export function changedGoalKeys(
  before: { shape: string; facts: ReadonlyMap<string, GoalFactsSeen> },
  after: { shape: string; facts: ReadonlyMap<string, GoalFactsSeen> },
): 'all' | string[] {
  if (before.shape !== after.shape) return 'all';
  const changed: string[] = [];
  for (const [key, facts] of after.facts) {
    const seen = before.facts.get(key);
    if (seen === undefined || seen.changedIn(facts)) changed.push(key);
  }
  return changed;
}
