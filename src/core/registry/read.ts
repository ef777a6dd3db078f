import { errorMessage, LoopxError } from '../errors';
import { jsonErrorOffset, jsonNestingExceeds, jsonTooDeep, lineColumnAt } from '../fs/jsonFile';
import { isRecord, RegistryGoalSchema, type RegistryGoal } from './schema';
import { readFileSafe, readFileSafeSync } from '../fs/safeRead';

export const REGISTRY_ROOT_NOT_OBJECT_MESSAGE = 'registry root must be a JSON object';

/**
 * Reads a registry file as its raw JSON object. A missing file reads as `{}` (no registry yet).
 * Unparsable JSON and a non-object root throw a LoopxError that names the file; the file is
 * never touched.
 */
export async function readRegistry(registryPath: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFileSafe(registryPath);
  } catch (error) {
    if (isMissingFile(error)) return {};
    throw error;
  }
  return parseRegistryText(text, registryPath);
}

/** Synchronous `readRegistry`, for callers that cannot await (tree views, quick checks). */
export function readRegistrySync(registryPath: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSafeSync(registryPath);
  } catch (error) {
    if (isMissingFile(error)) return {};
    throw error;
  }
  return parseRegistryText(text, registryPath);
}

/** Parses registry text; errors name `registryPath` (and the line and column of a syntax error). */
export function parseRegistryText(text: string, registryPath: string): Record<string, unknown> {
  const withoutBom = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (jsonNestingExceeds(withoutBom)) throw jsonTooDeep(registryPath);
  let parsed: unknown;
  try {
    parsed = JSON.parse(withoutBom);
  } catch (error) {
    const offset = jsonErrorOffset(withoutBom);
    const { line, column } = lineColumnAt(withoutBom, offset);
    const found = withoutBom[offset];
    const reason = found === undefined ? 'unexpected end of file' : `unexpected ${JSON.stringify(found)}`;
    throw new LoopxError(
      'registry_invalid_json',
      `${registryPath}:${line}:${column}: the registry is not valid JSON (${reason}). Fix the JSON by hand; LoopX left the file untouched.`,
      { file: registryPath, line, column, reason: errorMessage(error) },
    );
  }
  if (!isRecord(parsed)) {
    throw new LoopxError('registry_not_object', `${REGISTRY_ROOT_NOT_OBJECT_MESSAGE}: ${registryPath}`, {
      file: registryPath,
    });
  }
  return parsed;
}

function isMissingFile(error: unknown): boolean {
  return isRecord(error) && error['code'] === 'ENOENT';
}

/**
 * The goals a tolerant reader sees: none when `goals` is not a list; entries that are not
 * objects or have no truthy id are skipped; order and duplicates are kept. Ids read as strings.
 */
export function registryGoals(registry: unknown): RegistryGoal[] {
  if (!isRecord(registry) || !Array.isArray(registry['goals'])) return [];
  const goals: RegistryGoal[] = [];
  for (const entry of registry['goals']) {
    const parsed = RegistryGoalSchema.safeParse(entry);
    if (parsed.success) goals.push(parsed.data);
  }
  return goals;
}

/** The first goal whose id, as a string, equals `goalId` (so a stored `7` matches `"7"`). */
export function findRegistryGoal(registry: unknown, goalId: string | number): RegistryGoal | undefined {
  if (!isRecord(registry) || !Array.isArray(registry['goals'])) return undefined;
  const wanted = String(goalId);
  for (const entry of registry['goals']) {
    if (!isRecord(entry) || !idMayRead(entry['id'], wanted)) continue;
    const parsed = RegistryGoalSchema.safeParse(entry);
    if (parsed.success && parsed.data.id === wanted) return parsed.data;
  }
  return undefined;
}

/**
 * The raw entry (the object inside `registry.goals`, not a parsed copy) of the first goal with
 * this id, for writers that must keep every field they do not know.
 */
