import * as fs from 'node:fs';
import * as path from 'node:path';
import { GLOBAL_REGISTRY_FILE_NAME } from '../../registry/locate';
import { pyInstant, pyText } from '../../pyCompat';
import { expandUser, exists, loadRegistryFile, rawGoals, samePath } from './pathCompat';

/**
 * `global_registry` (the original's `collect_global_registry_health`): the runtime's global registry
 * (`<runtime>/registry.global.json`) checked against the registry asked about: absent (available false, ok), or its
 * findings: a goal id listed twice (high: the payload's `ok` turns false), a goal's source registry missing or changed
 * more than 5 s after its `synced_at` (stale), its state file missing or not declared (action), and global goals the
 * current registry does not list (info, the first 8 ids).
 */

export interface GlobalRegistryFinding {
  kind: string;
  severity: 'high' | 'action' | 'info';
  message: string;
  recommended_action: string;
  goal_id?: string;
  path?: string;
  goal_ids?: string[];
}

export type GlobalRegistryHealth = Record<string, unknown> & { available: boolean; ok: boolean };

function finding(
  kind: string,
  severity: GlobalRegistryFinding['severity'],
  message: string,
  recommendedAction: string,
  extra: { goal_id?: string; path?: string; goal_ids?: string[] } = {},
): GlobalRegistryFinding {
  const f: GlobalRegistryFinding = { kind, severity, message, recommended_action: recommendedAction };
  if (extra.goal_id) f.goal_id = extra.goal_id;
  if (extra.path) f.path = extra.path;
  if (extra.goal_ids && extra.goal_ids.length > 0) f.goal_ids = extra.goal_ids;
  return f;
}

/** `resolve_goal_local_path`: absolute as is, else under the goal's `repo`, else under `base`. */
function goalLocalPath(raw: unknown, goal: Record<string, unknown>, base: string, homeDir: string): string | null {
  const text = pyText(raw);
  if (text === '') return null;
  const p = expandUser(text, homeDir);
  if (path.isAbsolute(p)) return p;
  const repo = pyText(goal['repo']);
  if (repo !== '') return path.join(expandUser(repo, homeDir), p);
  return path.join(base, p);
}

export function globalRegistryHealth(input: {
  /** The registry as the payload names it. */
  registryPath: string;
  runtimeRoot: string;
  current: Record<string, unknown>;
  homeDir: string;
}): GlobalRegistryHealth {
  const globalPath = path.join(input.runtimeRoot, GLOBAL_REGISTRY_FILE_NAME);
  if (!exists(globalPath))
    return {
      available: false,
      ok: true,
      registry: globalPath,
      current_registry: input.registryPath,
      current_registry_is_global: false,
      summary: { high: 0, action: 0, info: 0, checks: 0, findings: 0 },
      findings: [],
      checks: [],
    };
  const global = loadRegistryFile(globalPath) ?? {};
  const globalGoals = rawGoals(global);
  const currentGoals = rawGoals(input.current);
  const currentIds = new Set(currentGoals.map((goal) => pyText(goal['id'])));
  const globalIds = globalGoals.map((goal) => pyText(goal['id']));
  const findings: GlobalRegistryFinding[] = [];
  const sources = new Set<string>();
  const currentIsGlobal = samePath(input.registryPath, globalPath, input.homeDir);
  const counts = new Map<string, number>();
  for (const id of globalIds) counts.set(id, (counts.get(id) ?? 0) + 1);
  for (const [id, count] of [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    if (count > 1)
      findings.push(
        finding(
          'duplicate_goal_id',
          'high',
          `global registry contains ${count} entries for \`${id}\``,
          'deduplicate the global registry before trusting multi-project routing',
          { goal_id: id },
        ),
      );
  const base = path.dirname(globalPath);
  for (const goal of globalGoals) {
    const id = pyText(goal['id']) || 'unknown-goal';
    const source = goalLocalPath(goal['source_registry'], goal, base, input.homeDir);
    const state = goalLocalPath(goal['state_file'], goal, base, input.homeDir);
    const sourceMissing = source === null || !exists(source);
    const stateMissing = state === null || !exists(state);
    const retire =
      `preview \`loopx retire-global-goal --goal-id ${id}\`; execute only ` +
      'after confirming both the source registry and active state are obsolete';
    if (source !== null) {
      sources.add(source);
      if (!exists(source)) {
        findings.push(
          finding(
            'source_registry_missing',
            'action',
            `\`${id}\` source registry is missing`,
            stateMissing ? retire : `reconnect \`${id}\` from its project`,
            { goal_id: id, path: source },
          ),
        );
      } else {
        const synced = pyInstant(goal['synced_at']);
        if (synced !== null) {
          const mtimeUs = Math.round(fs.statSync(source).mtimeMs * 1000);
          if (mtimeUs > synced.us + 5_000_000)
            findings.push(
              finding(
                'stale_source_registry',
                'action',
                `\`${id}\` source registry changed after its last global sync`,
                `run \`loopx sync-global --goal-id ${id}\` from the source project`,
                { goal_id: id, path: source },
              ),
            );
        }
      }
    }
    if (state !== null && !exists(state))
      findings.push(
        finding(
          'state_file_missing',
          'action',
          `\`${id}\` active state file is missing`,
          sourceMissing ? retire : `repair \`${id}\` state_file or reconnect the project`,
          { goal_id: id, path: state },
        ),
      );
    if (state === null)
      findings.push(
        finding(
          'state_file_not_declared',
          'action',
          `\`${id}\` does not declare a state_file`,
          `reconnect \`${id}\` with a durable active goal state file`,
          { goal_id: id },
        ),
      );
  }
  const missing = [...new Set(globalIds)].filter((id) => !currentIds.has(id)).sort();
  if (!currentIsGlobal && missing.length > 0)
    findings.push(
      finding(
        'current_registry_scope_excludes_global_goals',
        'info',
        `current registry excludes ${missing.length} global goal(s)`,
        'for multi-project dashboard/controller status, run `loopx status` ' +
          'without `--registry`, pass the global registry, or start `serve-status --global-registry`',
        { goal_ids: missing.slice(0, 8) },
      ),
    );
  const checks = [
    `global registry goals checked: ${globalGoals.length}`,
    `global source registries checked: ${sources.size}`,
  ];
  const severities = { high: 0, action: 0, info: 0 };
  for (const f of findings) severities[f.severity]++;
  return {
    available: true,
    ok: severities.high === 0,
    registry: globalPath,
    current_registry: input.registryPath,
    current_registry_is_global: currentIsGlobal,
    global_goal_count: globalGoals.length,
    current_goal_count: currentGoals.length,
    source_registry_count: sources.size,
    summary: { ...severities, checks: checks.length, findings: findings.length },
    findings,
    checks,
  };
}
