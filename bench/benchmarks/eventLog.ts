import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseRolloutEvents, rolloutEventId, ROLLOUT_EVENT_LOG_FILE } from '../../src/core/evidence/rolloutLog';
import { fixedCase } from '../core/cases';
import type { BenchContext, Prepared, RunnableBenchmark } from '../core/types';

export const EVENT_PROCESSES = 4;
export const EVENT_ROWS = 2_000;
const GOAL_ID = 'event-goal';

interface ChildReport {
  appended: number;
  lock_timeouts: number;
}

/** Starts the writers at once and waits for all of them; a failing writer fails the run. */
function appendFromProcesses(ctx: BenchContext, mode: 'loopx' | 'raw', goalDir: string): Promise<ChildReport[]> {
  const script = path.join(ctx.buildDir, 'appendEvents.cjs');
  return Promise.all(
    Array.from(
      { length: EVENT_PROCESSES },
      (_, child) =>
        new Promise<ChildReport>((resolve, reject) => {
          const args = [script, mode, goalDir, GOAL_ID, String(child), String(EVENT_ROWS / EVENT_PROCESSES)];
          const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
          let stdout = '';
          let stderr = '';
          proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
          proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          proc.on('error', reject);
          proc.on('close', (code) =>
            code === 0
              ? resolve(JSON.parse(stdout) as ChildReport)
              : reject(new Error(`writer ${child} exited with ${String(code)}: ${stderr.slice(0, 600)}`)),
          );
        }),
    ),
  );
}

function contention(ctx: BenchContext, mode: 'loopx' | 'raw'): Prepared {
  const dirs: string[] = [];
  let lockTimeouts = 0;
  return {
    run: async () => {
      const goalDir = path.join(ctx.tmpDir, `${mode}-${dirs.length}`, '.loopx', 'runtime', 'goals', GOAL_ID);
      dirs.push(goalDir);
      const reports = await appendFromProcesses(ctx, mode, goalDir);
      lockTimeouts += reports.reduce((sum, r) => sum + r.lock_timeouts, 0);
    },
    verify: async () => {
      for (const [index, goalDir] of dirs.entries()) {
        const parsed = parseRolloutEvents(fs.readFileSync(path.join(goalDir, ROLLOUT_EVENT_LOG_FILE), 'utf8'));
        const distinct = new Set(parsed.events.map((e) => e.run_id));
        const bad = parsed.events.filter((e) => e.event_id !== rolloutEventId(e)).length;
        if (parsed.events.length !== EVENT_ROWS || parsed.skipped.length > 0 || distinct.size !== EVENT_ROWS || bad > 0)
          throw new Error(
            `run ${index + 1}: ${parsed.events.length} events, ${distinct.size} distinct, ${parsed.skipped.length} torn or invalid, ${bad} bad ids (expected ${EVENT_ROWS}): rows were lost`,
          );
      }
      const timeouts = mode === 'loopx' ? `; ${lockTimeouts} lock timeout(s) retried` : '';
      return `${dirs.length} run(s) × ${EVENT_ROWS.toLocaleString('en-US')} events from ${EVENT_PROCESSES} processes: every event present exactly once, valid id, no torn line${timeouts}`;
    },
    cleanup: async () => {
      for (const goalDir of dirs)
        fs.rmSync(path.resolve(goalDir, '..', '..', '..', '..'), { recursive: true, force: true });
    },
  };
}

export const eventLogAppendContention: RunnableBenchmark = {
  kind: 'process',
  name: 'event-log-append-contention',
  title: `Append ${EVENT_ROWS.toLocaleString('en-US')} rollout events from ${EVENT_PROCESSES} processes`,
  description: `${EVENT_PROCESSES} processes each append ${EVENT_ROWS / EVENT_PROCESSES} rollout events one by one to one goal's rollout-event-log.jsonl through appendRolloutEvents (lock, torn-line check, one line); the figure is the wall time until all have exited (rows/s = ${EVENT_ROWS} / time), and the bench fails unless every event is there once with a valid event_id`,
  baselineDescription: `${EVENT_PROCESSES} processes each append the same ${EVENT_ROWS / EVENT_PROCESSES} lines with O_APPEND and no lock`,
  cases: [fixedCase(`${EVENT_PROCESSES} × ${EVENT_ROWS / EVENT_PROCESSES} events`, null, 3, 0)],
  unitLabel: 'events',
  units: () => EVENT_ROWS,
  prepare: async (ctx) => contention(ctx, 'loopx'),
  prepareBaseline: async (ctx) => contention(ctx, 'raw'),
};
