import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const created: string[] = [];

/**
 * A fresh temporary directory with symlinks resolved (macOS /tmp is a symlink, and paths the code under test
 * prints are real paths). Every directory made here is removed by `removeTempDirs`, which the mocha root hook
 * (test/support/mochaHooks.ts) calls after the run; a suite may call it sooner.
 */
export function tempDir(prefix = 'loopx-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  created.push(dir);
  return dir;
}

/** Removes every directory `tempDir` made so far. */
export function removeTempDirs(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}
