/**
 * TEST HOOK, for the crash tests only: when the environment given to the turn driver sets
 * `LOOPX_TEST_CRASH_AT_PHASE=<checkpoint>`, the process SIGKILLs itself at that checkpoint, so a
 * test can prove that a crash there leaves a journal the next run resumes from, and never a
 * double spend. Checkpoints are `admission`, each phase name (right after its journal write) and
 * `<phase>:effect` (after the phase's side effect, before its journal write). Unset, it does nothing.
 *
 * The hook exists only in the source the tests run (tsx). Every esbuild bundle (scripts/build.mjs,
 * scripts/build-lib.mjs: the .vsix, the CLI, the library) defines `LOOPX_SHIPPED_BUILD` as true, so
 * the check below compiles to nothing and the variable's name is not in the shipped code; the
 * installed-.vsix suite and test/unit/api/package.test.ts grep the bundles for it.
 */
declare const LOOPX_SHIPPED_BUILD: boolean;

export const CRASH_AT_PHASE_ENV = 'LOOPX_TEST_CRASH_AT_PHASE';

export function crashCheckpoint(env: NodeJS.ProcessEnv, checkpoint: string): void {
  if (typeof LOOPX_SHIPPED_BUILD === 'boolean' && LOOPX_SHIPPED_BUILD) return;
  if (env[CRASH_AT_PHASE_ENV] === checkpoint) process.kill(process.pid, 'SIGKILL');
}
