import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { statusEvents } from '../../../src/api/statusEvents';
import type { LoopxQuotaChanged, LoopxTurnEnded } from '../../../src/api/types';
import { fixedClock } from '../../../src/core/clock';
import { StatusSource } from '../../../src/core/server/statusSource';
import { LiveStatusModel, type StatusDiff } from '../../../src/core/status/liveStatus';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import { buildCliBundle, runNode } from '../support/cliProcess';

const NOW = '2026-11-29T10:00:00Z';

/** A minimal vscode.Event source for statusEvents. */
function diffSource(model: LiveStatusModel) {
  return (listener: (diff: StatusDiff) => void) => model.onDidChange(listener);
}

describe('the live status model', function () {
  this.timeout(120_000);
  let cli = '';
  let scratch = '';
  let registryPath = '';
  let model: LiveStatusModel;

  before(async () => {
    cli = await buildCliBundle();
  });
  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-live-'));
    const workspace = materializeDemoWorkspace(path.join(scratch, 'workspace'));
    registryPath = path.join(workspace, '.loopx', 'registry.json');
    model = new LiveStatusModel({ registryPath, homeDir: os.homedir(), clock: fixedClock(NOW), watch: false });
  });
  afterEach(() => {
    model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('reports a turn run by another process as a new run with its todo, and its spend as a quota change', async () => {
    const first = await model.current();
    assert.equal(first.ok, true);
    const diffs: StatusDiff[] = [];
    model.onDidChange((diff) => diffs.push(diff));
    const ended: LoopxTurnEnded[] = [];
    const quota: LoopxQuotaChanged[] = [];
    const events = statusEvents(diffSource(model) as never);
    events.onDidEndTurn((event) => ended.push(event));
    events.onDidChangeQuota((event) => quota.push(event));

    const run = await runNode(
      [
        cli,
        '--registry',
        registryPath,
        'turn',
        'run-once',
        '--goal-id',
        'tidy-notes',
        '--agent-id',
        'demo',
        '--execute',
        '--format',
        'json',
      ],
      path.dirname(path.dirname(registryPath)),
      { LOOPX_NOW: NOW },
    );
    assert.equal(run.code, 0, run.stderr);

    // Nothing told the model: a refresh notices the changed stamps by itself.
    await model.refresh();
    assert.equal(diffs.length, 1);
    assert.deepEqual(
      ended.map((e) => [e.goalId, e.agentId, e.todoId, e.classification]),
      [['tidy-notes', 'demo', 'todo_related', 'validated_completion']],
    );
    assert.deepEqual(
      quota.map((q) => [q.goalId, q.quota.spent_slots]),
      [['tidy-notes', 1]],
    );
    assert.ok(diffs[0]?.changed.includes('tidy-notes'));
  });

  it('tells nobody when nothing changed, and reports a settings change as a quota change only', async () => {
    await model.current();
    const diffs: StatusDiff[] = [];
    model.onDidChange((diff) => diffs.push(diff));
    model.invalidate();
    await model.current();
    // A file rewritten with the same content changes its stamp and forces a rebuild, but no status.
    const statePath = path.join(
      path.dirname(path.dirname(registryPath)),
      '.codex',
      'goals',
      'tidy-notes',
      'ACTIVE_GOAL_STATE.md',
    );
    const later = new Date(Date.now() + 5_000);
    fs.writeFileSync(statePath, fs.readFileSync(statePath));
    fs.utimesSync(statePath, later, later);
    const rebuilds = model.rebuilds;
    model.invalidate();
    await model.current();
    assert.equal(model.rebuilds, rebuilds + 1, 'the changed stamp rebuilt the snapshot');
    assert.equal(diffs.length, 0);

    const registry = JSON.parse(fs.readFileSync(registryPath, 'utf8')) as {
      goals: { quota: Record<string, unknown> }[];
    };
    (registry.goals[0] as { quota: Record<string, unknown> }).quota['compute'] = 0.25;
    fs.writeFileSync(registryPath, JSON.stringify(registry));
    model.invalidate();
    await model.current();
    assert.equal(diffs.length, 1);
    assert.deepEqual(diffs[0]?.newRuns, []);
    assert.deepEqual(
      diffs[0]?.quotaChanged.map((q) => [q.goalId, q.quota?.compute, q.quota?.allowed_slots]),
      [['tidy-notes', 0.25, 12]],
    );
  });

  it('shares one snapshot with the status server source built on it', async () => {
    const source = new StatusSource({ registryPath, homeDir: os.homedir(), clock: fixedClock(NOW), model });
    const served = await source.current();
    assert.equal(served.ok, true);
    const rebuildsBefore = model.rebuilds;
    await source.current();
    assert.equal(model.rebuilds, rebuildsBefore, 'the source reads the model, it does not rebuild on its own');
    source.close();
    assert.equal((await model.current()).ok, true, 'closing a source that did not make the model leaves it open');
  });
});
