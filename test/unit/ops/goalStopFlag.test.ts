import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { createGoal } from '../../../src/core/ops/createGoal';
import type { OperationEnvironment } from '../../../src/core/ops/operation';
import { pauseGoal } from '../../../src/core/ops/pauseGoal';
import { quotaHistory, quotaStatus } from '../../../src/core/ops/quota';
import { resumeGoal } from '../../../src/core/ops/resumeGoal';
import { runOperation } from '../../../src/core/ops/run';

describe('pause / resume (the stop flag) and quota history as operations', () => {
  let project: string;
  let env: OperationEnvironment;
  const registryPath = () => join(project, '.loopx', 'registry.json');
  const goalEntry = () =>
    (JSON.parse(readFileSync(registryPath(), 'utf8')) as { goals: Record<string, unknown>[] }).goals.find(
      (g) => g['id'] === 'g1',
    ) as Record<string, unknown>;

  beforeEach(async () => {
    project = mkdtempSync(join(tmpdir(), 'loopx-stop-'));
    env = {
      cwd: project,
      env: {},
      clock: fixedClock('2026-01-01T00:00:00Z'),
      homeDir: project,
      registryPath: join(project, '.loopx', 'registry.json'),
    };
    await runOperation(createGoal, { project, goalId: 'g1', objective: 'Ship <b>it</b>.' }, env);
  });
  afterEach(() => rmSync(project, { recursive: true, force: true }));

  it('previews a pause without writing, then pauses: quota answers paused, other fields kept', async () => {
    const before = readFileSync(registryPath(), 'utf8');
    const preview = await runOperation(pauseGoal, { goalId: 'g1' }, env);
    assert.equal(preview.dry_run, true);
    assert.equal(preview.changed, true);
    assert.equal(preview.status_after, 'paused');
    assert.equal(readFileSync(registryPath(), 'utf8'), before, 'a preview writes nothing');

    const objectiveBefore = goalEntry()['objective'];
    const applied = await runOperation(pauseGoal, { goalId: 'g1', execute: true }, env);
    assert.deepEqual(
      [applied.written, applied.verified, applied.status_before, applied.status_after],
      [true, true, 'active', 'paused'],
    );
    assert.equal(goalEntry()['status'], 'paused');
    assert.equal(goalEntry()['objective'], objectiveBefore);
    const quota = await runOperation(quotaStatus, { goalId: 'g1' }, env);
    assert.equal(quota.state, 'paused');

    const again = await runOperation(pauseGoal, { goalId: 'g1', execute: true }, env);
    assert.deepEqual([again.changed, again.written], [false, false], 'pausing a paused goal writes nothing');

    // An owner-stopped goal (the original's `stopped`) is already paused: its status is kept as written.
    const registry = JSON.parse(readFileSync(registryPath(), 'utf8')) as { goals: Record<string, unknown>[] };
    registry.goals[0]!['status'] = 'stopped';
    writeFileSync(registryPath(), JSON.stringify(registry));
    const stopped = await runOperation(pauseGoal, { goalId: 'g1', execute: true }, env);
    assert.deepEqual([stopped.changed, stopped.written, goalEntry()['status']], [false, false, 'stopped']);
  });

  it('resumes a paused (or owner-stopped) goal to active; resuming a running goal changes nothing', async () => {
    const idle = await runOperation(resumeGoal, { goalId: 'g1', execute: true }, env);
    assert.deepEqual([idle.changed, idle.written], [false, false]);
    await runOperation(pauseGoal, { goalId: 'g1', execute: true }, env);
    const resumed = await runOperation(resumeGoal, { goalId: 'g1', execute: true }, env);
    assert.deepEqual([resumed.written, resumed.status_after], [true, 'active']);
    assert.notEqual((await runOperation(quotaStatus, { goalId: 'g1' }, env)).state, 'paused');
  });

  it('refuses an unreadable registry and leaves it byte for byte', async () => {
    writeFileSync(registryPath(), '{ "goals": [ broken');
    await assert.rejects(runOperation(pauseGoal, { goalId: 'g1', execute: true }, env));
    assert.equal(readFileSync(registryPath(), 'utf8'), '{ "goals": [ broken');
  });

  it('quota history lists no spends for a new goal, with the window and the limits', async () => {
    const history = await runOperation(quotaHistory, { goalId: 'g1' }, env);
    assert.deepEqual(history.spends, []);
    assert.ok(Date.parse(history.window_end) > Date.parse(history.window_start));
    assert.ok(history.allowed_slots > 0);
  });
});
