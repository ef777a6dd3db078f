import * as l10n from '@vscode/l10n';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { inWriteScope } from '../core/ops/host';
import { git, isLoopxOwned, repoPlace, writeFileAtomic, writeWorkingTree } from '../core/ops/editorHost';

/**
 * What a turn changed, from a snapshot taken before it ran. In a git repository the snapshot is a
 * tree object written through a private index (`git add -A` + `git write-tree` with
 * `GIT_INDEX_FILE` pointing at a temporary copy: the user's index, stash and history are untouched;
 * ignored files are not seen); elsewhere it is the bytes of the goal's write scope (or of the project
 * when the goal has none), capped. LoopX's own files (`.loopx/`, the goal's state file) are never
 * listed: the turn's evidence covers them and reverting them would corrupt the goal. Nothing here
 * imports VS Code, so the rules run under unit tests.
 */

export type ChangeStatus = 'added' | 'modified' | 'deleted';

export interface FileChange {
  /** Project-relative, with `/`. */
  path: string;
  status: ChangeStatus;
}

/** Folders a file snapshot never walks into. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules', '.loopx', '.vscode-test']);
/** Caps of a file snapshot: past them the rest of the project is not compared (and `truncated` says so). */
export const SNAPSHOT_MAX_FILES = 5000;
export const SNAPSHOT_MAX_BYTES = 64 * 1024 * 1024;

export interface TurnSnapshot {
  readonly kind: 'git' | 'files';
  readonly projectRoot: string;
  /** A file snapshot hit its caps: changes past them are not shown. */
  readonly truncated: boolean;
  /** What changed since the snapshot (LoopX's own files left out), sorted by path. */
  changes(): Promise<FileChange[]>;
  /** The file's bytes when the snapshot was taken; null when it did not exist then. */
  original(relativePath: string): Promise<Buffer | null>;
}

export interface SnapshotOptions {
  projectRoot: string;
  /** The goal's write scope; a file snapshot covers only it (the whole project when empty). */
  writeScope: readonly string[];
  /** Project-relative files that are LoopX's (the goal's state file). */
  excluded?: readonly string[];
  /** Force the file snapshot (tests; a repository whose git is not on PATH falls back by itself). */
  forceFiles?: boolean;
}

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

/** Takes the snapshot of a turn's project before the turn runs. */
export async function takeTurnSnapshot(options: SnapshotOptions): Promise<TurnSnapshot> {
  const excluded = new Set((options.excluded ?? []).map(toPosix));
  if (!options.forceFiles) {
    const top = await git(options.projectRoot, ['rev-parse', '--show-toplevel']).then(
      (out) => out.toString('utf8').trim(),
      () => null,
    );
    if (top !== null && top !== '') {
      const snapshot = await GitSnapshot.take(options.projectRoot, top, excluded).catch(() => null);
      if (snapshot !== null) return snapshot;
    }
  }
  return FileSnapshot.take(options.projectRoot, options.writeScope, excluded);
}

class GitSnapshot implements TurnSnapshot {
  readonly kind = 'git';
  readonly truncated = false;

  private constructor(
    readonly projectRoot: string,
    /** The project root relative to the repository's top, with `/` ('' when it is the top). */
    private readonly prefix: string,
    private readonly tree: string,
    private readonly excluded: ReadonlySet<string>,
  ) {}

  static async take(projectRoot: string, top: string, excluded: ReadonlySet<string>): Promise<GitSnapshot> {
    const realRoot = await fs.realpath(projectRoot);
    const prefix = toPosix(path.relative(await fs.realpath(top), realRoot));
    return new GitSnapshot(projectRoot, prefix, await GitSnapshot.writeTree(projectRoot), excluded);
  }

  /** The working tree of the project as a git tree object, through a private copy of the index (src/core/snapshots). */
  private static async writeTree(projectRoot: string): Promise<string> {
    const place = await repoPlace(projectRoot);
    if (place === null) throw new Error(`${projectRoot} is not in a git repository`);
    return writeWorkingTree(projectRoot, place);
  }

  async changes(): Promise<FileChange[]> {
    const now = await GitSnapshot.writeTree(this.projectRoot);
    const out = (
      await git(this.projectRoot, ['diff', '--name-status', '--no-renames', '-z', this.tree, now, '--', '.'])
    ).toString('utf8');
    const fields = out.split('\0').filter((f) => f !== '');
    const changes: FileChange[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const code = fields[i] ?? '';
      const fromTop = fields[i + 1] ?? '';
      const relative = this.prefix === '' ? fromTop : fromTop.slice(this.prefix.length + 1);
      if (isLoopxOwned(relative, this.excluded)) continue;
      changes.push({ path: relative, status: code === 'A' ? 'added' : code === 'D' ? 'deleted' : 'modified' });
    }
    return changes.sort((a, b) => a.path.localeCompare(b.path));
  }

