/**
 * Child process for the event-log contention test: `<goalDir> <goalId> <writer> <count>`. Waits at
 * the start barrier, then appends `count` events one by one through our locked append.
 */
import { fixedClock } from '../../../../src/core/clock';
import { appendRolloutEvents, buildRolloutEvent } from '../../../../src/core/evidence/rolloutLog';
import { awaitGo } from '../../../support/barrier';

async function main(): Promise<void> {
  const [goalDir = '', goalId = '', writer = '', count = '0'] = process.argv.slice(2);
  const clock = fixedClock('2026-01-15T10:00:00Z');
  await awaitGo();
  for (let i = 0; i < Number(count); i++) {
    const event = buildRolloutEvent({
      goalId,
      eventKind: 'validation',
      recordedAt: clock.now().toISOString(),
      agentId: writer,
      runId: `${writer}-${i}`,
      summary: `writer ${writer} event ${i} ${'x'.repeat(200)}`,
    });
    await appendRolloutEvents(goalDir, [event], { lock: { clock, agentId: writer } });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
