import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The demo workspace's LoopX files and notes: what a suite that writes them must give back. */
const KEPT = ['.loopx', '.codex', 'notes'];

/**
 * Copies the workspace's LoopX files (registry, runtime, state files) and notes aside, and returns
 * the function that puts them back: the suites share one workspace and each expects the demo as
 * committed, run index included.
 */
export function backUpWorkspace(folder: string): () => void {
  const saved = mkdtempSync(join(tmpdir(), 'loopx-it-saved-'));
  for (const dir of KEPT)
    if (existsSync(join(folder, dir))) cpSync(join(folder, dir), join(saved, dir), { recursive: true });
  return () => {
    for (const dir of KEPT) {
      rmSync(join(folder, dir), { recursive: true, force: true });
      if (existsSync(join(saved, dir))) cpSync(join(saved, dir), join(folder, dir), { recursive: true });
    }
    rmSync(saved, { recursive: true, force: true });
  };
}
