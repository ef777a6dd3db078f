import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isLoopxError } from '../../../src/core/errors';
import {
  RegistryValidationSchema,
  validateRegistryDocument,
  validateRegistryFile,
  type RegistryValidation,
} from '../../../src/core/registry/validate';
import { tempDir, writeJson } from './helpers';

const HOME = '/home/tester';

function completeGoal(id: string, repo: string, stateFile = 'state.md'): Record<string, unknown> {
  return { id, domain: 'd', repo, state_file: stateFile, adapter: { kind: 'generic_project_goal_v0' } };
}

async function validate(file: string): Promise<RegistryValidation> {
  const result = await validateRegistryFile(file, { homeDir: HOME });
  assert.ok('goals' in result, 'expected a validation, not a missing-file result');
  return RegistryValidationSchema.parse(result);
}

describe('registry validation (loopx registry)', () => {
  it('case 27: reports problems in entry order with the original codes, messages and scopes', async () => {
    const dir = tempDir();
    const file = path.join(dir, '.loopx', 'registry.json');
    writeJson(file, { goals: [completeGoal('a', dir), completeGoal('a', dir), { id: 'b' }, 'junk', { domain: 'x' }] });
    const result = await validate(file);
    assert.equal(result.ok, false);
    assert.equal(result.goal_count, 4);
    assert.deepEqual(result.status_counts, { unknown: 4 });
    assert.deepEqual(result.problems, [
      'duplicate goal id: a',
      'b: missing repo',
      'b: missing domain',
      'b: missing state_file',
      'b: missing adapter.kind',
      'non-object goal entry',
      'goal entry missing id',
      '<missing>: missing repo',
      '<missing>: missing state_file',
      '<missing>: missing adapter.kind',
    ]);
    assert.deepEqual(
      result.problem_diagnostics.map((d) => [d.code, d.scope]),
      [
        ['registry_duplicate_goal_id', 'global'],
        ['registry_goal_missing_repo', 'goal'],
        ['registry_goal_missing_domain', 'goal'],
        ['registry_goal_missing_state_file', 'goal'],
        ['registry_goal_missing_adapter_kind', 'goal'],
        ['registry_goal_not_object', 'global'],
        ['registry_goal_missing_id', 'global'],
        ['registry_goal_missing_repo', 'global'],
        ['registry_goal_missing_state_file', 'global'],
        ['registry_goal_missing_adapter_kind', 'global'],
      ],
    );
    for (const diagnostic of result.problem_diagnostics) {
      assert.equal(diagnostic.schema_version, 'loopx_contract_error_diagnostic_v0');
      assert.equal(diagnostic.severity, 'error');
    }
    assert.ok(!result.problem_diagnostics.some((d) => d.code === 'registry_state_file_shared'));
    assert.deepEqual(
      result.goals.map((g) => g.id),
      ['a', 'a', 'b', ''],
    );
  });

  it('case 28: two goals on one resolved state file are reported once, with scope goals', async () => {
    const dir = tempDir();
    const file = path.join(dir, '.loopx', 'registry.json');
    writeJson(file, { goals: [completeGoal('a', dir, 's.md'), completeGoal('b', dir, './s.md')] });
    const result = await validate(file);
    assert.equal(result.ok, false);
    assert.deepEqual(result.problems, [`state_file shared by multiple goals: a, b -> ${path.join(dir, 's.md')}`]);
    assert.equal(result.problem_diagnostics[0]?.scope, 'goals');
    assert.deepEqual(result.problem_diagnostics[0]?.goal_ids, ['a', 'b']);
    assert.equal(result.problem_diagnostics[0]?.code, 'registry_state_file_shared');
  });

  it('counts only goals with an id in repo_goal_count, as the original does', async () => {
    const dir = tempDir();
    const file = path.join(dir, '.loopx', 'registry.json');
    writeJson(file, { goals: [{ repo: dir }, { id: '', repo: dir }, completeGoal('fine', dir)] });
    const result = await validate(file);
    assert.deepEqual(
      result.goals.map((g) => [g.id, g.repo_goal_count]),
      [
        ['', 1],
        ['', 1],
        ['fine', 1],
      ],
    );
  });

  it('reports several shared state files in the order of their paths, not of the entries', async () => {
    const dir = tempDir();
    const file = path.join(dir, '.loopx', 'registry.json');
    writeJson(file, {
      goals: [
        completeGoal('z1', dir, 'z.md'),
        completeGoal('a1', dir, 'a.md'),
        completeGoal('z2', dir, 'z.md'),
        completeGoal('a2', dir, 'a.md'),
      ],
    });
    const result = await validate(file);
    assert.deepEqual(result.problems, [
      `state_file shared by multiple goals: a1, a2 -> ${path.join(dir, 'a.md')}`,
      `state_file shared by multiple goals: z1, z2 -> ${path.join(dir, 'z.md')}`,
    ]);
  });

  it('case 29: missing file, goals not a list, non-object root, and empty goals', async () => {
    const dir = tempDir();
    const missing = path.join(dir, 'none.json');
    assert.deepEqual(await validateRegistryFile(missing, { homeDir: HOME }), {
      ok: false,
      registry: missing,
      error: 'registry file does not exist',
    });

    const file = path.join(dir, 'registry.json');
    writeJson(file, { goals: { a: 1 } });
    await assert.rejects(
      validateRegistryFile(file, { homeDir: HOME }),
      (error: unknown) =>
        isLoopxError(error, 'registry_goals_not_list') && error.message.startsWith('goals must be a list'),
    );

    writeJson(file, [1]);
    await assert.rejects(
      validateRegistryFile(file, { homeDir: HOME }),
      (error: unknown) => isLoopxError(error) && error.message.startsWith('registry root must be a JSON object'),
    );

    for (const empty of [{}, null]) {
      writeJson(file, { goals: empty });
      const result = await validate(file);
      assert.equal(result.ok, true);
      assert.equal(result.goal_count, 0);
      assert.deepEqual(result.goals, []);
    }
  });

  it('echoes goal rows: role default, repo facts, state file facts, quota and attention', () => {
    const dir = tempDir();
    const state = path.join(dir, '.codex', 'goals', 'a', 'ACTIVE_GOAL_STATE.md');
    fs.mkdirSync(path.dirname(state), { recursive: true });
    fs.writeFileSync(state, '---\nstatus: active\n---\n');
    const result = validateRegistryDocument(
      {
        goals: [
          {
            ...completeGoal('a', dir, '.codex/goals/a/ACTIVE_GOAL_STATE.md'),
            status: 'active',
            quota: { compute: 0.5 },
            waiting_on: 'user',
            spawn_policy: { allowed: true, max_children: 3 },
          },
          { ...completeGoal('b', dir, 'b.md'), role: 'worker', status: 'active' },
          { ...completeGoal('c', path.join(dir, 'gone'), 'c.md'), status: 'paused' },
        ],
      },
      { registryPath: path.join(dir, '.loopx', 'registry.json'), homeDir: HOME },
    );
    assert.equal(result.ok, true);
    assert.deepEqual(result.status_counts, { active: 2, paused: 1 });
    const [a, b, c] = result.goals;
    assert.ok(a && b && c);
    assert.equal(a.role, 'controller');
    assert.equal(b.role, 'worker');
    assert.equal(a.repo_exists, true);
    assert.equal(a.repo_goal_count, 2);
    assert.equal(c.repo_exists, false);
    assert.equal(c.repo_goal_count, 1);
    assert.equal(a.state_file_abs, state);
    assert.equal(a.state_file_exists, true);
    assert.equal(b.state_file_exists, false);
    assert.deepEqual(a.quota, { compute: 0.5, window_hours: 24, slot_minutes: 1, allowed_slots: 720 });
    assert.equal(a.waiting_on, 'user');
    assert.equal(b.waiting_on, null);
    assert.equal(a.adapter_kind, 'generic_project_goal_v0');
    assert.deepEqual(a.orchestration, { mode: 'multi_subagent', spawn_allowed: true, max_children: 3 });
    assert.deepEqual(b.orchestration, { mode: 'default', spawn_allowed: false, max_children: 0 });
  });
});
