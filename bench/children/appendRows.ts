import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../src/core/clock';
import { isLoopxError } from '../../src/core/errors';
import { RUN_INDEX_FILE } from '../../src/core/runtime/layout';
import { appendRun, runArtifactStem } from '../../src/core/runtime/runIndex';
import { formatLocalIsoSeconds } from '../../src/core/runtime/time';

/**
 * One of the processes of the append-contention benchmark:
 *   appendRows.cjs <loopx|raw> <runtimeRoot> <goalId> <child> <children> <rows>
 * `loopx` appends through appendRun (lock, artifacts, index line) with the default lock policy,
 * retrying a lock timeout; `raw` only appends the index line with O_APPEND (the raw limit).
 * Row i of child c is stamped base + (i·children + c) s, so every row has its own artifact name.
 * Prints {"appended":n,"lock_timeouts":n}.
 */
const BASE = Date.parse('2026-11-28T00:00:00Z');

async function main(): Promise<void> {
  const [mode, runtimeRoot = '', goalId = '', childText = '0', childrenText = '1', rowsText = '0'] =
    process.argv.slice(2);
  const child = Number(childText);
  const children = Number(childrenText);
  const rows = Number(rowsText);
  let appended = 0;
  let lockTimeouts = 0;
  const runsDir = path.join(runtimeRoot, 'goals', goalId, 'runs');
  for (let i = 0; i < rows; i++) {
    const generatedAt = formatLocalIsoSeconds(new Date(BASE + (i * children + child) * 1000), 0);
    const record = {
      generated_at: generatedAt,
      classification: 'validated_progress',
      recommended_action: `row ${i} of child ${child}`,
      health_check: 'ok',
      agent_id: `bench-${child}`,
      turn_instance_id: `c${child}-${i}`,
    };
    if (mode === 'raw') {
      const stem = runArtifactStem(generatedAt);
      fs.mkdirSync(runsDir, { recursive: true });
      fs.appendFileSync(
        path.join(runsDir, RUN_INDEX_FILE),
        `${JSON.stringify({ ...record, goal_id: goalId, json_path: `${stem}.json`, markdown_path: `${stem}.md` })}\n`,
      );
      appended++;
      continue;
    }
    for (;;) {
      try {
        await appendRun({
          runtimeRoot,
          goalId,
          record,
          markdown: `# run ${i} of child ${child}\n`,
          clock: fixedClock(generatedAt),
          lock: { agentId: `bench-${child}` },
        });
        appended++;
        break;
      } catch (error) {
        if (!isLoopxError(error, 'lock_acquire_timeout')) throw error;
        lockTimeouts++;
      }
    }
  }
  process.stdout.write(`${JSON.stringify({ appended, lock_timeouts: lockTimeouts })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
