import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_RUNTIME_ROOT_RELATIVE_TO_HOME, GLOBAL_REGISTRY_FILE_NAME } from '../../registry/locate';
import { isRecord, pyText } from '../../pyCompat';
import { expandUser, exists, loadRegistryFile, pyResolve, rawGoals, samePath, withPathMemo } from './pathCompat';

/**
 * `runtime_projection_routes` (the original's `collect_runtime_projection_route_diagnostics`, of which its status
 * keeps `healthy` only): for each registry goal, where its runs are projected. The candidate runtimes (the
 * `LOOPX_RUNTIME_ROOT` the caller names, the default `~/.codex/loopx`, the goal's source runtime; with a global
 * registry also the runtime asked about) are searched for global registries listing the goal: one naming this
 * registry as its source in another runtime is a route (`resolved`: healthy when that runtime holds the projection of
 * the latest routed run, `lagging` when not, `ready` when no run was routed yet), several are `ambiguous`, a listing
 * with another source (or an explicit target without one) is `missing`, none is `single_runtime`. `healthy`: no goal
 * missing, ambiguous or lagging; null when no goal was looked at.
 */

const GLOBAL = GLOBAL_REGISTRY_FILE_NAME;

interface Place {
  homeDir: string;
  /** `LOOPX_RUNTIME_ROOT` as the caller's environment sets it (null: unset). */
  envRuntimeRoot: string | null;
}

function resolvedSourceRegistry(goal: Record<string, unknown>, registryPath: string, place: Place): string | null {
  const value = pyText(goal['source_registry']).trim();
  if (value === '') return null;
  let p = expandUser(value, place.homeDir);
  if (!path.isAbsolute(p)) p = path.join(path.dirname(registryPath), p);
  return pyResolve(p);
}

/** `resolve_runtime_root(registry, None)`: a relative root stays relative (to the working directory). */
function runtimeRootOf(registry: Record<string, unknown>, place: Place): string {
  const value = pyText(registry['common_runtime_root']);
  if (value === '') return path.join(place.homeDir, DEFAULT_RUNTIME_ROOT_RELATIVE_TO_HOME);
  return expandUser(value, place.homeDir);
}

function candidateRoots(sourceRuntime: string, provided: readonly string[] | null, place: Place): string[] {
  const roots: string[] = [];
  if (provided === null) {
    if (place.envRuntimeRoot !== null && place.envRuntimeRoot.trim() !== '')
      roots.push(expandUser(place.envRuntimeRoot.trim(), place.homeDir));
    roots.push(path.join(place.homeDir, DEFAULT_RUNTIME_ROOT_RELATIVE_TO_HOME));
  } else {
    roots.push(...provided.map((root) => expandUser(root, place.homeDir)));
  }
  roots.push(sourceRuntime);
  const resolved: string[] = [];
  for (const root of roots) {
    const candidate = pyResolve(root);
    if (!resolved.some((existing) => samePath(candidate, existing, place.homeDir))) resolved.push(candidate);
  }
  return resolved;
}

interface Route {
  status: 'ambiguous' | 'resolved' | 'single_runtime' | 'missing';
  routeId: string;
  targetRuntime: string | null;
}

/** `json.dumps(payload, ensure_ascii=False, sort_keys=True)` of the route id's payload. */
function routeId(goalId: string, sourceRegistry: string, sourceRuntime: string, targets: readonly string[]): string {
  const str = (value: string): string => JSON.stringify(value);
  const sorted = targets.map((root) => pyResolve(root)).sort();
  const text =
    `{"goal_id": ${str(goalId)}, "source_registry": ${str(pyResolve(sourceRegistry))}, ` +
    `"source_runtime_root": ${str(pyResolve(sourceRuntime))}, "target_runtime_roots": [${sorted.map(str).join(', ')}]}`;
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
}

function resolveRoute(
  registryPath: string,
  goalId: string,
  sourceRuntimeRoot: string,
  provided: readonly string[] | null,
  place: Place,
): Route {
  const sourceRegistry = pyResolve(expandUser(registryPath, place.homeDir));
  const sourceRuntime = pyResolve(expandUser(sourceRuntimeRoot, place.homeDir));
  const roots = candidateRoots(sourceRuntime, provided, place);
  const envRoot = place.envRuntimeRoot?.trim() ?? '';
  const explicit =
    provided !== null
      ? provided.map((root) => expandUser(root, place.homeDir))
      : envRoot !== ''
        ? [expandUser(envRoot, place.homeDir)]
        : [];
  const matches: string[] = [];
  const conflicts: string[] = [];
  const available: string[] = [];
  for (const root of roots) {
    const candidate = path.join(root, GLOBAL);
    if (!exists(candidate)) continue;
    available.push(root);
    const target = loadRegistryFile(candidate);
    if (target === null) continue;
    for (const goal of rawGoals(target)) {
      if (pyText(goal['id']) !== goalId) continue;
      const declared = resolvedSourceRegistry(goal, candidate, place);
      if (declared !== null && samePath(declared, sourceRegistry, place.homeDir)) matches.push(root);
      else conflicts.push(root);
    }
  }
  const unique: string[] = [];
  for (const root of matches) if (!unique.some((kept) => samePath(root, kept, place.homeDir))) unique.push(root);
  const external = unique.filter((root) => !samePath(root, sourceRuntime, place.homeDir));
  const effective = external.length > 0 ? external : unique;
  let targets = effective;
  let status: Route['status'];
  let targetRuntime: string | null = null;
  if (effective.length > 1) status = 'ambiguous';
  else if (effective.length === 1) {
    targetRuntime = effective[0] as string;
    status = samePath(targetRuntime, sourceRuntime, place.homeDir) ? 'single_runtime' : 'resolved';
  } else if (samePath(sourceRegistry, path.join(sourceRuntime, GLOBAL), place.homeDir)) {
    status = 'single_runtime';
    targets = [sourceRuntime];
  } else {
    const externalTargets = available.filter((root) => !samePath(root, sourceRuntime, place.homeDir));
    const explicitExternal = externalTargets.filter((root) => explicit.some((e) => samePath(root, e, place.homeDir)));
    const conflictTargets = conflicts.filter((root) => !samePath(root, sourceRuntime, place.homeDir));
    const missing = explicitExternal.length > 0 ? explicitExternal : conflictTargets;
    if (missing.length > 0) {
      status = 'missing';
      targets = missing;
    } else {
      status = 'single_runtime';
      targets = [sourceRuntime];
    }
  }
  return { status, routeId: routeId(goalId, sourceRegistry, sourceRuntime, targets), targetRuntime };
}