export function findRawRegistryGoal(
  registry: Record<string, unknown>,
  goalId: string | number,
): Record<string, unknown> | undefined {
  const goals = registry['goals'];
  if (!Array.isArray(goals)) return undefined;
  const wanted = String(goalId);
  for (const entry of goals) {
    // Only an entry whose id already reads as `wanted` can match; the schema then decides, as for every reader.
    if (!isRecord(entry) || !idMayRead(entry['id'], wanted)) continue;
    const parsed = RegistryGoalSchema.safeParse(entry);
    if (parsed.success && parsed.data.id === wanted) return entry;
  }
  return undefined;
}

/**
 * The raw entry of every goal id, the first entry of a repeated id (what {@link findRawRegistryGoal}
 * finds for each), in one pass: for callers that look up every goal.
 */
export function rawRegistryGoalsById(registry: Record<string, unknown>): Map<string, Record<string, unknown>> {
  const byId = new Map<string, Record<string, unknown>>();
  const goals = registry['goals'];
  if (!Array.isArray(goals)) return byId;
  for (const entry of goals) {
    if (!isRecord(entry)) continue;
    const parsed = RegistryGoalSchema.safeParse(entry);
    if (parsed.success && !byId.has(parsed.data.id)) byId.set(parsed.data.id, entry);
  }
  return byId;
}

/**
 * Each goal entry of a registry document that parses, with its parsed form, per document
 * (read-only): {@link registryGoalEntries} and {@link registryGoalsOfDocument} share one parse.
 */
const parsedByDocument = new WeakMap<object, readonly { entry: Record<string, unknown>; goal: RegistryGoal }[]>();
function parsedEntries(
  registry: Record<string, unknown>,
): readonly { entry: Record<string, unknown>; goal: RegistryGoal }[] {
  let parsed = parsedByDocument.get(registry);
  if (parsed === undefined) {
    const list: { entry: Record<string, unknown>; goal: RegistryGoal }[] = [];
    parsed = list;
    const goals = registry['goals'];
    if (Array.isArray(goals))
      for (const entry of goals) {
        if (!isRecord(entry)) continue;
        const result = RegistryGoalSchema.safeParse(entry);
        if (result.success) list.push({ entry, goal: result.data });
      }
    parsedByDocument.set(registry, parsed);
  }
  return parsed;
}

/**
 * `rawRegistryGoalsById` per registry document (read-only): long-lived readers keep the same
 * document while the registry file is unchanged, so each document is parsed for its ids once.
 */
const entriesByDocument = new WeakMap<object, ReadonlyMap<string, Record<string, unknown>>>();
export function registryGoalEntries(registry: Record<string, unknown>): ReadonlyMap<string, Record<string, unknown>> {
  let entries = entriesByDocument.get(registry);
  if (entries === undefined) {
    const byId = new Map<string, Record<string, unknown>>();
    for (const { entry, goal } of parsedEntries(registry)) if (!byId.has(goal.id)) byId.set(goal.id, entry);
    entries = byId;
    entriesByDocument.set(registry, entries);
  }
  return entries;
}

/**
 * `registryGoals` per registry document (read-only; the same array for the same document), from the
 * same parse as {@link registryGoalEntries}: status reads both for every goal.
 */
const goalsByDocument = new WeakMap<object, readonly RegistryGoal[]>();
export function registryGoalsOfDocument(registry: Record<string, unknown>): readonly RegistryGoal[] {
  let goals = goalsByDocument.get(registry);
  if (goals === undefined) {
    goals = parsedEntries(registry).map(({ goal }) => goal);
    goalsByDocument.set(registry, goals);
  }
  return goals;
}

/** Whether a stored id could read as `wanted` (the schema turns a string or number id into its string). */
function idMayRead(id: unknown, wanted: string): boolean {
  return (typeof id === 'string' || typeof id === 'number') && String(id) === wanted;
}
