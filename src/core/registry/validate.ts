import * as fs from 'node:fs';
import { z } from 'zod';
import { compactOrchestrationPolicy } from './orchestration';
import { LoopxError } from '../errors';
import { resolveRepo, resolveStateFile } from './locate';
import { readRegistry } from './read';
import { isRecord, normalizeQuota, NormalizedQuotaSchema, RegistryGoalSchema } from './schema';

/** The validator behind `loopx registry` (docs/on-disk-layout.md). */

export const CONTRACT_ERROR_DIAGNOSTIC_SCHEMA = 'loopx_contract_error_diagnostic_v0';
export const REGISTRY_FILE_MISSING_MESSAGE = 'registry file does not exist';
export const GOALS_NOT_LIST_MESSAGE = 'goals must be a list';

export const RegistryProblemCode = z.enum([
  'registry_goal_not_object',
  'registry_goal_missing_id',
  'registry_duplicate_goal_id',
  'registry_goal_missing_repo',
  'registry_goal_missing_domain',
  'registry_goal_missing_state_file',
  'registry_goal_missing_adapter_kind',
  'registry_state_file_shared',
]);
export type RegistryProblemCode = z.infer<typeof RegistryProblemCode>;

export const RegistryDiagnosticSchema = z.object({
  schema_version: z.literal(CONTRACT_ERROR_DIAGNOSTIC_SCHEMA),
  severity: z.literal('error'),
  code: RegistryProblemCode,
  message: z.string(),
  /** `goal` when exactly one goal id is attached, `goals` when several are, `global` otherwise. */
  scope: z.enum(['goal', 'goals', 'global']),
  goal_ids: z.array(z.string()),
});
export type RegistryDiagnostic = z.infer<typeof RegistryDiagnosticSchema>;

export const RegistryGoalRowSchema = z.object({
  /** `""` for an entry without an id. */
  id: z.string(),
  domain: z.string().nullable(),
  status: z.string(),
  role: z.string(),
  repo: z.string().nullable(),
  repo_exists: z.boolean(),
  /** How many entries share this entry's resolved repo (0 without a repo). */
  repo_goal_count: z.number().int(),
  state_file: z.string().nullable(),
  state_file_abs: z.string().nullable(),
  state_file_exists: z.boolean(),
  adapter_kind: z.string().nullable(),
  /** `spawn_policy` compacted (docs/agents.md#spawn-policy-and-orchestration). */
  orchestration: z.object({
    mode: z.enum(['default', 'multi_subagent']),
    spawn_allowed: z.boolean(),
    max_children: z.number().int(),
    allowed_domains: z.array(z.string()).optional(),
    explore_harness: z.object({ enabled: z.boolean(), profile: z.string().optional() }).optional(),
  }),
  quota: NormalizedQuotaSchema,
  waiting_on: z.unknown(),
  attention_status: z.unknown(),
  operator_question: z.unknown(),
  recommended_action: z.unknown(),
  next_handoff_condition: z.unknown(),
});
export type RegistryGoalRow = z.infer<typeof RegistryGoalRowSchema>;

export const RegistryValidationSchema = z.object({
  ok: z.boolean(),
  registry: z.string(),
  goal_count: z.number().int(),
  status_counts: z.record(z.string(), z.number().int()),
  problems: z.array(z.string()),
  problem_diagnostics: z.array(RegistryDiagnosticSchema),
  goals: z.array(RegistryGoalRowSchema),
});
export type RegistryValidation = z.infer<typeof RegistryValidationSchema>;

export const MissingRegistrySchema = z.object({
  ok: z.literal(false),
  registry: z.string(),
  error: z.literal(REGISTRY_FILE_MISSING_MESSAGE),
});
export type MissingRegistry = z.infer<typeof MissingRegistrySchema>;

const ATTENTION_FIELDS = [
  'waiting_on',
  'attention_status',
  'operator_question',
  'recommended_action',
  'next_handoff_condition',
] as const;

/**
 * Validates the registry file. A missing file is reported in the result; a file that is not
 * JSON, whose root is not an object, or whose non-empty `goals` is not a list, throws.
 */
export async function validateRegistryFile(
  registryPath: string,
  options: { homeDir: string },
): Promise<RegistryValidation | MissingRegistry> {
  if (!fs.existsSync(registryPath)) return { ok: false, registry: registryPath, error: REGISTRY_FILE_MISSING_MESSAGE };
  return validateRegistryDocument(await readRegistry(registryPath), { registryPath, homeDir: options.homeDir });
}

