// Moved to test/support/barrier.ts (one start barrier for every race test); kept for imports in flight.
export { awaitGo, startTogether, type WorkerSpec as BarrierSpec } from '../../support/barrier';
