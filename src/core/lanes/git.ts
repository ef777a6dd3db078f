import { execFile } from 'node:child_process';
import { LoopxError } from '../errors';

/**
 * Git for lanes: one `git` process per call, never a shell. The variables that would point git at
 * another repository (a hook's `GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`) are dropped, so every
 * call works on the folder it names.
 */

export interface GitRun {
  code: number;
  stdout: string;
  stderr: string;
}

const REPOSITORY_VARIABLES = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_COMMON_DIR', 'GIT_PREFIX'];

/** Lane commands are local and small; a hung git (a lock held elsewhere) fails instead of holding the turn. */
const GIT_TIMEOUT_MS = 120_000;

export function gitEnvironment(env: NodeJS.ProcessEnv, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = { ...env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', ...extra };
  for (const name of REPOSITORY_VARIABLES) delete clean[name];
  return clean;
}

/** Runs git in `cwd`; resolves with its exit code (never rejects for a non-zero exit). */
export function runGit(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      {
        cwd,
        env: gitEnvironment(env),
        timeout: GIT_TIMEOUT_MS,
        windowsHide: true,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve({ code: 0, stdout, stderr });
          return;
        }
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          reject(new LoopxError('git_unavailable', 'git is not installed or not on PATH; lanes need git', {}));
          return;
        }
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
  });
}

/** Runs git and returns its stdout; a non-zero exit is a `lane_git_failed` error naming the command. */
export async function git(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const run = await runGit(args, cwd, env);
  if (run.code !== 0)
    throw new LoopxError(
      'lane_git_failed',
      `git ${args.join(' ')} failed in ${cwd}: ${(run.stderr || run.stdout).trim().slice(0, 500)}`,
      { args: [...args], cwd, exit_code: run.code },
    );
  return run.stdout;
}

/** `git … | lines`, empty lines dropped. */
export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}