/** `load_index` rows in file order: duplicates (same time and artifact paths) merged into the first one's place. */
function indexRecords(file: string): Record<string, unknown>[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const records: Record<string, unknown>[] = [];
  const positions = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let item: unknown;
    try {
      item = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isRecord(item)) continue;
    const key = JSON.stringify([
      pyText(item['generated_at']),
      pyText(item['json_path']),
      pyText(item['markdown_path']),
    ]);
    const at = positions.get(key);
    if (at !== undefined) Object.assign(records[at] as Record<string, unknown>, item);
    else {
      positions.set(key, records.length);
      records.push({ ...item });
    }
  }
  return records;
}

function goalIndex(runtimeRoot: string, goalId: string): string {
  return path.join(runtimeRoot, 'goals', goalId, 'runs', 'index.jsonl');
}

function routedStatus(route: Route, sourceRuntime: string, goalId: string): string {
  if (route.status !== 'resolved') return route.status;
  const rows = indexRecords(goalIndex(sourceRuntime, goalId));
  let source: Record<string, unknown> | null = null;
  for (let i = rows.length - 1; i >= 0; i--) {
    const marker = (rows[i] as Record<string, unknown>)['runtime_projection_route'];
    if (isRecord(marker) && marker['route_id'] === route.routeId && marker['projection_enabled'] !== false) {
      source = rows[i] as Record<string, unknown>;
      break;
    }
  }
  if (source === null) return 'ready';
  const marker = source['runtime_projection_route'] as Record<string, unknown>;
  const field = pyText(marker['projection_marker_field']).trim() || 'shared_runtime_projection';
  const target = route.targetRuntime;
  const current =
    target !== null &&
    indexRecords(goalIndex(target, goalId)).some((row) => {
      const projected = row[field];
      return (
        isRecord(projected) &&
        projected['runtime_projection_route_id'] === route.routeId &&
        JSON.stringify(projected['source_generated_at']) === JSON.stringify(source['generated_at'])
      );
    });
  return current ? 'healthy' : 'lagging';
}

export function runtimeProjectionRoutes(input: {
  registryPath: string;
  runtimeRoot: string;
  registry: Record<string, unknown>;
  goalId: string | null;
  homeDir: string;
  envRuntimeRoot: string | null;
}): { healthy: boolean | null } {
  return withPathMemo(() => routesHealth(input));
}

function routesHealth(input: Parameters<typeof runtimeProjectionRoutes>[0]): { healthy: boolean | null } {
  const place: Place = { homeDir: input.homeDir, envRuntimeRoot: input.envRuntimeRoot };
  const isGlobal =
    input.registry['registry_role'] === 'global-local' ||
    samePath(input.registryPath, path.join(input.runtimeRoot, GLOBAL), place.homeDir);
  const routes: { source: string; runtime: string; goalId: string; error: string | null }[] = [];
  for (const goal of rawGoals(input.registry)) {
    const goalId = pyText(goal['id']);
    if (goalId === '' || (input.goalId !== null && goalId !== input.goalId)) continue;
    const source = isGlobal
      ? resolvedSourceRegistry(goal, input.registryPath, place)
      : pyResolve(expandUser(input.registryPath, place.homeDir));
    if (source === null) continue;
    let runtime = input.runtimeRoot;
    let error: string | null = null;
    if (exists(source)) {
      const payload = loadRegistryFile(source);
      if (payload === null) error = 'source_registry_unreadable';
      else runtime = runtimeRootOf(payload, place);
    } else error = 'source_registry_missing';
    if (!routes.some((r) => r.source === source && r.runtime === runtime && r.goalId === goalId && r.error === error))
      routes.push({ source, runtime, goalId, error });
  }
  const statuses: string[] = [];
  for (const route of routes) {
    if (route.error !== null) {
      statuses.push('missing');
      continue;
    }
    const provided = isGlobal ? [input.runtimeRoot, ...candidateRoots(route.runtime, null, place)] : null;
    const resolved = resolveRoute(route.source, route.goalId, route.runtime, provided, place);
    statuses.push(routedStatus(resolved, route.runtime, route.goalId));
  }
  if (statuses.length === 0) return { healthy: null };
  return { healthy: !statuses.some((s) => s === 'missing' || s === 'ambiguous' || s === 'lagging') };
}
