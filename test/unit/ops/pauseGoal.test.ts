import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import { runLoopx } from '../cli/run';

/** `pause-goal` / `resume-goal`: the owner's stop flag, written under the registry lock and read back. */
describe('pause-goal and resume-goal', () => {
  let workspace: string;
  const registry = () => join(workspace, '.loopx', 'registry.json');
  const goalStatus = () =>
    (JSON.parse(readFileSync(registry(), 'utf8')) as { goals: { id: string; status: string }[] }).goals[0]?.status;

  beforeEach(() => {
    workspace = materializeDemoWorkspace(join(mkdtempSync(join(tmpdir(), 'loopx-pause-')), 'ws'));
  });

  it('pauses: status paused, should-run answers paused with pause_cause goal_stopped; resume clears it', async () => {
    const paused = await runLoopx(['pause-goal', '--goal-id', 'tidy-notes', '--format', 'json'], { cwd: workspace });
    assert.equal(paused.code, 0, paused.stderr);
    assert.deepEqual(
      [paused.json()['status_before'], paused.json()['status_after'], paused.json()['written']],
      ['active', 'paused', true],
    );
    assert.equal(goalStatus(), 'paused');
    const decision = await runLoopx(
      ['quota', 'should-run', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--format', 'json'],
      { cwd: workspace },
    );
    assert.equal(decision.json()['state'], 'paused');
    assert.equal(decision.json()['pause_cause'], 'goal_stopped');
    assert.equal(decision.json()['should_run'], false);

    const resumed = await runLoopx(['resume-goal', '--goal-id', 'tidy-notes', '--format', 'json'], { cwd: workspace });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(goalStatus(), 'active');
    const after = await runLoopx(
      ['quota', 'should-run', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--format', 'json'],
      { cwd: workspace },
    );
    assert.notEqual(after.json()['state'], 'paused');
  });

  it('pausing a paused goal (or resuming a running one) writes nothing', async () => {
    await runLoopx(['pause-goal', '--goal-id', 'tidy-notes'], { cwd: workspace });
    const before = readFileSync(registry(), 'utf8');
    const again = await runLoopx(['pause-goal', '--goal-id', 'tidy-notes', '--format', 'json'], {
      cwd: workspace,
      now: '2026-02-01T00:00:00Z',
    });
    assert.equal(again.json()['written'], false);
    assert.equal(readFileSync(registry(), 'utf8'), before, 'not even updated_at moved');
    await runLoopx(['resume-goal', '--goal-id', 'tidy-notes'], { cwd: workspace });
    const running = readFileSync(registry(), 'utf8');
    const noop = await runLoopx(['resume-goal', '--goal-id', 'tidy-notes', '--format', 'json'], { cwd: workspace });
    assert.equal(noop.json()['written'], false);
    assert.equal(readFileSync(registry(), 'utf8'), running);
  });

  it('a registry it cannot parse is refused and left as it was; an unknown goal names the goals', async () => {
    const unknown = await runLoopx(['pause-goal', '--goal-id', 'nope', '--format', 'json'], { cwd: workspace });
    assert.equal(unknown.code, 1);
    assert.equal(unknown.error().code, 'goal_not_found');
    assert.deepEqual(unknown.error().details['goal_ids'], ['tidy-notes']);
    writeFileSync(registry(), '{ "goals": [ broken');
    const broken = await runLoopx(['pause-goal', '--goal-id', 'tidy-notes', '--format', 'json'], { cwd: workspace });
    assert.equal(broken.code, 1);
    assert.equal(readFileSync(registry(), 'utf8'), '{ "goals": [ broken');
  });
});