  async original(relativePath: string): Promise<Buffer | null> {
    const fromTop = this.prefix === '' ? relativePath : `${this.prefix}/${relativePath}`;
    return git(this.projectRoot, ['cat-file', 'blob', `${this.tree}:${fromTop}`]).catch(() => null);
  }
}

class FileSnapshot implements TurnSnapshot {
  readonly kind = 'files';

  private constructor(
    readonly projectRoot: string,
    private readonly writeScope: readonly string[],
    private readonly excluded: ReadonlySet<string>,
    private readonly files: ReadonlyMap<string, Buffer>,
    readonly truncated: boolean,
  ) {}

  static async take(projectRoot: string, writeScope: readonly string[], excluded: ReadonlySet<string>) {
    const files = new Map<string, Buffer>();
    let bytes = 0;
    let truncated = false;
    for (const relative of await FileSnapshot.list(projectRoot, writeScope, excluded)) {
      if (files.size >= SNAPSHOT_MAX_FILES) {
        truncated = true;
        break;
      }
      const content = await fs.readFile(path.join(projectRoot, relative)).catch(() => null);
      if (content === null) continue;
      if (bytes + content.length > SNAPSHOT_MAX_BYTES) {
        truncated = true;
        break;
      }
      bytes += content.length;
      files.set(relative, content);
    }
    return new FileSnapshot(projectRoot, writeScope, excluded, files, truncated);
  }

  /** Regular files (never through a symbolic link) of the scope, sorted. */
  private static async list(
    projectRoot: string,
    writeScope: readonly string[],
    excluded: ReadonlySet<string>,
  ): Promise<string[]> {
    const found: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      const entries = await fs.readdir(path.join(projectRoot, dir), { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        const relative = dir === '' ? entry.name : `${dir}/${entry.name}`;
        if (entry.isDirectory()) {
          if (!SKIPPED_DIRS.has(entry.name)) await walk(relative);
        } else if (entry.isFile()) {
          if (isLoopxOwned(relative, excluded)) continue;
          if (writeScope.length > 0 && !inWriteScope(relative, writeScope)) continue;
          found.push(relative);
        }
      }
    };
    await walk('');
    return found.sort();
  }

  async changes(): Promise<FileChange[]> {
    const now = await FileSnapshot.list(this.projectRoot, this.writeScope, this.excluded);
    const changes: FileChange[] = [];
    const seen = new Set<string>();
    for (const relative of now) {
      seen.add(relative);
      const before = this.files.get(relative);
      if (before === undefined) {
        // Past the caps the snapshot does not know the file: not reported as added.
        if (!this.truncated) changes.push({ path: relative, status: 'added' });
        continue;
      }
      const after = await fs.readFile(path.join(this.projectRoot, relative)).catch(() => null);
      if (after === null || !after.equals(before)) changes.push({ path: relative, status: 'modified' });
    }
    for (const relative of this.files.keys())
      if (!seen.has(relative)) changes.push({ path: relative, status: 'deleted' });
    return changes.sort((a, b) => a.path.localeCompare(b.path));
  }

  original(relativePath: string): Promise<Buffer | null> {
    return Promise.resolve(this.files.get(relativePath) ?? null);
  }
}

/**
 * Puts one changed file back as the snapshot had it (deletes a file the turn added). Refuses a path
 * that is not among the snapshot's changes, that leaves the project, or that is (or passes through)
 * a symbolic link; returns what it did.
 */
export async function revertChange(snapshot: TurnSnapshot, relativePath: string): Promise<'restored' | 'deleted'> {
  const change = (await snapshot.changes()).find((c) => c.path === relativePath);
  if (change === undefined)
    throw new Error(
      l10n.t(
        '"{0}" is not a file this turn changed (or it is already back as it was); nothing was reverted',
        relativePath,
      ),
    );
  const target = path.resolve(snapshot.projectRoot, relativePath);
  const root = path.resolve(snapshot.projectRoot);
  const realRoot = await fs.realpath(root);
  const inside = (p: string, base: string) => {
    const rel = path.relative(base, p);
    return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
  };
  // The nearest folder on the way that exists, resolved: a linked folder must not lead out.
  let existing = path.dirname(target);
  while (
    !(await fs.stat(existing).then(
      () => true,
      () => false,
    )) &&
    existing !== root
  )
    existing = path.dirname(existing);
  const realParent = await fs.realpath(existing);
  if (!inside(target, root) || !inside(path.join(realParent, 'x'), realRoot))
    throw new Error(
      l10n.t('"{0}" leads out of the project; LoopX never writes there. Nothing was reverted', relativePath),
    );
  const stat = await fs.lstat(target).catch(() => null);
  if (stat?.isSymbolicLink())
    throw new Error(
      l10n.t('"{0}" is a symbolic link; LoopX does not revert through links. Nothing was reverted', relativePath),
    );
  const original = await snapshot.original(relativePath);
  if (original === null) {
    await fs.rm(target, { force: true });
    return 'deleted';
  }
  await fs.mkdir(path.dirname(target), { recursive: true });
  await writeFileAtomic(target, original);
  return 'restored';
}
