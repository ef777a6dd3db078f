import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Looking at an agent CLI without running a turn: where it is on PATH, what `--version` says and what
 * its `--help` offers. Each call has a short timeout and a minimal environment (no provider keys), so
 * a doctor run never reaches a model, and a CLI that hangs costs at most the timeout.
 */

export interface CommandProbe {
  /** The absolute path of the program, or null when it is not found (on PATH, or at the path given). */
  which(command: string): string | null;
  /** The program's output (stdout, else stderr), or null when it failed or timed out. */
  output(argv: readonly string[]): Promise<string | null>;
}

export const PROBE_TIMEOUT_MS = 5000;

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Finds `command` the way a shell would: a path as given (relative to `cwd`), a bare name on PATH. */
export function whichOnPath(command: string, env: NodeJS.ProcessEnv, cwd: string): string | null {
  if (command.includes('/') || command.includes(path.sep)) {
    const file = path.resolve(cwd, command);
    return isExecutableFile(file) ? file : null;
  }
  const extensions = process.platform === 'win32' ? (env['PATHEXT'] ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const folder of (env['PATH'] ?? '').split(path.delimiter)) {
    if (folder === '') continue;
    for (const extension of extensions) {
      const file = path.join(folder, command + extension);
      if (isExecutableFile(file)) return file;
    }
  }
  return null;
}

/** The probe of this machine: PATH from `env`, programs run with only PATH, HOME and LANG. */
export function systemProbe(env: NodeJS.ProcessEnv, cwd: string, timeoutMs = PROBE_TIMEOUT_MS): CommandProbe {
  const childEnv: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'SYSTEMROOT', 'PATHEXT'])
    if (env[name] !== undefined) childEnv[name] = env[name];
  childEnv['NO_COLOR'] = '1';
  return {
    which: (command) => whichOnPath(command, env, cwd),
    output: (argv) =>
      new Promise((resolve) => {
        const [file, ...args] = argv;
        if (file === undefined) {
          resolve(null);
          return;
        }
        execFile(
          file,
          args,
          { cwd, env: childEnv, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 1024 * 1024, windowsHide: true },
          (error, stdout, stderr) => {
            const text = stdout.trim() !== '' ? stdout : stderr;
            resolve(error !== null && text.trim() === '' ? null : text);
          },
        );
      }),
  };
}

/** The first line of a `--version` output that names a version (`2.1.197 (Claude Code)` → as is). */
export function versionLine(output: string | null): string | null {
  if (output === null) return null;
  const lines = output.split(/\r?\n/).map((line) => line.trim());
  return lines.find((line) => /\d+\.\d+/.test(line)) ?? lines.find((line) => line !== '') ?? null;
}
