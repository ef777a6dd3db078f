import * as fs from 'node:fs';
import * as path from 'node:path';
import { pyText, isRecord } from '../../pyCompat';

/** Paths as the original resolves them (`Path.expanduser().resolve()`, non-strict), and its registry reads. */

export function expandUser(value: string, homeDir: string): string {
  return value === '~' ? homeDir : value.startsWith('~/') ? path.join(homeDir, value.slice(2)) : value;
}

/** While a report runs (`withPathMemo`): resolved paths, existence and registry reads, each looked up once. */
let memo: { resolved: Map<string, string>; exists: Map<string, boolean>; registries: Map<string, unknown> } | null =
  null;

/** Runs `fn` with the file system looked at once per path (a report asks the same paths for every goal). */
export function withPathMemo<T>(fn: () => T): T {
  const outer = memo;
  memo ??= { resolved: new Map(), exists: new Map(), registries: new Map() };
  try {
    return fn();
  } finally {
    memo = outer;
  }
}

/** `Path.resolve()`: absolute, symlinks of the existing part followed. */
export function pyResolve(p: string): string {
  const kept = memo?.resolved.get(p);
  if (kept !== undefined) return kept;
  const value = resolveUncached(p);
  memo?.resolved.set(p, value);
  return value;
}

function resolveUncached(p: string): string {
  const absolute = path.resolve(p);
  try {
    return fs.realpathSync(absolute);
  } catch {
    const parent = path.dirname(absolute);
    return parent === absolute ? absolute : path.join(resolveUncached(parent), path.basename(absolute));
  }
}

export function samePath(a: string, b: string, homeDir: string): boolean {
  return pyResolve(expandUser(a, homeDir)) === pyResolve(expandUser(b, homeDir));
}

/** `registry_goals`: the entries of `goals` that are objects with a truthy id. */
export function rawGoals(registry: unknown): Record<string, unknown>[] {
  if (!isRecord(registry) || !Array.isArray(registry['goals'])) return [];
  return registry['goals'].filter(
    (goal): goal is Record<string, unknown> => isRecord(goal) && pyText(goal['id']) !== '',
  );
}

/** `load_registry`: `{}` when the file does not exist; null when it cannot be read or parsed as an object. */
export function loadRegistryFile(file: string): Record<string, unknown> | null {
  if (memo?.registries.has(file) === true) return memo.registries.get(file) as Record<string, unknown> | null;
  const value = loadRegistryUncached(file);
  memo?.registries.set(file, value);
  return value;
}

function loadRegistryUncached(file: string): Record<string, unknown> | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? {} : null;
  }
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

export function exists(p: string): boolean {
  const kept = memo?.exists.get(p);
  if (kept !== undefined) return kept;
  const value = fs.existsSync(p);
  memo?.exists.set(p, value);
  return value;
}
