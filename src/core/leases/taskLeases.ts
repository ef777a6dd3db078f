/**
 * Where `ops/todo.ts` still imports the completion fence from (issue 31 split this file by job: the verbs are
 * `verbs.ts`, the fence `completionFence.ts`). Nothing else imports here; delete it once `ops/todo.ts` imports
 * `completionFence.ts` itself.
 */
export { withAgentLease, withCompletionFence, type FenceReceipt } from './completionFence';
export type { LeaseResult } from './verbs';
