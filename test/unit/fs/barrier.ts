/**
 * A start barrier for race tests: every child process loads its code, reports "ready" over its IPC
 * channel and waits; once all are ready the parent sends "go" to all of them at once, so their
 * critical sections really overlap instead of being staggered by process start-up.
 *
 *   parent: const workers = await startTogether([{ script, args }, { script, args }]);
 *   child:  await awaitGo();   // after the imports, right before the racing operation
 */
import { spawn } from 'node:child_process';
import { REPO_ROOT, type Worker } from './processes';

export interface BarrierSpec {
  script: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
}

/** Child side: report ready, resolve on the parent's "go", then drop the channel so it cannot keep the process alive. */
export function awaitGo(): Promise<void> {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('awaitGo: this process was not started by startTogether (no IPC channel)');
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

/** Parent side: starts every child, waits until all of them are ready, then releases them together. */
export async function startTogether(specs: readonly BarrierSpec[]): Promise<Worker[]> {
  const ready: Promise<void>[] = [];
  const workers = specs.map((spec): Worker => {
    const child = spawn(process.execPath, ['--import', 'tsx', spec.script, ...spec.args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...spec.env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
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
    ready.push(
      new Promise<void>((resolve, reject) => {
        child.once('message', (message) => (message === 'ready' ? resolve() : reject(new Error(String(message)))));
        child.once('exit', (code) =>
          reject(new Error(`${spec.script} exited (${String(code)}) before the barrier: ${err}`)),
        );
      }),
    );
    return { child, stdout: () => out, stderr: () => err, exited };
  });
  try {
    await Promise.all(ready);
  } catch (error) {
    for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    throw error;
  }
  for (const worker of workers) worker.child.send('go');
  return workers;
}
