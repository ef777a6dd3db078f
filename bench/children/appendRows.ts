import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../src/core/clock';
import { isLoopxError } from '../../src/core/errors';
import { RUN_INDEX_FILE } from '../../src/core/runtime/layout';
import { appendRun, runArtifactStem } from '../../src/core/runtime/runIndexWrite';
import { formatLocalIsoSeconds } from '../../src/core/runtime/time';

/**
 * One of the processes of the append-contention benchmark:
 *   appendRows.cjs <loopx|raw> <runtimeRoot> <goalId> <child> <children> <rows>
 * `loopx` appends through appendRun (lock, artifacts, index line) with the default lock policy,
 * retrying a lock timeout; `raw` makes the same writes with plain fs calls and no lock (both records
 * fsynced, the folder fsynced, the line appended with O_APPEND): what the disk allows.
 * Row i of child c is stamped base + (i·children + c) s, so every row has its own artifact name.
 * Prints {"appended":n,"lock_timeouts":n}.
 */
const BASE = Date.parse('2026-11-28T00:00:00Z');

function writeSynced(dir: string, name: string, text: string): void {
  const temp = path.join(dir, `.${name}.tmp`);
  const fd = fs.openSync(temp, 'wx');
  try {
    fs.writeFileSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, path.join(dir, name));
}

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
      // What the disk allows for the same rows: both records written and fsynced under fresh names
      // (temp file, rename), the folder fsynced, the line appended with O_APPEND; no lock, no checks.
      const stem = `${runArtifactStem(generatedAt)}-c${child}`;
      fs.mkdirSync(runsDir, { recursive: true });
      const line = JSON.stringify({
        ...record,
        goal_id: goalId,
        json_path: path.join(runsDir, `${stem}.json`),
        markdown_path: path.join(runsDir, `${stem}.md`),
      });
      writeSynced(runsDir, `${stem}.json`, `${JSON.stringify(record, null, 2)}\n`);
      writeSynced(runsDir, `${stem}.md`, `# run ${i} of child ${child}\n`);
      const dirFd = fs.openSync(runsDir, 'r');
      fs.fsyncSync(dirFd);
      fs.closeSync(dirFd);
      fs.appendFileSync(path.join(runsDir, RUN_INDEX_FILE), `${line}\n`);
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
