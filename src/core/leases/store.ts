import type { GoalRef } from '../registry/goalRef';
import * as path from 'node:path';
import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { parseJsonText } from '../fs/jsonFile';
import { OwnedDir, type DirAnswer, type DirOp } from '../fs/ownedDir';
import { parseStateDocument, type StateDocument, type TodoItem } from '../state/document';
import { readStateText } from '../state/stateFile';
import { goalRuntimeDir } from '../runtime/layout';
import { HANDOFF_MODES, leaseIsActive, TaskLeaseRecord, type HandoffMode } from './rules';

/**
 * Where leases live and how they are read and written: `<runtime>/goals/<goal>/task-leases/<todo_id>.json`,
 * every change under the goal's one lease lock (`task-leases/.task-leases`), every write atomic.
 */

export const TASK_LEASES_DIR = 'task-leases';

/**
 * The lease store's one way to the disk: lease files and the lease lock are read, written and locked
 * through `leaseFileIo`, as operations on `root` (the runtime root, or the lease folder itself).
 */
function leaseFileIo<O extends DirOp>(root: string, op: O): DirAnswer<O> {
  return new OwnedDir(root).run(op);
}
const TODO_ID = /^todo_[A-Za-z0-9_-]{1,64}$/;

/**
 * Lease code takes the goal as a `Pick` of `GoalRef` (id, runtime root, state file, raw registry entry: the roster
 * and the registry's `handoff_mode` are read from it); a resolved goal or a turn's goal fits.
 */

export function leaseDir(goal: Pick<GoalRef, 'runtimeRoot' | 'goalId'>): string {
  return path.join(goalRuntimeDir(goal.runtimeRoot, goal.goalId), TASK_LEASES_DIR);
}

export function checkLeaseTodoId(todoId: string): string {
  if (!TODO_ID.test(todoId)) {
    throw new LoopxError(
      'invalid_argument',
      `a task lease needs a structured todo id (todo_ followed by 1–64 of a-z A-Z 0-9 _ -), got ${JSON.stringify(todoId.slice(0, 80))}`,
      { field: 'todo_id' },
    );
  }
  return todoId;
}

export function leasePath(goal: Pick<GoalRef, 'runtimeRoot' | 'goalId'>, todoId: string): string {
  return path.join(leaseDir(goal), `${checkLeaseTodoId(todoId)}.json`);
}

function parseLease(text: string, file: string): TaskLeaseRecord {
  const raw = parseJsonText(text, file);
  const parsed = TaskLeaseRecord.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || '(the whole file)';
    throw new LoopxError(
      'corrupt_lease',
      `lease file ${file} is not a task_lease_v0 record: field ${field}: ${issue?.message ?? 'invalid'}; it was left untouched — repair or remove it, then retry`,
      { lease_path: file, field },
    );
  }
  return parsed.data;
}

function corrupt(error: unknown, file: string): never {
  if (error instanceof LoopxError && error.code !== 'corrupt_lease' && error.code !== 'file_not_found') {
    throw new LoopxError(
      'corrupt_lease',
      `lease file ${file} cannot be read: ${error.message}; it was left untouched`,
      {
        lease_path: file,
        cause: error.code,
      },
    );
  }
  throw error;
}

/** The lease record, or null when there is none; `corrupt_lease` naming the file when it does not parse. */
export async function readLease(file: string): Promise<TaskLeaseRecord | null> {
  let text: string;
  try {
    text = await leaseFileIo(path.dirname(file), { kind: 'readText', file, read: { noFollow: true } });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as LoopxError).code === 'file_not_found')
      return null;
    return corrupt(error, file);
  }
  try {
    return parseLease(text, file);
  } catch (error) {
    return corrupt(error, file);
  }
}

export function readLeaseSync(file: string): TaskLeaseRecord | null {
  let text: string;
  try {
    text = leaseFileIo(path.dirname(file), { kind: 'readTextSync', file, read: { noFollow: true } });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as LoopxError).code === 'file_not_found')
      return null;
    return corrupt(error, file);
  }
  try {
    return parseLease(text, file);
  } catch (error) {
    return corrupt(error, file);
  }
}

export async function writeLease(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  file: string,
  lease: TaskLeaseRecord,
): Promise<void> {
  const within = leaseDir(goal);
  await leaseFileIo(within, { kind: 'writeJson', file, value: lease, within });
}

