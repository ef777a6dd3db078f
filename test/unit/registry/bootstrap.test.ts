import * as os from 'node:os';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { isLoopxError } from '../../../src/core/errors';
import { createGoal } from '../../../src/core/ops/createGoal';
import { runOperation } from '../../../src/core/ops/run';
import { bootstrapGoal, renderActiveGoalState } from '../../../src/core/registry/bootstrap';
import { checkGoalIdSegment, checkNewGoalId } from '../../../src/core/registry/goalId';
import { validateRegistryFile } from '../../../src/core/registry/validate';
import { parseStateDocument } from '../../../src/core/state/document';
import { readNextAction } from '../../../src/core/state/nextAction';
import { runLoopx } from '../cli/run';
import { readJson, tempDir, writeJson } from './helpers';

// Bootstrap enters the goal in `<home>/.codex/loopx/registry.global.json`: a home of the test's own.
const TESTER_HOME = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bootstrap-home-'));

const NOW = '2026-01-15T10:00:00Z';
const clock = fixedClock(NOW);

function bootstrap(
  projectDir: string,
  goalId: string,
  extra: { force?: boolean; domain?: string } = {},
): ReturnType<typeof bootstrapGoal> {
  return bootstrapGoal(
    { id: goalId, objective: 'Ship the parser.', domain: extra.domain },
    { projectDir, homeDir: '/home/tester', clock, force: extra.force },
  );
}

