import { execFile } from 'node:child_process';
import * as path from 'node:path';

/** What git says about one file. Every field is false when git cannot answer. */
export interface GitProbe {
  available: boolean;
  probe_status: 'ok' | 'git_unavailable';
  inside_worktree: boolean;
  tracked: boolean;
  ignored: boolean;
}

export interface GitProbeOptions {
  /** Environment for git (PATH lookup, GIT_* variables). */
  env?: NodeJS.ProcessEnv;
  /** The git executable; tests point it at a missing binary. */
  gitCommand?: string;
  /** Per-call timeout; the spec gives git 1.5 s per probe. */
  timeoutMs?: number;
}

export const GIT_PROBE_TIMEOUT_MS = 1500;

const UNAVAILABLE: GitProbe = {
  available: false,
  probe_status: 'git_unavailable',
  inside_worktree: false,
  tracked: false,
  ignored: false,
};

interface GitResult {
  /** Exit code, or null when git could not be started or was killed by the timeout. */
  code: number | null;
  stdout: string;
}

function runGit(args: string[], cwd: string, options: GitProbeOptions): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile(
      options.gitCommand ?? 'git',
      args,
      {
        cwd,
        env: options.env ?? process.env,
        timeout: options.timeoutMs ?? GIT_PROBE_TIMEOUT_MS,
        windowsHide: true,
        encoding: 'utf8',
      },
      (error, stdout) => {
        if (error === null) {
          resolve({ code: 0, stdout });
          return;
        }
        const code = typeof error.code === 'number' && !error.killed ? error.code : null;
        resolve({ code, stdout });
      },
    );
  });
}

/**
 * Asks git whether `filePath` sits in a worktree, is tracked, and is ignored. A missing git,
 * a folder outside any repository, or a probe that hits its timeout all give `git_unavailable`.
 */
export async function probeGit(filePath: string, options: GitProbeOptions = {}): Promise<GitProbe> {
  const cwd = path.dirname(filePath);
  const name = path.basename(filePath);
  const inside = await runGit(['rev-parse', '--is-inside-work-tree'], cwd, options);
  if (inside.code !== 0 || inside.stdout.trim() !== 'true') return { ...UNAVAILABLE };
  const [listed, ignoreCheck] = await Promise.all([
    runGit(['ls-files', '--error-unmatch', '--', name], cwd, options),
    runGit(['check-ignore', '-q', '--', name], cwd, options),
  ]);
  // check-ignore exits 1 for "not ignored"; anything else but 0/1 means git could not answer.
  if (listed.code === null || ignoreCheck.code === null || (ignoreCheck.code !== 0 && ignoreCheck.code !== 1))
    return { ...UNAVAILABLE };
  return {
    available: true,
    probe_status: 'ok',
    inside_worktree: true,
    tracked: listed.code === 0,
    ignored: ignoreCheck.code === 0,
  };
}
