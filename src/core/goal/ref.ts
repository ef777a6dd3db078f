/** `GoalRef` lives in `registry/goalRef.ts` (below the folders that take it); re-exported for `goal/`'s readers. */
export type { GoalRef, RegistryPlace } from '../registry/goalRef';
