import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { refreshState, runOperation } from '../../../src/core/ops/index';
import { LOOPX_VERSION } from '../../../src/core/version';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import { runLoopx } from './run';

/**
 * What the original LoopX spells that skills written for it run: `loopx version`, `loopx goal-lifecycle
 * --operation stop|resume`, and `refresh-state`'s delivery vocabularies; and the usage errors that keep
 * a bad value from being written (docs/compatibility.md, "Original spellings").
 */

/** Every file under `dir` with its content, to prove a refused command wrote nothing. */
function treeOf(dir: string): Record<string, string> {
  const tree: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true }).map(String).sort()) {
    const full = path.join(dir, entry);
    tree[entry] = fs.statSync(full).isDirectory() ? '<dir>' : fs.readFileSync(full, 'utf8');
  }
  return tree;
}

describe('the original LoopX spellings', () => {
  let workspace: string;
  let registry: string;

  beforeEach(() => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-original-spellings-')));
    workspace = materializeDemoWorkspace(path.join(root, 'workspace'));
    registry = path.join(workspace, '.loopx', 'registry.json');
  });

  const goalStatus = (): unknown =>
    (JSON.parse(fs.readFileSync(registry, 'utf8')) as { goals: { id: string; status?: unknown }[] }).goals.find(
      (goal) => goal.id === 'tidy-notes',
    )?.status;

  it('loopx version prints what loopx --version prints (loopx <version>), and loopx_version_v0 with --format json', async () => {
    const flag = await runLoopx(['--version']);
    const word = await runLoopx(['version']);
    assert.equal(flag.code, 0);
    assert.equal(word.code, 0);
    assert.equal(word.stdout, flag.stdout);
    assert.equal(word.stdout.trim(), `loopx ${LOOPX_VERSION}`);
    const json = await runLoopx(['--format', 'json', 'version']);
    assert.deepEqual(json.json(), {
      ok: true,
      schema_version: 'loopx_version_v0',
      name: 'loopx',
      version: LOOPX_VERSION,
    });
  });

  it('goal-lifecycle --operation stop|resume previews, then sets and clears the stop flag, in the original JSON shape', async () => {
    const base = ['--registry', registry, '--format', 'json', 'goal-lifecycle', '--goal-id', 'tidy-notes'];
    const before = treeOf(workspace);
    const preview = await runLoopx([...base, '--operation', 'stop'], { cwd: os.tmpdir() });
    assert.equal(preview.code, 0, preview.stdout);
    assert.deepEqual(treeOf(workspace), before, 'a preview writes nothing');
    const previewed = preview.json();
    assert.equal(previewed['schema_version'], 'loopx_goal_activation_transition_v1');
    assert.deepEqual(
      [
        previewed['dry_run'],
        previewed['before_state'],
        previewed['after_state'],
        previewed['changed'],
        previewed['written'],
      ],
      [true, 'active', 'stopped', true, false],
    );
    assert.deepEqual(previewed['readback'], {
      schema_version: 'loopx_goal_activation_readback_v1',
      status: 'not_executed',
      verified: false,
    });

    const stop = await runLoopx([...base, '--operation', 'stop', '--execute', '--reason', 'holiday'], {
      cwd: os.tmpdir(),
    });
    assert.equal(stop.code, 0, stop.stdout);
    assert.deepEqual(
      [stop.json()['ok'], stop.json()['written'], stop.json()['after_state'], stop.json()['reason']],
      [true, true, 'stopped', 'holiday'],
    );
    assert.equal((stop.json()['readback'] as { status: string }).status, 'verified');
    assert.equal(goalStatus(), 'paused', 'the stop flag of goal pause');
    const shouldRun = await runLoopx([
      '--registry',
      registry,
      '--format',
      'json',
      'quota',
      'should-run',
      '--goal-id',
      'tidy-notes',
      '--agent-id',
      'demo',
    ]);
    assert.equal((shouldRun.json()['quota'] as { state: string }).state, 'paused');

    const resume = await runLoopx([...base, '--operation', 'resume', '--execute'], { cwd: os.tmpdir() });
    assert.equal(resume.code, 0, resume.stdout);
    assert.deepEqual([resume.json()['before_state'], resume.json()['after_state']], ['stopped', 'active']);
    assert.equal(goalStatus(), 'active');

    const unknownGoal = await runLoopx([
      '--registry',
      registry,
      '--format',
      'json',
      'goal-lifecycle',
      '--goal-id',
      'nope',
      '--operation',
      'resume',
    ]);
    assert.equal(unknownGoal.code, 1);
    assert.deepEqual(
      [unknownGoal.json()['ok'], unknownGoal.json()['goal_id'], unknownGoal.json()['written']],
      [false, 'nope', false],
    );
    for (const operation of ['pause', 'start']) {
      const bad = await runLoopx([
        '--registry',
        registry,
        'goal-lifecycle',
        '--goal-id',
        'tidy-notes',
        '--operation',
        operation,
      ]);
      assert.equal(bad.code, 2, operation);
      assert.match(bad.stderr, /Allowed choices are stop, resume/);
    }
  });

  it('refresh-state takes only the original delivery vocabularies: anything else exits 2 and writes nothing', async () => {
    const refresh = [
      'refresh-state',
      '--goal-id',
      'tidy-notes',
      '--agent-id',
      'demo',
      '--classification',
      'validated_progress',
    ];
    const before = treeOf(workspace);
    for (const [flag, value] of [
      ['--delivery-outcome', 'delivered'],
      ['--delivery-batch-scale', 'small'],
      ['--delivery-outcome', 'Outcome_Progress'],
      ['--delivery-batch-scale', ''],
    ] as const) {
      const run = await runLoopx([...refresh, flag, value], { cwd: workspace });
      assert.equal(run.code, 2, `${flag} ${value}`);
      assert.match(run.stderr, /is invalid\. Allowed choices are/, `${flag} ${value}`);
    }
    assert.deepEqual(treeOf(workspace), before, 'nothing written');
    // The library (every surface) refuses them too, before anything is read.
    await assert.rejects(
      runOperation(
        refreshState,
        { goalId: 'tidy-notes', classification: 'x', deliveryOutcome: 'delivered' },
        {
          cwd: workspace,
          env: {},
          clock: fixedClock('2026-01-15T10:00:00Z'),
          homeDir: os.tmpdir(),
        },
      ),
      /deliveryOutcome must be one of surface_only, outcome_gap, outcome_progress, primary_goal_outcome/,
    );

    const ok = await runLoopx(
      [
        '--format',
        'json',
        ...refresh,
        '--delivery-outcome',
        'outcome_progress',
        '--delivery-batch-scale',
        'bounded_segment',
      ],
      { cwd: workspace },
    );
    assert.equal(ok.code, 0, ok.stdout);
    // The original's alias is recorded as what it stands for.
    assert.equal(ok.json()['delivery_batch_scale'], 'single_surface');
    assert.equal(ok.json()['delivery_outcome'], 'outcome_progress');
  });

  it('--turn-instance-id "" is a usage error (exit 2) wherever the flag exists, and writes nothing', async () => {
    const before = treeOf(workspace);
    const goal = ['--goal-id', 'tidy-notes'];
    for (const argv of [
      ['quota', 'should-run', ...goal, '--agent-id', 'demo'],
      ['quota', 'spend-slot', ...goal, '--agent-id', 'demo', '--execute'],
      ['quota', 'void-slot', ...goal, '--agent-id', 'demo', '--execute'],
      ['refresh-state', ...goal, '--agent-id', 'demo', '--classification', 'validated_progress'],
      ['todo', 'complete', ...goal, '--todo-id', 'todo_related', '--agent-id', 'demo', '--no-follow-up'],
      ['turn', 'plan', ...goal, '--agent-id', 'demo'],
      ['turn', 'run-once', ...goal, '--agent-id', 'demo', '--execute'],
      ['evidence-log', ...goal],
    ]) {
      for (const blank of ['', '  ']) {
        const run = await runLoopx([...argv, '--turn-instance-id', blank], { cwd: workspace });
        assert.equal(run.code, 2, `${argv.slice(0, 2).join(' ')}: ${run.stderr}`);
        assert.match(run.stderr, /--turn-instance-id must be a turn id that is not blank/, argv.join(' '));
      }
    }
    assert.deepEqual(treeOf(workspace), before, 'nothing written');
  });
});
