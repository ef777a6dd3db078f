import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

export interface Worker {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or the signal name) once the process has ended. */
  exited: Promise<number | string>;
}

/** Starts `node --import tsx <script> ...args` as a real separate process. */
export function startWorker(script: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? signal ?? -1));
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Waits until the worker printed `marker` on stdout; fails if it exits first. */
export function waitForOutput(worker: Worker, marker: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (worker.stdout().includes(marker)) {
        resolve();
        return;
      }
      if (worker.child.exitCode !== null || worker.child.signalCode !== null) {
        reject(new Error(`worker exited before printing ${marker}: ${worker.stderr()}`));
        return;
      }
      setTimeout(check, 10);
    };
    check();
  });
}

export async function expectSuccess(worker: Worker): Promise<void> {
  const code = await worker.exited;
  if (code !== 0) throw new Error(`worker failed (${code}): ${worker.stderr()}`);
}
