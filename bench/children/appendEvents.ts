import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../src/core/clock';
import { isLoopxError } from '../../src/core/errors';
import { appendRolloutEvents, buildRolloutEvent, ROLLOUT_EVENT_LOG_FILE } from '../../src/core/evidence/rolloutLog';

/**
 * One of the processes of the event-log append-contention benchmark:
 *   appendEvents.cjs <loopx|raw> <goalDir> <goalId> <child> <rows>
 * `loopx` appends each event through appendRolloutEvents (our lock, torn-line repair, one line),
 * retrying a lock timeout; `raw` appends the same line with O_APPEND and no lock (the raw limit).
 * Prints {"appended":n,"lock_timeouts":n}.
 */
async function main(): Promise<void> {
  const [mode, goalDir = '', goalId = '', child = '0', rowsText = '0'] = process.argv.slice(2);
  const rows = Number(rowsText);
  const clock = fixedClock('2026-12-01T06:00:00Z');
  let appended = 0;
  let lockTimeouts = 0;
  fs.mkdirSync(goalDir, { recursive: true });
  for (let i = 0; i < rows; i++) {
    const event = buildRolloutEvent({
      goalId,
      eventKind: 'refresh_state',
      recordedAt: clock.now().toISOString().replace('.000Z', 'Z'),
      agentId: `bench-${child}`,
      runId: `c${child}-${i}`,
      summary: `row ${i} of writer ${child}`,
    });
    if (mode === 'raw') {
      fs.appendFileSync(path.join(goalDir, ROLLOUT_EVENT_LOG_FILE), `${JSON.stringify(event)}\n`);
      appended++;
      continue;
    }
    for (;;) {
      try {
        await appendRolloutEvents(goalDir, [event], { lock: { clock, agentId: `bench-${child}` } });
        appended++;
        break;
      } catch (error) {
        if (!isLoopxError(error, 'lock_acquire_timeout')) throw error;
        lockTimeouts++;
      }
    }
  }
  process.stdout.write(JSON.stringify({ appended, lock_timeouts: lockTimeouts }));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
