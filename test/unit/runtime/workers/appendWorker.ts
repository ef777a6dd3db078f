/**
 * Child process for the run-index concurrency tests: `append <runtimeRoot> <goalId> <count> <agent> [padBytes]`.
 * Started behind a barrier (test/unit/fs/barrier.ts): it appends only once every worker is ready.
 * `padBytes` pads each row's recommended_action so one index line is larger than a single write.
 */
import { fixedClock } from '../../../../src/core/clock';
import { appendRun } from '../../../../src/core/runtime/runIndexWrite';
import { awaitGo } from '../../../support/barrier';

async function main(): Promise<void> {
  const [runtimeRoot = '', goalId = '', count = '0', agent = '', padBytes = '0'] = process.argv.slice(2);
  // One pinned second for every row: all the artifacts compete for the same stem.
  const clock = fixedClock('2026-01-01T04:00:00Z');
  const pad = Number(padBytes) > 0 ? ` ${agent[agent.length - 1] ?? 'x'}`.repeat(Number(padBytes) / 2) : '';
  await awaitGo();
  for (let i = 0; i < Number(count); i++) {
    await appendRun({
      runtimeRoot,
      goalId,
      clock,
      record: {
        classification: 'state_refreshed',
        recommended_action: `${agent}#${i}${pad}`,
        health_check: 'ok',
        agent_id: agent,
      },
      markdown: `# ${agent} run ${i}\n`,
      lock: { agentId: agent, timeoutMs: 120_000, pollMs: 2 },
    });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
