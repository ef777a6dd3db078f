/**
 * Root hooks for every mocha run (`.mocharc.json` requires this file): after each test, kill the
 * child processes it started through `test/support/barrier.ts` and left running. A failed
 * assertion then cannot leave a child holding a lock (or a pipe open) while mocha waits for it.
 */
import { killRunningWorkers } from './barrier';

export const mochaHooks = {
  afterEach(): void {
    killRunningWorkers();
  },
};
