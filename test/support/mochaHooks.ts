/**
 * Root hooks for every mocha run (`.mocharc.json` requires this file): after each test, kill the
 * child processes it started through `test/support/barrier.ts` and left running. A failed
 * assertion then cannot leave a child holding a lock (or a pipe open) while mocha waits for it.
 * After the run, remove the temporary directories `test/support/tempDir.ts` made and no suite removed.
 */
import { killRunningWorkers } from './barrier';
import { removeTempDirs } from './tempDir';

export const mochaHooks = {
  afterEach(): void {
    killRunningWorkers();
  },
  afterAll(this: Mocha.Context): void {
    // Thousands of small folders on a loaded machine can take longer than a test may: no limit here.
    this.timeout(0);
    removeTempDirs();
  },
};