/** Runs `fn` under the goal's lease lock (made on first use inside the runtime root). */
export async function withLeaseLock<T>(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  options: { clock: Clock; agentId?: string | null; operation: string },
  fn: () => Promise<T>,
): Promise<T> {
  const dir = leaseDir(goal);
  await leaseFileIo(goal.runtimeRoot, { kind: 'mkdir', dir });
  return leaseFileIo(goal.runtimeRoot, {
    kind: 'lock',
    file: path.join(dir, '.task-leases'),
    lock: { clock: options.clock, agentId: options.agentId ?? null, operation: options.operation },
    work: fn,
  });
}

/** Every lease file of the goal (todo_*.json), sorted by name; a missing folder has none. */
export function leaseFiles(goal: Pick<GoalRef, 'runtimeRoot' | 'goalId'>): string[] {
  const dir = leaseDir(goal);
  let names: string[];
  try {
    names = leaseFileIo(dir, { kind: 'listSync', dir });
  } catch {
    return [];
  }
  return names
    .filter((name) => /^todo_.*\.json$/.test(name))
    .sort()
    .map((name) => path.join(dir, name));
}

export interface LeaseHolder {
  owner: string;
  expires_at: string;
  version: number;
  lease_epoch: number;
}

/**
 * The time-active leases of a goal by todo id, for readers that only skip or show them (todo
 * selection, the tree). A corrupt lease file is reported as held by nobody-knows-who, so no one
 * takes its todo until it is repaired.
 */
export function activeLeaseHolders(goal: Pick<GoalRef, 'runtimeRoot' | 'goalId'>, now: Date): Map<string, LeaseHolder> {
  const holders = new Map<string, LeaseHolder>();
  for (const file of leaseFiles(goal)) {
    const todoId = path.basename(file, '.json');
    let lease: TaskLeaseRecord | null;
    try {
      lease = readLeaseSync(file);
    } catch {
      holders.set(todoId, { owner: '(corrupt lease file)', expires_at: '', version: 0, lease_epoch: 0 });
      continue;
    }
    if (lease === null || !leaseIsActive(lease, now)) continue;
    holders.set(lease.todo_id ?? todoId, {
      owner: lease.owner ?? '',
      expires_at: lease.expires_at ?? '',
      version: lease.version ?? 0,
      lease_epoch: lease.lease_epoch ?? 1,
    });
  }
  return holders;
}

/** The goal's state document, read now (inside the lease lock when called from one). */
export async function readGoalDocument(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
): Promise<StateDocument> {
  if (goal.statePath === null) {
    throw new LoopxError(
      'state_file_unresolved',
      `goal '${goal.goalId}' has no state file LoopX can find, so its todos (and leases) cannot be checked; set state_file in the registry`,
      { goal_id: goal.goalId },
    );
  }
  return parseStateDocument(await readStateText(goal.statePath));
}

export function todoOf(doc: StateDocument, todoId: string): TodoItem | null {
  return (
    doc.todos.find((t) => t.todoId === todoId && t.role !== 'archive') ??
    doc.todos.find((t) => t.todoId === todoId) ??
    null
  );
}

/**
 * The goal's handoff mode: the state file's front-matter `handoff_mode` (where the original keeps
 * it, since that file travels between hosts), else the registry entry's `handoff_mode`, else
 * `legacy`. An unknown value is refused, naming where it was found.
 */
export function handoffModeOf(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  doc: StateDocument | null,
): HandoffMode {
  const front = doc?.frontMatter?.fields['handoff_mode'];
  const [value, where] =
    front !== undefined && front.trim() !== ''
      ? [front.trim(), `${goal.statePath ?? 'the state file'} front matter`]
      : [goal.rawEntry['handoff_mode'], `the registry entry of goal '${goal.goalId}'`];
  if (value === undefined || value === null || value === '') return 'legacy';
  if (typeof value === 'string' && (HANDOFF_MODES as readonly string[]).includes(value.trim()))
    return value.trim() as HandoffMode;
  throw new LoopxError(
    'invalid_handoff_mode',
    `handoff_mode in ${where} is ${JSON.stringify(value)}; use one of ${HANDOFF_MODES.join(', ')} (or remove it for legacy)`,
    { handoff_mode: typeof value === 'string' ? value : String(value), supported: [...HANDOFF_MODES] },
  );
}
