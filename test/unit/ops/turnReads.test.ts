import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { installDemoAgent } from '../../../src/core/executors/config';
import { holdsLockOn } from '../../../src/core/fs/fileLock';
import { observeSafeReads } from '../../../src/core/fs/safeRead';
import { runOperation } from '../../../src/core/ops/run';
import { turnRunOnce } from '../../../src/core/ops/turn';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import { DEMO_AGENT_SOURCE_ARGV } from '../turn/helpers';

interface Counted {
  unlocked: number;
  locked: number;
  /** Under the goal's turn-admission lock (not the file's own lock). */
  admission: number;
}

/**
 * Counts the safe reads of `files` during `fn`, split by whether the reader held that file's lock, or else
 * the turn-admission lock `admissionLock`.
 */
async function countReads(
  files: readonly string[],
  admissionLock: string,
  fn: () => Promise<unknown>,
): Promise<Map<string, Counted>> {
  const counts = new Map(files.map((file) => [file, { unlocked: 0, locked: 0, admission: 0 }]));
  const previous = observeSafeReads((file) => {
    const counted = counts.get(path.resolve(file));
    if (counted === undefined) return;
    if (holdsLockOn(file)) counted.locked++;
    else if (holdsLockOn(admissionLock)) counted.admission++;
    else counted.unlocked++;
  });
  try {
    await fn();
  } finally {
    observeSafeReads(previous);
  }
  return counts;
}

describe('a palette-style run of one turn reads the registry and the state file once (issue 13)', function () {
  this.timeout(60_000);
  let workspace: string;
  let previousDemoAgent: readonly string[] | undefined;
  before(() => {
    previousDemoAgent = installDemoAgent(DEMO_AGENT_SOURCE_ARGV);
  });
  after(() => installDemoAgent(previousDemoAgent));
  beforeEach(() => {
    workspace = materializeDemoWorkspace(
      path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-reads-'))), 'ws'),
    );
  });
  afterEach(() => fs.rmSync(path.dirname(workspace), { recursive: true, force: true }));

  it('one registry read and one state-file read outside locks; admission re-reads the registry under its lock; the compare-and-swap re-reads happen inside the lock', async () => {
    const registry = path.join(workspace, '.loopx', 'registry.json');
    const admissionLock = path.join(workspace, '.loopx', 'runtime', 'goals', 'tidy-notes', 'turns', '.admission');
    const state = path.join(workspace, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md');
    let status = '';
    const counts = await countReads([registry, state], admissionLock, async () => {
      const result = await runOperation(
        turnRunOnce,
        { goalId: 'tidy-notes', agentId: 'demo', execute: true },
        {
          cwd: workspace,
          env: { PATH: process.env['PATH'] ?? '' },
          clock: fixedClock('2026-11-28T10:00:00Z'),
          homeDir: os.homedir(),
          registryPath: registry,
        },
      );
      status = result.status;
    });
    assert.equal(status, 'committed', 'the demo turn ran to the end');
    // Admission decides on the current registry entry (a pause or a lowered limit since the plan holds: issue 34),
    // read once more under the admission lock; nothing else reads the registry again.
    assert.deepEqual(counts.get(registry), { unlocked: 1, locked: 0, admission: 1 });
    const stateReads = counts.get(state);
    assert.equal((stateReads?.unlocked ?? 0) + (stateReads?.admission ?? 0), 1, 'the plan reads the state file once');
    assert.ok((counts.get(state)?.locked ?? 0) >= 1, 'the writeback re-reads the state file under its lock');
  });
});
