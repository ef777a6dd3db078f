/**
 * Child process for the refresh-state race tests.
 * Usage:
 *   refreshWorker.ts step <registry> <home> <nextAction>
 *     plans a refresh, prints "planned", waits for a line on stdin, commits, prints the outcome.
 *   refreshWorker.ts loop <registry> <home> <count>
 *     runs <count> refreshes writing "route <i>", printing {succeeded:[…], conflicts:n} at the end.
 * Any error other than a concurrent-edit conflict exits 1.
 */
import { systemClock } from '../../../src/core/clock';
import { errorMessage, isLoopxError } from '../../../src/core/errors';
import {
  commitRefreshState,
  planRefreshState,
  readRefreshBase,
  refreshState,
  type RefreshStateRequest,
} from '../../../src/core/refresh/refreshState';
import { awaitGo } from '../../support/barrier';
import { goalOfRegistry } from './helpers';

function request(nextAction: string): RefreshStateRequest {
  return { classification: 'state_refreshed', nextAction };
}

async function step(registryPath: string, homeDir: string, nextAction: string): Promise<void> {
  const goal = await goalOfRegistry(registryPath, homeDir);
  const plan = await planRefreshState(
    goal,
    request(nextAction),
    await readRefreshBase(goal, request(nextAction)),
    systemClock,
  );
  process.stdout.write('planned\n');
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  try {
    await commitRefreshState(plan, { clock: systemClock, lock: { timeoutMs: 20000 } });
    process.stdout.write(`${JSON.stringify({ outcome: 'committed' })}\n`);
  } catch (error) {
    if (!isLoopxError(error)) throw error;
    process.stdout.write(`${JSON.stringify({ outcome: 'refused', code: error.code, message: error.message })}\n`);
  }
  process.stdin.destroy();
}

async function loop(registryPath: string, homeDir: string, count: number): Promise<void> {
  await awaitGo();
  const succeeded: string[] = [];
  const conflicts: string[] = [];
  for (let i = 0; i < count; i++) {
    const route = `route ${i}`;
    try {
      await refreshState(await goalOfRegistry(registryPath, homeDir), request(route), {
        clock: systemClock,
        lock: { timeoutMs: 20000 },
      });
      succeeded.push(route);
    } catch (error) {
      if (!isLoopxError(error, 'state_changed_concurrently')) throw error;
      conflicts.push(error.message);
    }
  }
  process.stdout.write(`${JSON.stringify({ succeeded, conflicts })}\n`);
}

async function main(): Promise<void> {
  const [mode, registryPath, homeDir, arg] = process.argv.slice(2);
  if (!registryPath || !homeDir || !arg) throw new Error('usage: refreshWorker.ts step|loop <registry> <home> <arg>');
  if (mode === 'step') await step(registryPath, homeDir, arg);
  else if (mode === 'loop') await loop(registryPath, homeDir, Number(arg));
  else throw new Error(`unknown mode ${String(mode)}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${errorMessage(error)}\n${error instanceof Error ? (error.stack ?? '') : ''}`);
  process.exit(1);
});