/** Validates an already-parsed registry document; entries are checked in order. */
export function validateRegistryDocument(
  registry: Record<string, unknown>,
  options: { registryPath: string; homeDir: string },
): RegistryValidation {
  const entries = goalEntries(registry['goals'], options.registryPath);
  const diagnostics: RegistryDiagnostic[] = [];
  const report = (code: RegistryProblemCode, message: string, goalIds: string[] = []): void => {
    diagnostics.push({
      schema_version: CONTRACT_ERROR_DIAGNOSTIC_SCHEMA,
      severity: 'error',
      code,
      message,
      scope: goalIds.length === 1 ? 'goal' : goalIds.length > 1 ? 'goals' : 'global',
      goal_ids: goalIds,
    });
  };

  const seenIds = new Set<string>();
  const idsByStateFile = new Map<string, string[]>();
  const goalObjects: { id: string; goal: Record<string, unknown> }[] = [];
  for (const entry of entries) {
    if (!isRecord(entry)) {
      report('registry_goal_not_object', 'non-object goal entry');
      continue;
    }
    const id = goalIdText(entry);
    goalObjects.push({ id, goal: entry });
    if (id === '') {
      report('registry_goal_missing_id', 'goal entry missing id');
    } else if (seenIds.has(id)) {
      // The original reports duplicates without attaching the id, hence global scope (kept for compatibility).
      report('registry_duplicate_goal_id', `duplicate goal id: ${id}`);
    }
    seenIds.add(id);

    const label = id === '' ? '<missing>' : id;
    const attached = id === '' ? [] : [id];
    if (!truthy(entry['repo'])) report('registry_goal_missing_repo', `${label}: missing repo`, attached);
    if (!truthy(entry['domain'])) report('registry_goal_missing_domain', `${label}: missing domain`, attached);
    if (!truthy(entry['state_file']))
      report('registry_goal_missing_state_file', `${label}: missing state_file`, attached);
    const adapter = entry['adapter'];
    if (!isRecord(adapter) || !truthy(adapter['kind']))
      report('registry_goal_missing_adapter_kind', `${label}: missing adapter.kind`, attached);

    const stateFile = resolveStateFile(entry, options.homeDir);
    if (stateFile !== null && id !== '') {
      const ids = idsByStateFile.get(stateFile);
      if (ids === undefined) idsByStateFile.set(stateFile, [id]);
      else ids.push(id);
    }
  }

  // In the order of the state files' paths, as the original reports them.
  for (const [stateFile, ids] of [...idsByStateFile].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const distinct = [...new Set(ids)].sort();
    if (distinct.length > 1)
      report(
        'registry_state_file_shared',
        `state_file shared by multiple goals: ${distinct.join(', ')} -> ${stateFile}`,
        distinct,
      );
  }

  const goals = goalRows(goalObjects, options.homeDir);
  const statusCounts: Record<string, number> = {};
  for (const row of goals) statusCounts[row.status] = (statusCounts[row.status] ?? 0) + 1;
  return {
    ok: diagnostics.length === 0,
    registry: options.registryPath,
    goal_count: goals.length,
    status_counts: statusCounts,
    problems: diagnostics.map((d) => d.message),
    problem_diagnostics: diagnostics,
    goals,
  };
}

/** `goals` as a list of entries: empty values (`null`, `{}`, `""`, `0`) count as none. */
function goalEntries(goals: unknown, registryPath: string): unknown[] {
  if (Array.isArray(goals)) return goals;
  if (!truthy(goals)) return [];
  throw new LoopxError(
    'registry_goals_not_list',
    `${GOALS_NOT_LIST_MESSAGE}: ${registryPath} has a \`goals\` that is not a JSON array; make it a list of goal objects.`,
    { file: registryPath, field: 'goals' },
  );
}

/** The entry's id the way readers see it (a non-empty string or a non-zero number), else `""`. */
function goalIdText(entry: Record<string, unknown>): string {
  const parsed = RegistryGoalSchema.shape.id.safeParse(entry['id']);
  return parsed.success ? parsed.data : '';
}

function goalRows(
  goalObjects: readonly { id: string; goal: Record<string, unknown> }[],
  homeDir: string,
): RegistryGoalRow[] {
  const repos = goalObjects.map(({ goal }) => resolveRepo(goal, homeDir));
  // Counted once: goals of one project share a repo, so a count per goal would be quadratic.
  // Only entries with an id count, as in the original (an id-less entry is no goal of the repo).
  const goalsPerRepo = new Map<string, number>();
  repos.forEach((repo, index) => {
    if (repo !== null && goalObjects[index]?.id !== '') goalsPerRepo.set(repo, (goalsPerRepo.get(repo) ?? 0) + 1);
  });
  const repoIsDirectory = new Map<string, boolean>();
  return goalObjects.map(({ id, goal }, index) => {
    const repo = repos[index] ?? null;
    const stateFileAbs = resolveStateFile(goal, homeDir);
    const adapter = goal['adapter'];
    const row: RegistryGoalRow = {
      id,
      domain: textOrNull(goal['domain']),
      status: truthyText(goal['status']) ?? 'unknown',
      role: truthyText(goal['role']) ?? 'controller',
      repo: textOrNull(goal['repo']),
      repo_exists: repo !== null && isDirectoryOnce(repo, repoIsDirectory),
      repo_goal_count: repo === null ? 0 : (goalsPerRepo.get(repo) ?? 0),
      state_file: textOrNull(goal['state_file']),
      state_file_abs: stateFileAbs,
      state_file_exists: stateFileAbs !== null && isFile(stateFileAbs),
      adapter_kind: isRecord(adapter) ? textOrNull(adapter['kind']) : null,
      orchestration: compactOrchestrationPolicy(goal['spawn_policy']),
      quota: normalizeQuota(goal),
      waiting_on: null,
      attention_status: null,
      operator_question: null,
      recommended_action: null,
      next_handoff_condition: null,
    };
    for (const field of ATTENTION_FIELDS) row[field] = goal[field] ?? null;
    return row;
  });
}

/** Python-style truthiness, which the original's "missing" checks use. */
function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isRecord(value)) return Object.keys(value).length > 0;
  return Boolean(value);
}

function truthyText(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function textOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** `isDirectory`, asked once per path per validation (goals of one project share their repo). */
function isDirectoryOnce(target: string, known: Map<string, boolean>): boolean {
  let value = known.get(target);
  if (value === undefined) {
    value = isDirectory(target);
    known.set(target, value);
  }
  return value;
}

function isDirectory(target: string): boolean {
  try {
    return fs.statSync(target).isDirectory();
  } catch {
    return false;
  }
}

function isFile(target: string): boolean {
  try {
    return fs.statSync(target).isFile();
  } catch {
    return false;
  }
}
