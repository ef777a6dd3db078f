import { relative, resolve, sep } from 'node:path';
import { GOALS_DIR, STATUS_CACHE_DIR } from '../core/ops/editorHost';
import type { GoalSummary } from '../core/ops/goalRows';

/**
 * Which goals a set of changed files touches, so a reload re-reads only them: a goal's state file
 * (or a temporary file renamed over it) → that goal; anything under `<runtime>/goals/<id>/` (its
 * run index, task leases, todos) → that goal; the status cache LoopX itself writes → nothing;
 * anything else (a registry file, a file no goal owns) → `'all'`, a full reload.
 */
export function goalsOfChangedFiles(files: Iterable<string>, goals: readonly GoalSummary[]): 'all' | GoalSummary[] {
  const found = new Set<GoalSummary>();
  for (const file of files) {
    const owner = goalsOfChangedFile(resolve(file), goals);
    if (owner === 'all') return 'all';
    for (const goal of owner) found.add(goal);
  }
  return [...found];
}

function goalsOfChangedFile(file: string, goals: readonly GoalSummary[]): 'all' | GoalSummary[] {
  const owners: GoalSummary[] = [];
  let ignored = false;
  for (const goal of goals) {
    if (file === resolve(goal.registryPath)) return 'all';
    if (goal.stateFile !== null && isStateFileOrItsTemp(file, resolve(goal.stateFile))) {
      owners.push(goal);
      continue;
    }
    const inRuntime = inside(resolve(goal.runtimeRoot), file);
    if (inRuntime === null) continue;
    const [top, id] = inRuntime;
    if (top === STATUS_CACHE_DIR) ignored = true;
    else if (top === GOALS_DIR && id === goal.goalId) owners.push(goal);
  }
  if (owners.length > 0) return owners;
  return ignored ? [] : 'all';
}

/**
 * The files watchers saw change since the last reload was scheduled to run, or `'all'` when
 * something asked for a full reload (a change outside the file scheme, an explicit refresh).
 * It starts empty: the first load is full anyway, and the first external change after it must be
 * a one-goal reload like every later one (starting at `'all'` made that one a full reload).
 */
export class PendingChanges {
  private files: Set<string> | 'all' = new Set();

  /** A changed file; undefined: everything. */
  add(file: string | undefined): void {
    if (file === undefined) this.files = 'all';
    else if (this.files !== 'all') this.files.add(file);
  }

  /** What was added since the last take, and starts again empty. */
  take(): Set<string> | 'all' {
    const files = this.files;
    this.files = new Set();
    return files;
  }
}

/** The state file itself, or a sibling temporary file written to be renamed over it (`.NAME.…` or `NAME.…tmp`). */
function isStateFileOrItsTemp(file: string, stateFile: string): boolean {
  if (file === stateFile) return true;
  const rest = inside(resolve(stateFile, '..'), file);
  if (rest === null || rest.length !== 1) return false;
  const name = rest[0] ?? '';
  const base = stateFile.slice(stateFile.lastIndexOf(sep) + 1);
  return name.startsWith(`.${base}.`) || (name.startsWith(`${base}.`) && name.endsWith('tmp'));
}

/** The path segments of `file` below `dir`, or null when it is not below it. */
function inside(dir: string, file: string): string[] | null {
  const rel = relative(dir, file);
  if (rel === '' || rel.startsWith('..') || resolve(dir, rel) !== file || rel.includes(`..${sep}`)) return null;
  return rel.split(sep);
}
