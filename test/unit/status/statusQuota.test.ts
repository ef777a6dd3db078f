import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { loadedQuotaSummary } from '../../support/quotaSummary';
import { fileSystemGoalReader, type GoalFileReader } from '../../../src/core/goal/files';
import { GoalStatusCache } from '../../../src/core/status/goalStatus';
import { goalItems } from '../../../src/core/status/statusPayload';
import { loadStatusAt } from '../../support/status';
import { statusQuotaState, statusQuotaSummaries } from '../../../src/core/status/statusQuota';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';

const CLOCK = fixedClock('2026-11-28T12:00:00Z');

function demo(): { dir: string; registryPath: string } {
  const dir = materializeDemoWorkspace(
    path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-status-quota-'))), 'demo'),
  );
  return { dir, registryPath: path.join(dir, '.loopx', 'registry.json') };
}

describe('status quota from the reads status already made', () => {
  it('attaches the same quota as a standalone summary, for every goal', async () => {
    const { dir, registryPath } = demo();
    const payload = await loadStatusAt({
      registryPath,
      homeDir: dir,
      quotaSummary: statusQuotaSummaries({ registryPath, clock: CLOCK, homeDir: dir }),
    });
    const standalone = await loadedQuotaSummary({ registryPath, goalId: 'tidy-notes', clock: CLOCK, homeDir: dir });
    const item = goalItems(payload)[0];
    assert.ok(item);
    // The same counts; the state follows the item's route (its open user gate holds it for the controller).
    assert.deepEqual(item.quota, statusQuotaState(standalone, item, null));
    assert.deepEqual({ ...item.quota, state: standalone.state, reason: standalone.reason }, standalone);
    assert.equal(item.quota?.state, 'operator_gate');
    assert.equal(
      payload.contract.warnings.some((w) => w.includes('quota summary unavailable')),
      false,
    );
  });

  it('hands the provider the registry, the raw entry and the run index status read (the index is read once)', async () => {
    const { dir, registryPath } = demo();
    let indexReads = 0;
    const reader: GoalFileReader = {
      ...fileSystemGoalReader,
      readRunIndex: async (file, options) => {
        indexReads++;
        const read = await fileSystemGoalReader.readRunIndex(file, options);
        // A spend only this read knows about: the quota must count it, so it used this read.
        return {
          ...read,
          rows: [
            {
              generated_at: '2026-11-28T11:59:00+00:00',
              classification: 'quota_slot_spent',
              slots: 5,
              json_exists: false,
              markdown_exists: false,
            },
            ...read.rows,
          ],
        };
      },
    };
    const seen: { entry: unknown; rows: number | undefined; registryGoals: unknown }[] = [];
    const provider = statusQuotaSummaries({ registryPath, clock: CLOCK, homeDir: dir });
    const payload = await loadStatusAt({
      registryPath,
      homeDir: dir,
      cache: new GoalStatusCache(reader),
      quotaSummary: (goal, sources) => {
        seen.push({
          entry: sources.registryEntry,
          rows: sources.index.kind === 'rows' ? sources.index.runIndex?.rows.length : undefined,
          registryGoals: sources.registry['goals'],
        });
        return provider(goal, sources);
      },
    });
    assert.equal(indexReads, 1);
    const item = goalItems(payload)[0];
    assert.equal(item?.quota?.spent_slots, 1 + 5, 'the demo spend plus the one only the shared read has');
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.rows, item?.unique_runs);
    assert.equal(
      seen[0]?.entry,
      (seen[0]?.registryGoals as unknown[])[0],
      'the raw entry object, unknown fields and all',
    );
  });

  it("a caller's cache keeps each goal's run index for its quota; release lets it go", async () => {
    const { dir, registryPath } = demo();
    const cache = new GoalStatusCache();
    await loadStatusAt({ registryPath, homeDir: dir, cache });
    const target = {
      goalId: 'tidy-notes',
      displayName: 'x',
      status: 'active',
      domain: null,
      projectRoot: dir,
      runtimeRoot: path.join(dir, '.loopx', 'runtime'),
      stateFile: null,
      agents: [],
    };
    assert.equal(cache.heldRunIndex(target)?.read?.rows.length, 3);
    assert.equal(
      cache.heldRunIndex(target)?.stamp?.size,
      fs.statSync(path.join(dir, '.loopx', 'runtime', 'goals', 'tidy-notes', 'runs', 'index.jsonl')).size,
    );
    cache.release(target);
    assert.equal(cache.heldRunIndex(target), undefined);
  });
});
