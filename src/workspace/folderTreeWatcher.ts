import { watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';

/**
 * Watches a folder and every folder below it, one `fs.watch` per folder, and follows the folder when it is
 * replaced wholesale (removed and created again, or another folder renamed over it): a watch of its parent sees
 * its name come back, and the watches are armed again on the new folder. VS Code 1.90–1.93's watcher of a folder
 * outside the workspace reported nothing once that folder had been replaced, even when created anew; the
 * extension host runs beside the files, so Node's watch sees them. Not `fs.watch(…, { recursive })`: on Linux,
 * Node 20 implements it with one watch per file and synchronous reads of the whole tree.
 */
export class FolderTreeWatcher {
  /** The watch of each folder, with the identity (`identityOf`) of the folder it was armed on. */
  private readonly watches = new Map<string, { watcher: FSWatcher; identity: string }>();
  private readonly parent: FSWatcher | undefined;
  private closed = false;

  /**
   * `onChange` gets each path an event names (a file or folder created, changed or removed below the root, or the
   * root itself when it was replaced or removed); `onError` a watch that could not be armed (e.g. the inotify limit).
   */
  constructor(
    private readonly root: string,
    private readonly onChange: (path: string) => void,
    private readonly onError: (message: string) => void,
  ) {
    const name = basename(root);
    this.parent = this.open(dirname(root), (entry) => {
      if (entry === null || entry === name) void this.follow(root);
    });
    void this.follow(root, { initial: true });
  }

  close(): void {
    this.closed = true;
    this.parent?.close();
    for (const { watcher } of this.watches.values()) watcher.close();
    this.watches.clear();
  }

  /** The folders watched now (for tests). */
  get folders(): string[] {
    return [...this.watches.keys()].sort();
  }

  /**
   * Brings the watches of `path` in line with what is on disk: a new folder (or a folder replaced by another) is
   * watched with everything below it, and a removed one let go of. `initial`: the first scan, nothing to report.
   */
  private async follow(path: string, { initial = false } = {}): Promise<void> {
    const identity = await identityOf(path);
    if (this.closed) return;
    const watched = this.watches.get(path);
    if (watched !== undefined && watched.identity === identity) return;
    if (watched !== undefined) this.unwatch(path);
    if (identity === undefined) {
      if (path === this.root && watched !== undefined) this.onChange(path);
      return;
    }
    await this.watchTree(path, identity, !initial);
    // The root replaced: everything below it may have changed.
    if (path === this.root && !initial) this.onChange(path);
  }

  /** Watches `dir` and the folders below it; `report`: a folder that just appeared, whose entries count as changes. */
  private async watchTree(dir: string, identity: string, report: boolean): Promise<void> {
    if (this.closed || this.watches.has(dir)) return;
    const watcher = this.open(dir, (entry) => {
      const path = entry === null ? dir : join(dir, entry);
      this.onChange(path);
      if (entry !== null) void this.follow(path);
      // A folder removed reports itself by its own name: let go of it even when its parent's event comes late.
      if (entry === basename(dir)) void this.follow(dir);
    });
    if (watcher === undefined) return;
    this.watches.set(dir, { watcher, identity });
    // Read after the watch is armed: an entry made in between is seen twice at worst, never missed.
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (report) this.onChange(path);
      if (!entry.isDirectory()) continue;
      const child = await identityOf(path);
      if (child !== undefined) await this.watchTree(path, child, report);
    }
  }

  /** Lets go of the watch of `dir` and of every folder below it. */
  private unwatch(dir: string): void {
    for (const [path, { watcher }] of this.watches) {
      if (path !== dir && !path.startsWith(dir + sep)) continue;
      watcher.close();
      this.watches.delete(path);
    }
  }

  private open(dir: string, listener: (entry: string | null) => void): FSWatcher | undefined {
    if (this.closed) return undefined;
    try {
      const watcher = watch(dir, { persistent: false }, (_event, entry) =>
        listener(entry === null ? null : `${entry}`),
      );
      // A watched folder removed may end its watch with an error (EPERM on Windows): it is followed from its parent.
      watcher.on('error', () => {
        watcher.close();
        for (const [path, watched] of this.watches) if (watched.watcher === watcher) this.watches.delete(path);
      });
      return watcher;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') this.onError(`cannot watch ${dir}: ${(error as Error).message}`);
      return undefined;
    }
  }
}

/**
 * A folder's device, inode and birth time (a folder created anew may get the inode number of the one just
 * removed); undefined when it is not there or not a folder.
 */
async function identityOf(path: string): Promise<string | undefined> {
  const stats = await stat(path).catch(() => undefined);
  return stats?.isDirectory() === true ? `${stats.dev}:${stats.ino}:${stats.birthtimeMs}` : undefined;
}
