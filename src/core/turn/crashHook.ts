/**
 * TEST HOOK, for the crash tests only: when the environment given to the turn driver sets
 * `LOOPX_TEST_CRASH_AT_PHASE=<checkpoint>`, the process SIGKILLs itself at that checkpoint, so a
 * test can prove that a crash there leaves a journal the next run resumes from, and never a
 * double spend. Checkpoints are `admission`, each phase name (right after its journal write) and
 * `<phase>:effect` (after the phase's side effect, before its journal write). Unset, it does nothing.
 */
export const CRASH_AT_PHASE_ENV = 'LOOPX_TEST_CRASH_AT_PHASE';

export function crashCheckpoint(env: NodeJS.ProcessEnv, checkpoint: string): void {
  if (env[CRASH_AT_PHASE_ENV] === checkpoint) process.kill(process.pid, 'SIGKILL');
}
