import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { z } from 'zod';
import { LoopxError } from '../errors';
import { registryGoals } from '../registry/read';
import type { RunIndexRow } from '../runtime/runIndex';
import { readGoalRunIndex } from '../goal/reads';
import {
  changedLineRanges,
  RunSnapshotSchema,
  snapshotBlob,
  snapshotChanges,
  snapshotProjectRoot,
  type RunSnapshot,
  type SnapshotChange,
} from '../snapshots/gitSnapshot';
import { applyTurnRevert, planTurnRevert, type RevertFilePlan } from '../snapshots/revert';
import { goalIdArg } from './common';
import { goalOf, resolveRegistry, type ResolvedRegistry } from './goalHandle';
import { defineOperation } from './operation';

/**
 * The review queue's core (docs/review.md): every recorded turn that carries a working-tree
 * snapshot (`snapshot: {base, head}` on its run record), newest first, across goals and agents
 * (`review list`), and "Revert this turn" with its three-way check (`review revert`). Which turns a
 * person has reviewed is the editor's per-user state, never in these files.
 */

/** One turn of the queue: what the Review view shows, and what diff, revert and hover need. */
export interface ReviewTurn {
  /** Stable id of the turn's record: `<goal>/<generated_at>/<turn_instance_id>`. */
  key: string;
  goal_id: string;
  agent_id: string | null;
  todo_id: string | null;
  turn_instance_id: string | null;
  generated_at: string;
  classification: string;
  /** The agent's own classification, when it gave one. */
  host_classification: string | null;
  summary: string | null;
  /** The validator's verdict (`passed`, `failed`, …), null when the record has none. */
  validation: string | null;
  /** A gate the turn raised (a question for a person). */
  gate_todo_id: string | null;
  /** What the turn cost, when its agent reported it. */
  cost_usd: number | null;
  tokens: number | null;
  duration_ms: number | null;
  /** The project the snapshots are of. */
  project_root: string;
  snapshot: { base: string; head: string };
  changed: SnapshotChange[];
  /** The record's evidence: its `.md` and `.json` (absolute). */
  markdown_path: string | null;
  json_path: string | null;
}

export interface ReviewListResult {
  ok: true;
  turns: ReviewTurn[];
  /** Goals whose run index could not be read (named, so the queue is never silently short). */
  unreadable: { goal_id: string; reason: string }[];
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}
function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
function field(row: unknown, key: string): unknown {
  return row !== null && typeof row === 'object' ? (row as Record<string, unknown>)[key] : undefined;
}

/** The record's cost, tokens and minutes (a material run's `usage`, a failed attempt's `failed_turn_usage`). */
function usageOf(record: Record<string, unknown>): { cost: number | null; tokens: number | null; ms: number | null } {
  const usage = field(record, 'usage') ?? field(record, 'failed_turn_usage');
  const input = num(field(usage, 'input_tokens'));
  const output = num(field(usage, 'output_tokens'));
  return {
    cost: num(field(usage, 'cost_usd')),
    tokens: input === null && output === null ? null : (input ?? 0) + (output ?? 0),
    ms: num(field(usage, 'duration_ms')) ?? num(field(record, 'duration_ms')),
  };
}

