import * as path from 'node:path';
import { LoopxError } from '../errors';

/**
 * The global merge (docs/privacy.md): a pure function from the current global registry and the goals
 * (and project records) being synced to the new global registry.
 */

/** The fields that say where a goal lives; changing one means another project claims the id. */
export const ROUTE_FIELDS = ['source_registry', 'repo', 'state_file'] as const;
export type RouteField = (typeof ROUTE_FIELDS)[number];

/** Operator-facing attention fields, carried over when the incoming goal leaves them empty. */
export const ATTENTION_FIELDS = [
  'waiting_on',
  'attention_status',
  'operator_question',
  'recommended_action',
  'next_handoff_condition',
] as const;

export type GoalSyncAction = 'added' | 'updated' | 'replaced-route';

export interface GoalSyncOutcome {
  goal_id: string;
  action: GoalSyncAction;
  /** Route fields that changed (only for `replaced-route`). */
  route_changes: RouteField[];
  /** Attention fields copied from the previous global entry. */
  attention_carried: string[];
}

export interface ProjectSyncOutcome {
  project_id: string;
  action: 'added' | 'updated';
}

export interface GlobalMergeOptions {
  allowRouteReplacement: boolean;
  runtimeRoot: string;
  updatedAt: string;
}

export interface GlobalMergeResult {
  registry: Record<string, unknown>;
  goals: GoalSyncOutcome[];
  projects: ProjectSyncOutcome[];
  /** True when at least one route was replaced: the caller backs up the old file first. */
  routeReplaced: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/** Route values compare as normalized paths, so `s.md` and `./s.md` are the same route. */
function routeValue(value: unknown): string {
  if (isEmpty(value)) return '';
  return typeof value === 'string' ? path.normalize(value.trim()) : JSON.stringify(value);
}

function changedRouteFields(existing: Record<string, unknown>, incoming: Record<string, unknown>): RouteField[] {
  return ROUTE_FIELDS.filter(
    (field) =>
      !isEmpty(existing[field]) &&
      !isEmpty(incoming[field]) &&
      routeValue(existing[field]) !== routeValue(incoming[field]),
  );
}

export function routeCollisionMessage(goalId: string, fields: readonly RouteField[]): string {
  return (
    `global route collision for goal_id ${goalId}: ${fields.join(', ')} would change. ` +
    'Another project already owns this goal id in the global registry. Rename the goal in this project, retire the old global entry, ' +
    'or rerun with --allow-route-replacement to replace it (the global registry is backed up first).'
  );
}

/**
 * Merges `incomingGoals` (already projected) and `incomingProjects` into a deep copy of `current`.
 * Goals not being synced keep their place; synced goals are appended at the end in the given
 * order. A route change throws `global_route_collision` unless replacement is allowed.
 */
export function mergeGlobalRegistry(
  current: Record<string, unknown>,
  incomingGoals: readonly Record<string, unknown>[],
  incomingProjects: readonly Record<string, unknown>[],
  options: GlobalMergeOptions,
): GlobalMergeResult {
  const base = structuredClone(current);
  const existingGoals: unknown[] = Array.isArray(base['goals']) ? base['goals'] : [];
  const syncedIds = new Set(incomingGoals.map((goal) => String(goal['id'])));
  const previousById = new Map<string, Record<string, unknown>>();
  for (const entry of existingGoals) {
    if (isRecord(entry) && !isEmpty(entry['id']) && !previousById.has(String(entry['id'])))
      previousById.set(String(entry['id']), entry);
  }

  const collisions: { goalId: string; fields: RouteField[] }[] = [];
  for (const goal of incomingGoals) {
    const goalId = String(goal['id']);
    for (const entry of existingGoals) {
      if (!isRecord(entry) || String(entry['id']) !== goalId) continue;
      const fields = changedRouteFields(entry, goal);
      if (fields.length > 0) collisions.push({ goalId, fields });
    }
  }
  const firstCollision = collisions[0];
  if (firstCollision !== undefined && !options.allowRouteReplacement) {
    throw new LoopxError(
      'global_route_collision',
      routeCollisionMessage(firstCollision.goalId, firstCollision.fields),
      {
        collisions: collisions.map((collision) => ({ goal_id: collision.goalId, fields: collision.fields })),
      },
    );
  }

  const outcomes: GoalSyncOutcome[] = [];
  const mergedGoals = existingGoals.filter((entry) => !(isRecord(entry) && syncedIds.has(String(entry['id']))));
  for (const goal of incomingGoals) {
    const goalId = String(goal['id']);
    const previous = previousById.get(goalId);
    const routeChanges = [
      ...new Set(
        collisions.filter((collision) => collision.goalId === goalId).flatMap((collision) => collision.fields),
      ),
    ];
    const action: GoalSyncAction =
      previous === undefined ? 'added' : routeChanges.length > 0 ? 'replaced-route' : 'updated';
    const merged = { ...goal };
    const attentionCarried: string[] = [];
    // Attention belongs to the route: carry it over only when the same goal arrives from a newly
    // recorded source, never across a route replacement (the original did).
    const sourceDiffers =
      previous !== undefined && routeValue(previous['source_registry']) !== routeValue(goal['source_registry']);
    if (
      previous !== undefined &&
      sourceDiffers &&
      action !== 'replaced-route' &&
      goal['clear_attention_override'] !== true
    ) {
      for (const field of ATTENTION_FIELDS) {
        if (isEmpty(merged[field]) && !isEmpty(previous[field])) {
          merged[field] = structuredClone(previous[field]);
          attentionCarried.push(field);
        }
      }
    }
    mergedGoals.push(merged);
    outcomes.push({
      goal_id: goalId,
      action,
      route_changes: action === 'replaced-route' ? routeChanges : [],
      attention_carried: attentionCarried,
    });
  }

  const projectOutcomes: ProjectSyncOutcome[] = [];
  const mergedProjects: unknown[] = Array.isArray(base['projects']) ? base['projects'] : [];
  for (const project of incomingProjects) {
    const projectId = project['project_id'];
    if (typeof projectId !== 'string' || projectId.trim() === '') continue;
    const index = mergedProjects.findIndex((entry) => isRecord(entry) && entry['project_id'] === projectId);
    if (index === -1) {
      mergedProjects.push(structuredClone(project));
      projectOutcomes.push({ project_id: projectId, action: 'added' });
    } else {
      mergedProjects[index] = structuredClone(project);
      projectOutcomes.push({ project_id: projectId, action: 'updated' });
    }
  }

  const registry: Record<string, unknown> = {
    schema_version: '0.1',
    ...base,
    registry_role: 'global-local',
    common_runtime_root: options.runtimeRoot,
    updated_at: options.updatedAt,
    goals: mergedGoals,
  };
  if (mergedProjects.length > 0 || Array.isArray(base['projects'])) registry['projects'] = mergedProjects;
  return {
    registry,
    goals: outcomes,
    projects: projectOutcomes,
    routeReplaced: outcomes.some((outcome) => outcome.action === 'replaced-route'),
  };
}
