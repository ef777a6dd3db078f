/** Child process for the run-index concurrency test: `append <runtimeRoot> <goalId> <count> <agent>`. */
import { fixedClock } from '../../../../src/core/clock';
import { appendRun } from '../../../../src/core/runtime/runIndex';

async function main(): Promise<void> {
  const [runtimeRoot = '', goalId = '', count = '0', agent = ''] = process.argv.slice(2);
  // One pinned second for every row: all 2,000 artifacts compete for the same stem.
  const clock = fixedClock('2026-01-01T04:00:00Z');
  for (let i = 0; i < Number(count); i++) {
    await appendRun({
      runtimeRoot,
      goalId,
      clock,
      record: {
        classification: 'state_refreshed',
        recommended_action: `${agent}#${i}`,
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