async function readRecord(file: string | null): Promise<Record<string, unknown>> {
  if (file === null) return {};
  try {
    const parsed: unknown = JSON.parse(await fs.readFile(file, 'utf8'));
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Runs `work` over `items` with at most `limit` at once, keeping the order. */
async function mapBounded<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export function reviewTurnKey(goalId: string, generatedAt: string, turnInstanceId: string | null): string {
  return `${goalId}/${generatedAt}/${turnInstanceId ?? ''}`;
}

async function turnOf(
  registry: ResolvedRegistry,
  goalId: string,
  projectRoot: string,
  row: RunIndexRow,
  snapshot: RunSnapshot,
): Promise<ReviewTurn> {
  const resolve = (p: unknown): string | null =>
    typeof p === 'string' && p !== '' ? path.resolve(registry.projectRoot, p) : null;
  const jsonPath = resolve(row.json_path);
  const record = await readRecord(jsonPath);
  const usage = usageOf(record);
  const generatedAt = row.generated_at ?? '';
  const turnId = text(field(row, 'turn_instance_id'));
  return {
    key: reviewTurnKey(goalId, generatedAt, turnId),
    goal_id: goalId,
    agent_id: text(row.agent_id),
    todo_id: text(row.todo_id),
    turn_instance_id: turnId,
    generated_at: generatedAt,
    classification: row.classification ?? '',
    host_classification: text(record['host_classification']),
    summary: text(record['summary']) ?? text(record['health_check']),
    validation: text(field(record['validation'], 'status')),
    gate_todo_id: text(record['gate_todo_id']),
    cost_usd: usage.cost,
    tokens: usage.tokens,
    duration_ms: usage.ms,
    project_root: projectRoot,
    snapshot: { base: snapshot.base, head: snapshot.head },
    changed: snapshot.changed ?? [],
    markdown_path: resolve(row.markdown_path),
    json_path: jsonPath,
  };
}

/** Every turn with a snapshot, newest first (of one goal, or of every goal of the registry). */
export async function listReviewTurns(
  registry: ResolvedRegistry,
  options: { goalId?: string | undefined; limit: number },
): Promise<ReviewListResult> {
  const goalIds =
    options.goalId !== undefined ? [options.goalId] : registryGoals(registry.document).map((goal) => goal.id);
  const found: { goalId: string; projectRoot: string; row: RunIndexRow; snapshot: RunSnapshot }[] = [];
  const unreadable: ReviewListResult['unreadable'] = [];
  for (const goalId of goalIds) {
    const goal = goalOf(registry, goalId);
    const projectRoot = snapshotProjectRoot(goal.rawEntry, registry.homeDir, registry.projectRoot);
    const read = await readGoalRunIndex(registry.runtimeRoot, goalId, {
      projectRoot: registry.projectRoot,
      artifactChecks: 0,
    });
    if (read.unreadable !== undefined) unreadable.push({ goal_id: goalId, reason: read.unreadable });
    for (const row of read.rows) {
      const parsed = RunSnapshotSchema.safeParse(field(row, 'snapshot'));
      if (parsed.success) found.push({ goalId, projectRoot, row, snapshot: parsed.data });
    }
  }
  found.sort((a, b) => (b.row.generated_at ?? '').localeCompare(a.row.generated_at ?? ''));
  const kept = found.slice(0, options.limit);
  const turns = await mapBounded(kept, 16, (f) => turnOf(registry, f.goalId, f.projectRoot, f.row, f.snapshot));
  return { ok: true, turns, unreadable };
}

/** `review list`: the turns a person can review (diff, revert), newest first. */
export const reviewList = defineOperation({
  key: 'reviewList',
  args: z.strictObject({
    goalId: goalIdArg('only this goal (default: every goal of the registry)').optional(),
    limit: z
      .number()
      .int()
      .min(1)
      .max(10000)
      .default(1000)
      .describe('a whole number from 1 to 10000: how many of the newest turns to list'),
  }),
  run: async (args, env): Promise<ReviewListResult> =>
    listReviewTurns(await resolveRegistry(env), { goalId: args.goalId, limit: args.limit }),
});

/** The turn a key names, or `review_turn_not_found`. */
export async function findReviewTurn(registry: ResolvedRegistry, goalId: string, key: string): Promise<ReviewTurn> {
  const list = await listReviewTurns(registry, { goalId, limit: 10000 });
  const turn = list.turns.find(
    (t) => t.key === key || t.turn_instance_id === key || t.generated_at === key || t.key === `${goalId}/${key}`,
  );
  if (turn === undefined)
    throw new LoopxError(
      'review_turn_not_found',
      `goal '${goalId}' has no recorded turn with a snapshot named "${key}"; list them with: loopx review list --goal-id ${goalId}`,
      { goal_id: goalId, turn: key },
    );
  return turn;
}

export interface ReviewRevertResult {
  ok: boolean;
  execute: boolean;
  reverted: boolean;
  goal_id: string;
  turn: string;
  files: RevertFilePlan[];
  conflicts: number;
  message: string;
}

/**
 * `review revert`: puts a turn's files (all, or one) back to the turn's base, only where they still
 * hold the turn's head; any file changed since refuses the whole revert and nothing is written.
 */
export const reviewRevert = defineOperation({
  key: 'reviewRevert',
  args: z.strictObject({
    goalId: goalIdArg('the goal whose turn to revert'),
    turn: z
      .string()
      .min(1)
      .meta({ placeholder: 'turn' })
      .describe("the turn: its key, turn instance id or record's generated_at (from review list)"),
    path: z
      .string()
      .min(1)
      .optional()
      .describe('only this project-relative file (default: every file the turn changed)'),
    execute: z.boolean().default(false).describe('write the files (default: preview only)'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<ReviewRevertResult> => {
    const registry = await resolveRegistry(env);
    const turn = await findReviewTurn(registry, args.goalId, args.turn);
    // The full list from git (a record keeps at most 500 names).
    const all = await snapshotChanges(turn.project_root, turn.snapshot.base, turn.snapshot.head, ['.loopx']);
    const changes = args.path === undefined ? all : all.filter((c) => c.path === args.path);
    if (args.path !== undefined && changes.length === 0)
      throw new LoopxError(
        'review_turn_not_found',
        `turn ${turn.key} did not change "${args.path}"; nothing was reverted`,
        { goal_id: args.goalId, path: args.path },
      );
    const plan = await planTurnRevert(turn.project_root, turn.snapshot, changes);
    const base = { goal_id: args.goalId, turn: turn.key, files: plan.files, conflicts: plan.conflicts };
    if (plan.conflicts > 0)
      return {
        ok: false,
        execute: args.execute,
        reverted: false,
        ...base,
        message: `${plan.conflicts} file(s) changed after the turn; nothing was reverted (review them, or revert file by file)`,
      };
    if (!args.execute)
      return { ok: true, execute: false, reverted: false, ...base, message: 'preview: run again with --execute' };
    await applyTurnRevert(turn.project_root, turn.snapshot, plan);
    return { ok: true, execute: true, reverted: true, ...base, message: `reverted ${plan.files.length} file(s)` };
  },
});

/** A file's bytes in one of a turn's snapshots (the Review view's diff editor), null when absent there. */
export function reviewSnapshotBlob(projectRoot: string, commit: string, relativePath: string): Promise<Buffer | null> {
  return snapshotBlob(projectRoot, commit, relativePath);
}

/** The line ranges of a file a turn's head holds as the turn changed them (the hover). */
export function reviewChangedLines(
  turn: Pick<ReviewTurn, 'project_root' | 'snapshot'>,
  relativePath: string,
): Promise<Array<{ start: number; count: number }>> {
  return changedLineRanges(turn.project_root, turn.snapshot.base, turn.snapshot.head, relativePath);
}

/** Markdown of the queue (the CLI's rendering). */
export function reviewListMarkdown(result: ReviewListResult): string {
  if (result.turns.length === 0) return 'No recorded turn with a snapshot (turns in a git repository get one).\n';
  const lines = [`# Review queue: ${result.turns.length} turn(s)`, ''];
  for (const t of result.turns) {
    lines.push(
      `- ${t.generated_at} · ${t.goal_id} · ${t.agent_id ?? '?'} · ${t.todo_id ?? '(no todo)'} · ${t.classification}` +
        `${t.validation === null ? '' : ` · validation ${t.validation}`}${t.cost_usd === null ? '' : ` · $${t.cost_usd.toFixed(2)}`}` +
        ` · ${t.changed.length} file(s) · turn ${t.turn_instance_id ?? t.key}`,
    );
    for (const c of t.changed.slice(0, 20)) lines.push(`  - ${c.status} ${c.path}`);
  }
  for (const u of result.unreadable) lines.push('', `Could not read goal ${u.goal_id}: ${u.reason}`);
  return `${lines.join('\n')}\n`;
}
