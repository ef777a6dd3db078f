import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { PROJECT_REGISTRY_RELATIVE_PATH } from '../core/ops/editorHost';
import type { GoalSummary } from '../core/ops/goalRows';

/** A workspace folder as the registry lookup needs it: its name, its path and its own `loopx.registryPath`. */
export interface FolderSetting {
  name: string;
  path: string;
  /** `loopx.registryPath` read with this folder as the resource ('' when unset). */
  registryPath: string;
}

/** A registry the window shows, and the workspace folder it came from (none in a window without folders). */
export interface RegistrySource {
  registryPath: string;
  folder: { name: string; path: string } | undefined;
}

/**
 * The registries of a window, folder by folder: each folder's `.loopx/registry.json`, then the
 * registry its own `loopx.registryPath` names (relative to that folder). Without folders, the
 * window's setting (relative to the home folder). A registry two folders name belongs to the first.
 */
export function registrySources(
  folders: readonly FolderSetting[],
  windowSetting: string,
  home: string,
): RegistrySource[] {
  const sources: RegistrySource[] = [];
  const seen = new Set<string>();
  const add = (registryPath: string, folder: RegistrySource['folder']): void => {
    const path = resolve(registryPath);
    if (seen.has(path)) return;
    seen.add(path);
    sources.push({ registryPath: path, folder });
  };
  for (const folder of folders) {
    const owner = { name: folder.name, path: folder.path };
    add(join(folder.path, PROJECT_REGISTRY_RELATIVE_PATH), owner);
    const configured = folder.registryPath.trim();
    if (configured !== '') add(isAbsolute(configured) ? configured : join(folder.path, configured), owner);
  }
  const configured = windowSetting.trim();
  if (folders.length === 0 && configured !== '')
    add(isAbsolute(configured) ? configured : join(home, configured), undefined);
  return sources;
}

/** One workspace folder of a multi-root window and the goals of its registries, in the Goals tree. */
export interface FolderGoals {
  folder: { name: string; path: string };
  goals: GoalSummary[];
}

/**
 * The goals by workspace folder, in folder order (every folder, with or without goals), or null
 * when the window has one folder or none: then the tree lists the goals flat, as before.
 */
export function goalsByFolder(
  folders: readonly { name: string; path: string }[],
  sources: readonly RegistrySource[],
  goals: readonly GoalSummary[],
): FolderGoals[] | null {
  if (folders.length < 2) return null;
  const folderOf = new Map(sources.map((source) => [source.registryPath, source.folder?.path]));
  return folders.map((folder) => ({
    folder: { name: folder.name, path: folder.path },
    goals: goals.filter((goal) => folderOf.get(resolve(goal.registryPath)) === folder.path),
  }));
}

/** What VS Code's workspace watcher (`**\/{.loopx/**,ACTIVE_GOAL_STATE.md}` in every folder) already sees. */
function seenByWorkspaceWatcher(file: string, folders: readonly string[]): boolean {
  return folders.some((folder) => {
    const rel = relative(folder, file);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return false;
    const parts = rel.split(sep);
    return parts.includes('.loopx') || parts[parts.length - 1] === 'ACTIVE_GOAL_STATE.md';
  });
}

function isInside(dir: string, file: string): boolean {
  const rel = relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Where a watcher of its own is needed: runtime roots (recursively) and state files (their folder, by name). */
export interface WatchTargets {
  runtimeRoots: string[];
  stateFiles: { dir: string; name: string }[];
}

/**
 * The files the registries name that the workspace watcher does not see, wherever they lie: a
 * runtime root outside `.loopx/` (inside a folder, e.g. `./runtime`, or outside every folder) and
 * a state file with another name or place. Each needs a watcher of its own, or a turn written by
 * another process leaves the views on the old state.
 */
export function watchTargets(goals: readonly GoalSummary[], folders: readonly string[]): WatchTargets {
  const roots = [...new Set(goals.map((goal) => resolve(goal.runtimeRoot)))]
    .filter((root) => !seenByWorkspaceWatcher(join(root, 'x'), folders))
    .sort();
  // A root inside another watched root is seen by that one's watcher.
  const runtimeRoots = roots.filter((root) => !roots.some((other) => other !== root && isInside(other, root)));
  const stateFiles = [
    ...new Set(
      goals
        .map((goal) => (goal.stateFile === null ? null : resolve(goal.stateFile)))
        .filter((file): file is string => file !== null)
        .filter((file) => !seenByWorkspaceWatcher(file, folders))
        .filter((file) => !runtimeRoots.some((root) => isInside(root, file))),
    ),
  ]
    .sort()
    .map((file) => ({ dir: dirname(file), name: basename(file) }));
  return { runtimeRoots, stateFiles };
}