describe('bootstrap', () => {
  it('creates the registry, the goal, its state file and .loopx/.gitignore in a fresh project', async () => {
    const project = tempDir();
    const result = await bootstrap(project, 'demo-goal');
    const registryPath = path.join(project, '.loopx', 'registry.json');
    const stateFile = path.join(project, '.codex', 'goals', 'demo-goal', 'ACTIVE_GOAL_STATE.md');
    assert.deepEqual(
      result.actions.map((a) => a.action),
      ['created_registry', 'added_goal', 'wrote_state_file', 'wrote_gitignore'],
    );
    assert.equal(result.runtime_root, path.join(project, '.loopx', 'runtime'));
    assert.deepEqual(readJson(registryPath), {
      schema_version: '0.1',
      updated_at: NOW,
      common_runtime_root: '.loopx/runtime',
      goals: [
        {
          id: 'demo-goal',
          domain: path
            .basename(project)
            .toLowerCase()
            .replace(/[^a-z0-9]+/g, '-')
            .replace(/^-+|-+$/g, ''),
          status: 'active',
          repo: project,
          state_file: '.codex/goals/demo-goal/ACTIVE_GOAL_STATE.md',
          adapter: { kind: 'generic_project_goal_v0', status: 'connected' },
          quota: { compute: 1, window_hours: 24, slot_minutes: 1 },
          coordination: { agent_model: 'peer_v1', registered_agents: [] },
        },
      ],
    });
    assert.equal(
      fs.readFileSync(stateFile, 'utf8'),
      renderActiveGoalState({ goalId: 'demo-goal', objective: 'Ship the parser.', now: new Date(NOW) }),
    );
    const gitignore = fs.readFileSync(path.join(project, '.loopx', '.gitignore'), 'utf8').split('\n');
    assert.ok(gitignore.includes('registry.json') && gitignore.includes('runtime/'));

    const validation = await validateRegistryFile(registryPath, { homeDir: '/home/tester' });
    assert.ok('goals' in validation);
    assert.equal(validation.ok, true);
    assert.equal(validation.goals[0]?.state_file_exists, true);
  });

  it('writes a state file the state parser reads: front matter, an open agent todo and the Next Action', () => {
    const text = renderActiveGoalState({ goalId: 'g', objective: 'Say "hi" politely.', now: new Date(NOW) });
    assert.match(
      text,
      /^---\nstatus: active\nobjective: "Say 'hi' politely."\nupdated_at: 2026-01-15T10:00:00Z\n---\n/,
    );
    const doc = parseStateDocument(text);
    assert.equal(doc.frontMatter?.fields['status'], 'active');
    assert.equal(doc.frontMatter?.fields['objective'], "Say 'hi' politely.");
    assert.match(text, /## Objective\n\nSay "hi" politely.\n/);
    assert.equal(doc.frontMatter?.fields['updated_at'], NOW);
    assert.deepEqual(doc.issues, []);
    const agentTodos = doc.todos.filter((t) => t.role === 'agent');
    assert.deepEqual(
      agentTodos.map((t) => [t.todoId, t.status]),
      [['todo_plan_first_steps', 'open']],
    );
    assert.ok(doc.sections.some((s) => /next action/i.test(s.title)));
  });

  it('adds a goal to an existing registry, leaving other goals and unknown fields untouched', async () => {
    const project = tempDir();
    const registryPath = path.join(project, '.loopx', 'registry.json');
    const other = { id: 'other', repo: '/elsewhere', custom: { keep: [1, 2] }, quota: { compute: 0.3 } };
    writeJson(registryPath, { schema_version: 1, mine: 'kept', common_runtime_root: '/rt', goals: [other, 'junk'] });
    const result = await bootstrap(project, 'second-goal', { domain: 'parsing' });
    assert.deepEqual(
      result.actions.map((a) => a.action),
      ['added_goal', 'wrote_state_file'],
    );
    const registry = readJson(registryPath);
    assert.equal(registry['mine'], 'kept');
    assert.equal(registry['schema_version'], 1);
    assert.equal(registry['common_runtime_root'], '/rt');
    assert.equal(registry['updated_at'], NOW);
    const goals = registry['goals'] as Record<string, unknown>[];
    assert.deepEqual(goals[0], other);
    assert.equal(goals[1], 'junk');
    assert.equal(goals[2]?.['id'], 'second-goal');
    assert.equal(goals[2]?.['domain'], 'parsing');
    assert.equal(
      fs.existsSync(path.join(project, '.loopx', '.gitignore')),
      false,
      'only written when bootstrap creates the registry',
    );
  });

  it('refuses an existing goal without --force and changes nothing', async () => {
    const project = tempDir();
    await bootstrap(project, 'demo-goal');
    const registryPath = path.join(project, '.loopx', 'registry.json');
    const stateFile = path.join(project, '.codex', 'goals', 'demo-goal', 'ACTIVE_GOAL_STATE.md');
    fs.writeFileSync(stateFile, 'my edits\n');
    const before = fs.readFileSync(registryPath, 'utf8');
    await assert.rejects(
      bootstrap(project, 'demo-goal'),
      (error: unknown) => isLoopxError(error, 'goal_exists') && /--force/.test(error.message),
    );
    assert.equal(fs.readFileSync(registryPath, 'utf8'), before);
    assert.equal(fs.readFileSync(stateFile, 'utf8'), 'my edits\n');
  });

  it('with --force resets the entry (keeping quota and agents) and backs up the replaced state file', async () => {
    const project = tempDir();
    const registryPath = path.join(project, '.loopx', 'registry.json');
    const stateFile = path.join(project, '.codex', 'goals', 'g1', 'ACTIVE_GOAL_STATE.md');
    writeJson(registryPath, {
      goals: [
        {
          id: 'g1',
          status: 'paused',
          repo: '/old',
          state_file: 'x.md',
          domain: 'kept-domain',
          quota: { compute: 0.2 },
          coordination: { agent_model: 'peer_v1', registered_agents: ['codex-a'] },
          note: 'n',
        },
      ],
    });
    fs.mkdirSync(path.dirname(stateFile), { recursive: true });
    fs.writeFileSync(stateFile, 'old state\n');
    const result = await bootstrap(project, 'g1', { force: true });
    assert.deepEqual(
      result.actions.map((a) => a.action),
      ['replaced_goal', 'replaced_state_file'],
    );
    const backup = result.actions[1]?.backup_path;
    assert.equal(backup, `${stateFile}.20260115T100000Z.bak`);
    assert.equal(fs.readFileSync(backup ?? '', 'utf8'), 'old state\n');
    const [goal] = readJson(registryPath)['goals'] as Record<string, unknown>[];
    assert.deepEqual(goal, {
      id: 'g1',
      status: 'active',
      repo: project,
      state_file: '.codex/goals/g1/ACTIVE_GOAL_STATE.md',
      domain: 'kept-domain',
      quota: { compute: 0.2 },
      coordination: { agent_model: 'peer_v1', registered_agents: ['codex-a'] },
      note: 'n',
      adapter: { kind: 'generic_project_goal_v0', status: 'connected' },
    });
  });

  it('connects a goal whose state file already exists, keeping that file', async () => {
    const project = tempDir();
    const stateFile = path.join(project, '.codex', 'goals', 'g2', 'ACTIVE_GOAL_STATE.md');
    fs.mkdirSync(path.dirname(stateFile), { recursive: true });
    fs.writeFileSync(stateFile, 'existing\n');
    const result = await bootstrap(project, 'g2');
    assert.deepEqual(
      result.actions.map((a) => a.action),
      ['created_registry', 'added_goal', 'kept_existing_state_file', 'wrote_gitignore'],
    );
    assert.equal(fs.readFileSync(stateFile, 'utf8'), 'existing\n');
  });

  it('refuses a malformed registry and leaves it untouched', async () => {
    const project = tempDir();
    const registryPath = path.join(project, '.loopx', 'registry.json');
    fs.mkdirSync(path.dirname(registryPath), { recursive: true });
    fs.writeFileSync(registryPath, '{"goals": [\n');
    await assert.rejects(bootstrap(project, 'g3'), (error: unknown) => isLoopxError(error, 'registry_invalid_json'));
    assert.equal(fs.readFileSync(registryPath, 'utf8'), '{"goals": [\n');
    assert.equal(fs.existsSync(path.join(project, '.codex')), false);

    writeJson(registryPath, { goals: { a: 1 } });
    await assert.rejects(bootstrap(project, 'g3'), (error: unknown) => isLoopxError(error, 'registry_goals_not_list'));
    assert.deepEqual(readJson(registryPath), { goals: { a: 1 } });
  });

  it('case 22: goal id must be a single path segment', () => {
    assert.equal(checkGoalIdSegment('  spaced  '), 'spaced');
    for (const empty of ['', '  ']) assert.throws(() => checkGoalIdSegment(empty), /goal id is required/);
    for (const bad of ['.', '..', 'a/b', 'a\\b', '../x'])
      assert.throws(() => checkGoalIdSegment(bad), /goal id must be a single path segment/);
    assert.throws(() => checkGoalIdSegment('C:x'), /must not include path traversal/);
    assert.equal(checkGoalIdSegment('goal.v1'), 'goal.v1');
    assert.equal(checkGoalIdSegment('~'), '~');
  });

  it('accepts only lowercase slugs as new goal ids', () => {
    assert.equal(checkNewGoalId(' my-project.goal_2 '), 'my-project.goal_2');
    for (const bad of ['~', 'My-Goal', '-lead', 'has space', 'x'.repeat(81)]) {
      assert.throws(
        () => checkNewGoalId(bad),
        (error: unknown) => isLoopxError(error, 'invalid_goal_id'),
      );
    }
  });
});

/** create-goal with a plan (the op Start a Goal runs), in `project` with a fixed clock. */
function createWithPlan(
  project: string,
  plan: { todos: readonly string[]; gates: readonly string[] },
  force = false,
): ReturnType<typeof bootstrapGoal> {
  return runOperation(
    createGoal,
    {
      project,
      goalId: 'plan-goal',
      objective: 'Index the notes.',
      todo: [...plan.todos],
      gate: [...plan.gates],
      force,
    },
    { cwd: project, env: {}, clock, homeDir: fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bootstrap-home-')) },
  );
}

describe('bootstrap with a plan (Start a Goal: the goal and its reviewed todos in one write)', () => {
  const plan = { todos: ['Collect the notes.', 'Write the index.'], gates: ['Approve the index before publishing.'] };

  it('writes the todos in priority order, the gates, and completes the planning todo, in the one state file write', async () => {
    const project = tempDir();
    const result = await createWithPlan(project, plan);
    assert.deepEqual(
      result.actions.map((a) => a.action),
      ['created_registry', 'added_goal', 'wrote_state_file', 'wrote_gitignore', 'synced_global_registry'],
    );
    const doc = parseStateDocument(fs.readFileSync(result.state_file_abs, 'utf8'));
    const open = doc.todos.filter((t) => t.status === 'open');
    assert.deepEqual(
      open.map((t) => [t.role, t.text]),
      [
        ['user', 'Approve the index before publishing.'],
        ['agent', '[P1] Collect the notes.'],
        ['agent', '[P2] Write the index.'],
      ],
    );
    assert.equal(doc.todos.find((t) => t.todoId === 'todo_plan_first_steps')?.status, 'done');
  });

  for (const [name, bad, code] of [
    [
      'a todo holding a credential',
      { todos: ['Collect the notes.', 'Log in with password=hunter2xyz'], gates: [] },
      'credential_refused',
    ],
    [
      'a gate holding a credential',
      { todos: ['Collect the notes.'], gates: ['Approve with password=hunter2xyz'] },
      'credential_refused',
    ],
    ['a todo listed twice', { todos: ['Collect the notes.', 'Collect the notes.'], gates: [] }, 'usage'],
    ['no agent todo', { todos: [], gates: ['Approve it.'] }, 'usage'],
  ] as const) {
    it(`refuses ${name} and writes nothing at all (no registry, no goal, no state file)`, async () => {
      const project = tempDir();
      await assert.rejects(
        createWithPlan(project, bad),
        (error: unknown) => isLoopxError(error, code) && /nothing was written/.test(error.message),
      );
      assert.deepEqual(fs.readdirSync(project), []);
    });
  }

  it('refuses, changing nothing, when the state file exists (the plan would be lost); --force replaces it with a backup', async () => {
    const project = tempDir();
    await bootstrap(project, 'first-goal');
    const registryPath = path.join(project, '.loopx', 'registry.json');
    const stateFile = path.join(project, '.codex', 'goals', 'plan-goal', 'ACTIVE_GOAL_STATE.md');
    fs.mkdirSync(path.dirname(stateFile), { recursive: true });
    fs.writeFileSync(stateFile, 'a hand-written state file\n');
    const registryBefore = fs.readFileSync(registryPath, 'utf8');
    await assert.rejects(
      createWithPlan(project, plan),
      (error: unknown) => isLoopxError(error, 'goal_plan_state_file_exists') && error.details['file'] === stateFile,
    );
    assert.equal(fs.readFileSync(registryPath, 'utf8'), registryBefore);
    assert.equal(fs.readFileSync(stateFile, 'utf8'), 'a hand-written state file\n');
    const forced = await createWithPlan(project, plan, true);
    assert.deepEqual(
      forced.actions.map((a) => a.action),
      ['added_goal', 'replaced_state_file', 'synced_global_registry'],
    );
    assert.match(fs.readFileSync(stateFile, 'utf8'), /\[P2\] Write the index\./);
  });

  it('CLI: bootstrap --todo … --gate … writes the plan; a refused todo is exit 1 with a typed error and no files', async () => {
    const project = tempDir();
    const env = { HOME: TESTER_HOME };
    const refused = await runLoopx(
      [
        '--format',
        'json',
        'bootstrap',
        '--goal-id',
        'cli-plan',
        '--objective',
        'Plan it.',
        '--todo',
        'First.',
        '--todo',
        'Use password=hunter2xyz',
      ],
      { cwd: project, env },
    );
    assert.equal(refused.code, 1, refused.stderr);
    assert.equal(refused.error().code, 'credential_refused');
    assert.equal(refused.error().details['plan_item'], 'todo 2');
    assert.deepEqual(fs.readdirSync(project), []);
    const created = await runLoopx(
      [
        '--format',
        'json',
        'bootstrap',
        '--goal-id',
        'cli-plan',
        '--objective',
        'Plan it.',
        '--todo',
        'First.',
        '--todo',
        'Second.',
        '--gate',
        'Approve.',
      ],
      { cwd: project, env },
    );
    assert.equal(created.code, 0, created.stderr);
    const doc = parseStateDocument(fs.readFileSync(String(created.json()['state_file_abs']), 'utf8'));
    assert.deepEqual(
      doc.todos.filter((t) => t.status === 'open').map((t) => t.text),
      ['Approve.', '[P1] First.', '[P2] Second.'],
    );
    // Issue 34, defect 10: the Next Action named the planning todo that the plan marks done; it names
    // the plan's first open agent todo instead.
    assert.equal(readNextAction(doc), 'First.');
  });
});

describe('loopx bootstrap / loopx registry (CLI)', () => {
  it('bootstraps a project and then validates its registry', async () => {
    const project = tempDir();
    const env = { HOME: TESTER_HOME };
    const created = await runLoopx(
      ['--format', 'json', 'bootstrap', '--project', '.', '--goal-id', 'cli-goal', '--objective', 'Do the thing.'],
      { cwd: project, env },
    );
    assert.equal(created.code, 0, created.stderr);
    const json = created.json();
    assert.equal(json['ok'], true);
    assert.deepEqual(
      (json['actions'] as { action: string }[]).map((a) => a.action),
      ['created_registry', 'added_goal', 'wrote_state_file', 'wrote_gitignore', 'synced_global_registry'],
    );

    const again = await runLoopx(['bootstrap', '--goal-id', 'cli-goal', '--objective', 'Again.'], {
      cwd: project,
      env,
    });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists.*--force/);

    const report = await runLoopx(['registry'], { cwd: project, env });
    assert.equal(report.code, 0);
    assert.match(report.stdout, /^# LoopX registry/);
    assert.match(report.stdout, /\| cli-goal \| active \| controller \|/);

    const validation = await runLoopx(['registry', '--format', 'json'], { cwd: project, env });
    assert.equal(validation.json()['ok'], true);
    assert.equal(validation.json()['goal_count'], 1);
  });

  it('prints the bootstrap report in Markdown by default', async () => {
    const project = tempDir();
    const run = await runLoopx(
      ['bootstrap', '--project', project, '--goal-id', 'md-goal', '--objective', 'Write docs.'],
      { cwd: '/', env: { HOME: TESTER_HOME } },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^# LoopX bootstrap: md-goal/);
    assert.match(run.stdout, /Created the registry/);
  });

  it('exits 2 for a bad goal id or a missing objective', async () => {
    const project = tempDir();
    const badId = await runLoopx(['bootstrap', '--goal-id', '../x', '--objective', 'o'], { cwd: project });
    assert.equal(badId.code, 2);
    assert.match(badId.stderr, /--goal-id must be a new goal id: a lowercase slug .*; got "\.\.\/x"/);
    const noObjective = await runLoopx(['bootstrap', '--goal-id', 'ok-goal'], { cwd: project });
    assert.equal(noObjective.code, 2);
    assert.equal(fs.existsSync(path.join(project, '.loopx')), false);
  });

  it('registry: exits 1 with file:line:column on malformed JSON, and when the file is missing or invalid', async () => {
    const project = tempDir();
    const env = { HOME: path.join(project, 'home') };
    const missing = await runLoopx(['registry', '--format', 'json'], { cwd: project, env });
    assert.equal(missing.code, 1);
    assert.deepEqual(missing.json(), {
      ok: false,
      registry: path.join(project, '.loopx', 'registry.json'),
      error: 'registry file does not exist',
    });

    const registryPath = path.join(project, '.loopx', 'registry.json');
    fs.mkdirSync(path.dirname(registryPath), { recursive: true });
    fs.writeFileSync(registryPath, '{\n  "goals": [1,,]\n}\n');
    const malformed = await runLoopx(['registry'], { cwd: project, env });
    assert.equal(malformed.code, 1);
    assert.match(malformed.stderr, new RegExp(`${registryPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2:15`));

    writeJson(registryPath, { goals: [{ id: 'a' }] });
    const invalid = await runLoopx(['registry'], { cwd: project, env });
    assert.equal(invalid.code, 1);
    assert.match(invalid.stdout, /a: missing repo/);
  });
});

describe('bootstrap and the global registry (issue 30: the original finds our goals there)', () => {
  it('enters every bootstrapped goal in <home>/.codex/loopx/registry.global.json, a second goal of the project too', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bootstrap-global-'));
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bootstrap-project-'));
    const env = { cwd: project, env: {}, clock, homeDir: home };
    const first = await runOperation(createGoal, { goalId: 'first-goal', objective: 'Ship one.' }, env);
    const second = await runOperation(createGoal, { goalId: 'second-goal', objective: 'Ship two.' }, env);
    const globalPath = path.join(home, '.codex', 'loopx', 'registry.global.json');
    for (const result of [first, second])
      assert.deepEqual(result.actions.at(-1), { action: 'synced_global_registry', path: globalPath });
    const global = JSON.parse(fs.readFileSync(globalPath, 'utf8')) as {
      common_runtime_root: string;
      goals: { id: string; source_registry: string; repo: string }[];
    };
    assert.equal(global.common_runtime_root, path.join(home, '.codex', 'loopx'));
    assert.deepEqual(
      global.goals.map((g) => [g.id, g.source_registry, g.repo]),
      [
        ['first-goal', path.join(project, '.loopx', 'registry.json'), project],
        ['second-goal', path.join(project, '.loopx', 'registry.json'), project],
      ],
    );
  });
});
