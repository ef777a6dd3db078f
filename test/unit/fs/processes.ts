// Moved to test/support/barrier.ts (one helper for every test that starts processes); kept for imports in flight.
export { expectSuccess, REPO_ROOT, startWorker, waitForOutput, type Worker } from '../../support/barrier';
