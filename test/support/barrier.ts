/**
 * Child processes for race tests, and the start barrier they all use: every child loads its code,
 * reports "ready" over its IPC channel and waits; once all are ready the parent sends "go" to all
 * of them at once, so their critical sections really overlap instead of being staggered by process
 * start-up (a race without a barrier can pass with its guard removed: issue 34's stale-lock reclaim).
 *
 *   parent: const workers = await startTogether([{ script, args }, { script, args }]);
 *   child:  await awaitGo();   // after the imports, right before the racing operation
 *
 * Every child started here is remembered until it exits; the root after-each hook
 * (`test/support/mochaHooks.ts`) kills the ones a test left running, so a failed assertion never
 * leaves a child holding a lock while mocha waits for it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** Set for children started behind the barrier; `awaitGo` waits only in those. */
const BARRIER_ENV = 'LOOPX_TEST_BARRIER';

export interface Worker {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or the signal name) once the process has ended. */
  exited: Promise<number | string>;
}

export interface WorkerSpec {
  script: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
}

const running = new Set<ChildProcess>();

/** Kills (SIGKILL) every child started here that is still running; returns how many. */
export function killRunningWorkers(): number {
  let killed = 0;
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      killed++;
    }
  }
  running.clear();
  return killed;
}

function spawnWorker(spec: WorkerSpec, barrier: boolean): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', spec.script, ...spec.args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...spec.env, ...(barrier ? { [BARRIER_ENV]: '1' } : {}) },
    stdio: barrier ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  child.on('exit', () => running.delete(child));
  // 'close', not 'exit': by then everything the child wrote has been read.
  const exited = new Promise<number | string>((resolve) => {
    child.on('close', (code, signal) => resolve(code ?? signal ?? -1));
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Starts `node --import tsx <script> ...args` as a real separate process (no barrier). */
export function startWorker(script: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Worker {
  return spawnWorker({ script, args, env }, false);
}

/** Parent side: starts every child, waits until all of them are ready, then releases them together. */
export async function startTogether(specs: readonly WorkerSpec[]): Promise<Worker[]> {
  const workers = specs.map((spec) => spawnWorker(spec, true));
  const ready = workers.map(
    (worker, index) =>
      new Promise<void>((resolve, reject) => {
        worker.child.once('message', (message) =>
          message === 'ready' ? resolve() : reject(new Error(String(message))),
        );
        worker.child.once('exit', (code) =>
          reject(new Error(`${specs[index]?.script} exited (${String(code)}) before the barrier: ${worker.stderr()}`)),
        );
      }),
  );
  try {
    await Promise.all(ready);
  } catch (error) {
    for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    throw error;
  }
  for (const worker of workers) worker.child.send('go');
  return workers;
}

/**
 * Child side: report ready, resolve on the parent's "go", then drop the channel so it cannot keep
 * the process alive. In a child started without the barrier (`startWorker`) it resolves at once.
 */
export function awaitGo(): Promise<void> {
  if (process.env[BARRIER_ENV] !== '1') return Promise.resolve();
  delete process.env[BARRIER_ENV]; // not for this child's own children
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('awaitGo: started behind the barrier but without an IPC channel');
  return new Promise((resolve) => {
    process.once('message', (message) => {
      if (message === 'go') {
        process.disconnect();
        resolve();
      }
    });
    send('ready');
  });
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
