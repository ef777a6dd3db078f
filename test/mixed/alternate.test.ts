import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { mixedWorkspace, stopLeftovers, quotaOf, run, type MixedWorkspace, type RunResult } from './helpers';

/**
 * Our CLI and the original alternate on one workspace (issue 30): one program writes, the other reads what it wrote
 * and acts on it, and both answer the same. Each step names which program did what.
 */

function ok(result: RunResult, step: string): Record<string, unknown> {
  assert.equal(result.code, 0, `${step}: exit ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result.json;
}

function globalRegistry(w: MixedWorkspace): { goals: Record<string, unknown>[] } {
  return JSON.parse(fs.readFileSync(path.join(w.home, '.codex', 'loopx', 'registry.global.json'), 'utf8')) as {
    goals: Record<string, unknown>[];
  };
}

function agentsOf(goal: Record<string, unknown> | undefined): unknown {
  return (goal?.['coordination'] as Record<string, unknown> | undefined)?.['registered_agents'];
}

describe('mixed team: our CLI and the original alternate on one workspace', () => {
  it('we bootstrap; the original registers agents through the global registry; both read one roster and one quota', () => {
    const w = mixedWorkspace('bootstrap');
    ok(
      run('ours', w, ['bootstrap', '--project', w.ws, '--goal-id', 'first-goal', '--objective', 'Ship one.'], false),
      'ours bootstrap',
    );
    // A second goal bootstrapped into the existing project reaches the global registry too.
    ok(
      run('ours', w, ['bootstrap', '--project', w.ws, '--goal-id', 'second-goal', '--objective', 'Ship two.'], false),
      'ours bootstrap 2',
    );
    assert.deepEqual(
      globalRegistry(w).goals.map((g) => [g['id'], g['source_registry']]),
      [
        ['first-goal', w.registry],
        ['second-goal', w.registry],
      ],
    );
    // Our runtime stays in the project (`.loopx/runtime`, not the original's ~/.codex/loopx): the original reads the
    // registry's common_runtime_root as we do, so it sees the run we record there, from any folder.
    ok(run('ours', w, ['refresh-state', '--goal-id', 'first-goal']), 'ours refresh-state');
    const elsewhere = { ...w, ws: w.home };
    const seen = ok(run('original', elsewhere, ['status']), 'original status');
    const mine = ok(run('ours', elsewhere, ['status']), 'ours status');
    assert.equal(seen['runtime_root'], path.join(w.ws, '.loopx', 'runtime'));
    assert.deepEqual([seen['run_count'], mine['run_count']], [1, 1]);

    // The original's register-agent finds our goal in the global registry and writes both registries.
    const registered = ok(
      run('original', w, ['register-agent', '--goal-id', 'first-goal', '--agent-id', 'codex-a', '--execute'], false),
      'original register-agent',
    );
    assert.equal(registered['ok'], true, JSON.stringify(registered));
    const project = JSON.parse(fs.readFileSync(w.registry, 'utf8')) as { goals: Record<string, unknown>[] };
    const inProject = project.goals.find((g) => g['id'] === 'first-goal');
    const inGlobal = globalRegistry(w).goals.find((g) => g['id'] === 'first-goal');
    assert.deepEqual(agentsOf(inProject), ['codex-a']);
    assert.deepEqual(agentsOf(inGlobal), ['codex-a']);

    // Both programs decide on the goal the same way: same quota numbers and state.
    const theirs = run('original', w, ['quota', 'should-run', '--goal-id', 'first-goal', '--agent-id', 'codex-a']);
    const ourDecision = run('ours', w, ['quota', 'should-run', '--goal-id', 'first-goal', '--agent-id', 'codex-a']);
    assert.deepEqual(quotaOf(ourDecision), quotaOf(theirs), `ours ${ourDecision.stdout}\noriginal ${theirs.stdout}`);
    assert.equal(ourDecision.json['should_run'], theirs.json['should_run']);
    stopLeftovers(w);
    fs.rmSync(w.dir, { recursive: true, force: true });
  });

  it('the original bootstraps; our refresh-state (no --classification) and defer follow its defaults and refusals', () => {
    const w = mixedWorkspace('defaults');
    fs.mkdirSync(path.join(w.ws, '.git'));
    ok(
      run(
        'original',
        w,
        ['bootstrap', '--project', w.ws, '--goal-id', 'py-goal', '--objective', 'Ship it.', '--no-onboarding-scan'],
        false,
      ),
      'original bootstrap',
    );
    // refresh-state without --classification: the original's default, state_refreshed, in both programs.
    const refreshed = ok(run('ours', w, ['refresh-state', '--goal-id', 'py-goal']), 'ours refresh-state');
    assert.equal(refreshed['ok'], true, JSON.stringify(refreshed));
    const runtime = String(JSON.parse(fs.readFileSync(w.registry, 'utf8'))['common_runtime_root']);
    const index = fs
      .readFileSync(path.join(runtime, 'goals', 'py-goal', 'runs', 'index.jsonl'), 'utf8')
      .trim()
      .split('\n');
    assert.equal((JSON.parse(index.at(-1) ?? '{}') as Record<string, unknown>)['classification'], 'state_refreshed');
    const pyRefresh = ok(run('original', w, ['refresh-state', '--goal-id', 'py-goal']), 'original refresh-state');
    assert.equal(pyRefresh['ok'], true);

    // A bare capacity_available names no capability: the original refuses it, and so do we (nothing written).
    const state = path.join(w.ws, '.codex', 'goals', 'py-goal', 'ACTIVE_GOAL_STATE.md');
    const todoId = /todo_id=(todo_[a-z0-9]+)/.exec(fs.readFileSync(state, 'utf8'))?.[1] ?? '';
    const before = fs.readFileSync(state, 'utf8');
    const args = [
      'todo',
      'defer',
      '--goal-id',
      'py-goal',
      '--todo-id',
      todoId,
      '--reason',
      'later',
      '--resume-when',
      'capacity_available',
    ];
    const theirs = run('original', w, args);
    const mine = run('ours', w, args);
    assert.notEqual(theirs.code, 0, theirs.stdout);
    assert.notEqual(mine.code, 0, mine.stdout);
    assert.equal(fs.readFileSync(state, 'utf8'), before);
    stopLeftovers(w);
    fs.rmSync(w.dir, { recursive: true, force: true });
  });
});
