import * as fs from 'node:fs';
import * as path from 'node:path';
import { findLaneMarker } from './laneMarker';
import { isRecord } from './schema';

/** Where a registry path came from, in the order they are tried. */
export type RegistrySource = 'flag' | 'env' | 'lane' | 'cwd' | 'global';

export interface LocatedRegistry {
  /** Absolute path of the registry file. */
  path: string;
  source: RegistrySource;
  exists: boolean;
}

export interface LocateRegistryOptions {
  /** `--registry`, relative to `cwd`. */
  flag?: string | undefined;
  /** The environment to read `LOOPX_REGISTRY` from (never `process.env` implicitly). */
  env: NodeJS.ProcessEnv;
  cwd: string;
  homeDir: string;
  /** `--runtime-root`: where to look for the global registry fallback. */
  runtimeRootOverride?: string | undefined;
  /**
   * Whether a missing project registry may fall back to `<runtime root>/registry.global.json`.
   * Commands that create or inspect a project's own registry (bootstrap, onboard, doctor, …) pass false.
   */
  globalFallback?: boolean;
}

export const PROJECT_REGISTRY_RELATIVE_PATH = path.join('.loopx', 'registry.json');
export const GLOBAL_REGISTRY_FILE_NAME = 'registry.global.json';
export const DEFAULT_RUNTIME_ROOT_RELATIVE_TO_HOME = path.join('.codex', 'loopx');

/**
 * Finds the registry file: `--registry`, else `LOOPX_REGISTRY` (with `~` expanded), else
 * the main checkout's registry when `cwd` is in a lane worktree (docs/lanes.md), else
 * `./.loopx/registry.json`. When none was configured and that file is missing, the global
 * registry under the default (or overridden) runtime root is used if it exists.
 */
export function locateRegistry(options: LocateRegistryOptions): LocatedRegistry {
  const { cwd, homeDir } = options;
  if (nonEmpty(options.flag)) return located(path.resolve(cwd, expandHome(options.flag, homeDir)), 'flag');
  const fromEnv = options.env['LOOPX_REGISTRY'];
  if (nonEmpty(fromEnv)) return located(path.resolve(cwd, expandHome(fromEnv.trim(), homeDir)), 'env');
  // Before `./.loopx`: a lane's branch may carry a stale copy of the registry.
  const lane = findLaneMarker(cwd);
  if (lane !== null) return located(lane.registry_path, 'lane');

  const projectRegistry = located(path.resolve(cwd, PROJECT_REGISTRY_RELATIVE_PATH), 'cwd');
  if (projectRegistry.exists || options.globalFallback === false) return projectRegistry;
  const runtimeRoot = resolveRuntimeRoot({ override: options.runtimeRootOverride, homeDir, cwd });
  const globalRegistry = located(path.join(runtimeRoot, GLOBAL_REGISTRY_FILE_NAME), 'global');
  return globalRegistry.exists ? globalRegistry : projectRegistry;
}

function located(filePath: string, source: RegistrySource): LocatedRegistry {
  return { path: filePath, source, exists: fs.existsSync(filePath) };
}

/**
 * The project a registry belongs to: the registry path with symlinks resolved; if its folder is
 * named `.loopx` the project is that folder's parent, otherwise the folder itself.
 */
export function registryProjectRoot(registryPath: string): string {
  const folder = path.dirname(realpathAsFarAsExists(path.resolve(registryPath)));
  return path.basename(folder) === '.loopx' ? path.dirname(folder) : folder;
}

/** Resolves the symlinks of the longest existing prefix of `target` and keeps the rest as written. */
function realpathAsFarAsExists(target: string): string {
  try {
    return fs.realpathSync(target);
  } catch {
    const parent = path.dirname(target);
    if (parent === target) return target;
    return path.join(realpathAsFarAsExists(parent), path.basename(target));
  }
}

export interface ResolveRuntimeRootOptions {
  /** The registry file, when known: a relative runtime root is anchored to its project. */
  registryPath?: string | undefined;
  /** The registry document (raw or parsed); its `common_runtime_root` is used. */
  registry?: unknown;
  /** `--runtime-root`; wins over `common_runtime_root` when non-empty. */
  override?: string | undefined;
  homeDir: string;
  /** Anchor for a relative root when no registry path is known; left relative when omitted. */
  cwd?: string | undefined;
}

/**
 * The runtime root: the override if non-empty, else `common_runtime_root`, else
 * `~/.codex/loopx`; `~` expanded. A relative value is anchored to the registry's project root
 * whenever a registry path is known, for every command alike (the original anchored it for
 * some commands and left it relative to the current directory for others).
 */
export function resolveRuntimeRoot(options: ResolveRuntimeRootOptions): string {
  const fromRegistry = isRecord(options.registry) ? options.registry['common_runtime_root'] : undefined;
  const configured = nonEmpty(options.override) ? options.override : nonEmpty(fromRegistry) ? fromRegistry : undefined;
  if (configured === undefined) return path.join(options.homeDir, DEFAULT_RUNTIME_ROOT_RELATIVE_TO_HOME);
  const expanded = expandHome(configured.trim(), options.homeDir);
  if (path.isAbsolute(expanded)) return path.normalize(expanded);
  if (options.registryPath !== undefined) return path.join(registryProjectRoot(options.registryPath), expanded);
  return options.cwd === undefined ? path.normalize(expanded) : path.resolve(options.cwd, expanded);
}

/**
 * The absolute path of a goal's state file, or null when it has none. An empty `state_file`
 * means none; `~` is expanded; a relative path is joined to the goal's `repo` (itself
 * `~`-expanded), and cannot be resolved (null) when the goal has no absolute `repo`.
 */
export function resolveStateFile(goal: unknown, homeDir: string): string | null {
  if (!isRecord(goal)) return null;
  const stateFile = goal['state_file'];
  if (!nonEmpty(stateFile)) return null;
  const expanded = expandHome(stateFile, homeDir);
  if (path.isAbsolute(expanded)) return path.normalize(expanded);
  const repo = resolveRepo(goal, homeDir);
  return repo === null ? null : path.join(repo, expanded);
}

/** Where bootstrap puts a goal's state file, relative to its repo. */
export function defaultStateFile(goalId: string): string {
  return path.posix.join('.codex', 'goals', goalId, 'ACTIVE_GOAL_STATE.md');
}

/**
 * The state file commands read and edit: `state_file` resolved, else the conventional
 * `<repo>/.codex/goals/<id>/ACTIVE_GOAL_STATE.md` (where bootstrap puts it); null when neither
 * can be resolved.
 */
export function resolveGoalStatePath(goal: unknown, goalId: string, homeDir: string): string | null {
  const stateFile = resolveStateFile(goal, homeDir);
  if (stateFile !== null) return stateFile;
  const repo = resolveRepo(goal, homeDir);
  return repo === null ? null : path.join(repo, defaultStateFile(goalId));
}

/** The goal's `repo` with `~` expanded, or null when it is missing or not absolute. */
export function resolveRepo(goal: unknown, homeDir: string): string | null {
  if (!isRecord(goal)) return null;
  const repo = goal['repo'];
  if (!nonEmpty(repo)) return null;
  const expanded = expandHome(repo, homeDir);
  return path.isAbsolute(expanded) ? path.normalize(expanded) : null;
}

/** Expands a leading `~` (alone, or followed by a path separator) to `homeDir`. */
export function expandHome(value: string, homeDir: string): string {
  if (value === '~') return homeDir;
  if (value.startsWith('~/') || value.startsWith(`~${path.sep}`)) return path.join(homeDir, value.slice(2));
  return value;
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}
