import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as loopx from '../../../src/core/index';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import { runLoopx } from '../cli/run';
import { removeTempDirs, tempDir } from '../../support/tempDir';

const NOW = '2026-01-15T10:00:00Z';

after(() => {
  removeTempDirs();
});

/** A fresh copy of the demo workspace (goal `tidy-notes`) and its registry path. */
function demo(): { workspace: string; registryPath: string } {
  const workspace = materializeDemoWorkspace(path.join(tempDir(), 'workspace'));
  return { workspace, registryPath: path.join(workspace, '.loopx', 'registry.json') };
}

/** A project whose registry lists `kept`, with runtime folders for `kept` and the unregistered `finished`. */
function archiveProject(): { project: string; registryPath: string; goalsRoot: string } {
  const project = tempDir();
  const registryPath = path.join(project, '.loopx', 'registry.json');
  fs.mkdirSync(path.dirname(registryPath), { recursive: true });
  fs.writeFileSync(
    registryPath,
    JSON.stringify({
      schema_version: '0.1',
      common_runtime_root: '.loopx/runtime',
      goals: [{ id: 'kept', repo: project }],
    }),
  );
  const goalsRoot = path.join(project, '.loopx', 'runtime', 'goals');
  for (const id of ['kept', 'finished']) {
    fs.mkdirSync(path.join(goalsRoot, id, 'runs'), { recursive: true });
    fs.writeFileSync(path.join(goalsRoot, id, 'runs', 'index.jsonl'), '{"goal_id":"x"}\n');
  }
  return { project, registryPath, goalsRoot };
}

/** Asserts `fn` throws a LoopxError with `code`; returns it for further checks. */
async function rejectsWith(fn: () => unknown, code: string): Promise<loopx.LoopxError> {
  try {
    await fn();
  } catch (error) {
    assert.ok(loopx.isLoopxError(error), `expected a LoopxError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected LoopxError ${code}, nothing was thrown`);
}

/** A file tree listing (paths and contents), to prove a refused call wrote nothing. */
function treeOf(dir: string): Record<string, string> {
  const tree: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true }).map(String).sort()) {
    const full = path.join(dir, entry);
    tree[entry] = fs.statSync(full).isDirectory() ? '<dir>' : fs.readFileSync(full, 'utf8');
  }
  return tree;
}

describe('core API (src/core/index.ts)', () => {
  it('exports exactly the documented surface', () => {
    assert.deepEqual(Object.keys(loopx).sort(), [
      'ArchiveRuntimeResultSchema',
      'CompactOrchestrationSchema',
      'GateListResultSchema',
      'GateSchema',
      'GoalStateSchema',
      'GoalStatusSchema',
      'GoalSummarySchema',
      'INVALID_ARGUMENT',
      'JournalInspectionSchema',
      'LOOPX_ERROR_CODES',
      'LoopResultSchema',
      'LoopxError',
      'NextActionProjectionWarningSchema',
      'OPERATIONS',
      'ProjectionWarningSchema',
      'ShouldRunDecisionSchema',
      'TodoListResultSchema',
      'TodoSchema',
      'TurnEventEmitter',
      'TurnEventSchema',
      'TurnPlanSchema',
      'TurnRunResultSchema',
      'archiveRuntimeGoal',
      'compactOrchestrationPolicy',
      'findRegistryGoal',
      'getGoalStatus',
      'inspectTurnJournal',
      'isLoopxError',
      'listGates',
      'listGoals',
      'listTodos',
      'loadGoalState',
      'nextActionProjectionWarning',
      'planTurn',
      'processEnvironment',
      'readJson',
      'readRegistry',
      'runOperation',
      'runTurnLoop',
      'runTurnOnce',
      'settleTurn',
      'shouldRun',
      'version',
    ]);
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    assert.equal(loopx.version, pkg.version);
  });

  describe('archiveRuntimeGoal', () => {
    it('is a dry run unless execute is true, and moves the folder when it is', async () => {
      const { registryPath, goalsRoot, project } = archiveProject();
      const dry = await loopx.archiveRuntimeGoal({ registryPath, goalId: 'finished', now: NOW });
      assert.equal(dry.dry_run, true);
      assert.equal(dry.action, 'would-move');
      assert.equal(
        dry.archive_path,
        path.join(project, '.loopx', 'runtime', 'archived-goals', 'finished-20260115T100000Z'),
      );
      assert.ok(fs.existsSync(path.join(goalsRoot, 'finished')), 'a dry run moved the folder');

      const moved = await loopx.archiveRuntimeGoal({
        registryPath,
        runtimeRootOverride: null,
        goalId: 'finished',
        archiveRoot: null,
        allowRegistered: false,
        execute: true,
        now: NOW,
      });
      assert.equal(loopx.ArchiveRuntimeResultSchema.parse(moved).action, 'moved');
      assert.ok(!fs.existsSync(path.join(goalsRoot, 'finished')));
      assert.ok(fs.existsSync(path.join(moved.archive_path, 'runs', 'index.jsonl')));
    });

    it('refuses a registered goal with code goal_registered, and archives it with allowRegistered', async () => {
      const { registryPath, goalsRoot } = archiveProject();
      await rejectsWith(
        () => loopx.archiveRuntimeGoal({ registryPath, goalId: 'kept', execute: true, now: NOW }),
        'goal_registered',
      );
      assert.ok(fs.existsSync(path.join(goalsRoot, 'kept')));
      const result = await loopx.archiveRuntimeGoal({
        registryPath,
        goalId: 'kept',
        allowRegistered: true,
        execute: true,
        now: NOW,
      });
      assert.equal(result.registry_member, true);
    });

    it('resolves a relative registryPath and archiveRoot against the current directory', async () => {
      const { project } = archiveProject();
      const cwd = process.cwd();
      process.chdir(project);
      try {
        const result = await loopx.archiveRuntimeGoal({
          registryPath: '.loopx/registry.json',
          goalId: 'finished',
          archiveRoot: 'attic',
          now: NOW,
        });
        assert.equal(result.archive_path, path.join(project, 'attic', 'finished-20260115T100000Z'));
      } finally {
        process.chdir(cwd);
      }
    });

    it('takes the time from LOOPX_NOW when now is not given', async () => {
      const { registryPath } = archiveProject();
      const saved = process.env['LOOPX_NOW'];
      process.env['LOOPX_NOW'] = '2027-03-04T05:06:07Z';
      try {
        const result = await loopx.archiveRuntimeGoal({ registryPath, goalId: 'finished' });
        assert.match(result.archive_path, /finished-20270304T050607Z$/);
      } finally {
        if (saved === undefined) delete process.env['LOOPX_NOW'];
        else process.env['LOOPX_NOW'] = saved;
      }
    });

    for (const [label, options, argument] of [
      ['execute that is not a boolean', { goalId: 'finished', execute: 'yes' }, 'options.execute'],
      ['a goal id with a path separator', { goalId: '../finished', execute: true }, 'options.goalId'],
      ['a misspelt argument (goal_id)', { goal_id: 'finished', execute: true }, 'options.goal_id'],
      ['a now that is not an instant', { goalId: 'finished', execute: true, now: 'tomorrow' }, 'options.now'],
    ] as const) {
      it(`refuses ${label} with invalid_argument naming ${argument}, and writes nothing`, async () => {
        const { registryPath, project } = archiveProject();
        const before = treeOf(project);
        const error = await rejectsWith(
          () => loopx.archiveRuntimeGoal({ registryPath, ...options } as never),
          loopx.INVALID_ARGUMENT,
        );
        assert.equal(error.details['argument'], argument);
        assert.ok(error.message.startsWith(`archiveRuntimeGoal: `), error.message);
        assert.ok(error.message.includes(argument), error.message);
        assert.deepEqual(treeOf(project), before);
      });
    }

    it('names the accepted values when a value is wrong', async () => {
      const error = await rejectsWith(
        () => loopx.archiveRuntimeGoal({ registryPath: 'r.json', goalId: 'g', execute: 'yes' as never }),
        loopx.INVALID_ARGUMENT,
      );
      assert.equal(error.message, 'archiveRuntimeGoal: options.execute must be true or false; got "yes".');
      assert.equal(error.details['accepted'], 'true or false');
    });

    it('names every accepted argument when one is unknown', async () => {
      const error = await rejectsWith(
        () => loopx.archiveRuntimeGoal({ registryPath: 'r.json', goalId: 'g', dryRun: true } as never),
        loopx.INVALID_ARGUMENT,
      );
      assert.match(
        error.message,
        /unknown argument options\.dryRun; the accepted arguments are options\.registryPath, .*options\.execute/,
      );
    });
  });

  describe('nextActionProjectionWarning', () => {
    it('is null when the texts are aligned or one is missing', () => {
      assert.equal(
        loopx.nextActionProjectionWarning({
          activeStateNextAction: 'run analysis',
          latestRunRecommendedAction: 'run analysis',
          agentLaneNextAction: null,
        }),
        null,
      );
      assert.equal(
        loopx.nextActionProjectionWarning({ activeStateNextAction: 'run analysis', latestRunRecommendedAction: null }),
        null,
      );
    });

    it('returns a warning with the compared texts and a human message when they differ', () => {
      const warning = loopx.nextActionProjectionWarning({
        activeStateNextAction: 'run analysis',
        latestRunRecommendedAction: 'publish the report',
        goalId: 'g1',
      });
      assert.ok(warning);
      assert.equal(loopx.NextActionProjectionWarningSchema.parse(warning).severity, 'warning');
      assert.equal(warning.active_state_next_action, 'run analysis');
      assert.equal(warning.latest_run_recommended_action, 'publish the report');
      assert.equal(warning.goal_id, 'g1');
      assert.ok(warning.message.length > 20);
    });

    it('downgrades to info when the agent lane preserves the durable route', () => {
      const warning = loopx.nextActionProjectionWarning({
        activeStateNextAction: 'run analysis',
        latestRunRecommendedAction: 'publish the report',
        agentLaneNextAction: { text: 'review the draft', preserves_goal_next_action: true },
      });
      assert.equal(warning?.severity, 'info');
      assert.equal(warning?.agent_lane_next_action, 'review the draft');
    });

    it('refuses a lane that is neither text nor an object, naming the argument', async () => {
      const error = await rejectsWith(
        () =>
          loopx.nextActionProjectionWarning({
            activeStateNextAction: 'a',
            latestRunRecommendedAction: 'b',
            agentLaneNextAction: 5 as never,
          }),
        loopx.INVALID_ARGUMENT,
      );
      assert.equal(error.details['argument'], 'options.agentLaneNextAction');
    });
  });

  describe('readJson, readRegistry and findRegistryGoal', () => {
    it('reads the registry and finds a goal, keeping fields the schema does not know', async () => {
      const { registryPath } = demo();
      const registry = await loopx.readJson(registryPath);
      const goal = loopx.findRegistryGoal(registry, 'tidy-notes');
      assert.equal(goal?.display_name, 'Tidy the notes folder');
      assert.deepEqual(goal?.['validation_command'], ['node', 'scripts/check-notes.js']);
      assert.equal(loopx.findRegistryGoal(registry, 'nope'), undefined);
    });

    it('matches a numeric id stored as a number or a string', () => {
      assert.equal(loopx.findRegistryGoal({ goals: [{ id: 7, repo: '/x' }] }, '7')?.id, '7');
      assert.equal(loopx.findRegistryGoal({ goals: [{ id: '7' }] }, 7)?.id, '7');
    });

    it('readJson refuses a missing file (file_not_found), bad JSON (with line and column) and a non-object root', async () => {
      const dir = tempDir();
      await rejectsWith(() => loopx.readJson(path.join(dir, 'missing.json')), 'file_not_found');
      fs.writeFileSync(path.join(dir, 'bad.json'), '{\n  "goals": [,]\n}\n');
      const bad = await rejectsWith(() => loopx.readJson(path.join(dir, 'bad.json')), 'registry_invalid_json');
      assert.deepEqual([bad.details['line'], bad.details['column']], [2, 13]);
      fs.writeFileSync(path.join(dir, 'list.json'), '[1]');
      const list = await rejectsWith(() => loopx.readJson(path.join(dir, 'list.json')), 'registry_not_object');
      assert.match(list.message, /registry root must be a JSON object/);
    });

    it('readRegistry reads a missing registry as {}', async () => {
      assert.deepEqual(await loopx.readRegistry(path.join(tempDir(), 'none.json')), {});
    });

    it('refuses a registry that is not an object and an empty path, naming the argument', async () => {
      const notObject = await rejectsWith(() => loopx.findRegistryGoal([] as never, 'g'), loopx.INVALID_ARGUMENT);
      assert.equal(notObject.details['argument'], 'registry');
      const emptyPath = await rejectsWith(() => loopx.readJson('  '), loopx.INVALID_ARGUMENT);
      assert.equal(emptyPath.details['argument'], 'path');
    });
  });

  describe('compactOrchestrationPolicy', () => {
    it('reduces a policy as the original does, reading a whole-number string', () => {
      assert.deepEqual(
        loopx.compactOrchestrationPolicy({
          allowed: true,
          max_children: '3',
          explore_harness: { enabled: true, profile: 'adaptive-resilient' },
        }),
        {
          mode: 'multi_subagent',
          spawn_allowed: true,
          max_children: 3,
          explore_harness: { enabled: true, profile: 'adaptive-resilient' },
        },
      );
      assert.deepEqual(loopx.compactOrchestrationPolicy(null), {
        mode: 'default',
        spawn_allowed: false,
        max_children: 0,
      });
    });

    it('does not allow spawning for the string "true" (deliberate fix, fails closed)', () => {
      assert.equal(loopx.compactOrchestrationPolicy({ allowed: 'true', max_children: 2 }).spawn_allowed, false);
    });

    it('refuses a policy that is not an object', async () => {
      const error = await rejectsWith(
        () => loopx.compactOrchestrationPolicy('allowed' as never),
        loopx.INVALID_ARGUMENT,
      );
      assert.match(error.message, /^compactOrchestrationPolicy: policy must be a goal's spawn_policy object/);
    });
  });

  describe('goals, state, todos, gates and status', () => {
    it('listGoals lists the demo goal with its agents and normalized quota', async () => {
      const { registryPath, workspace } = demo();
      const goals = await loopx.listGoals({ registryPath });
      assert.deepEqual(
        goals.map((g) => [g.goalId, g.agents, g.quota.allowed_slots, g.runtimeRoot]),
        [['tidy-notes', ['demo', 'codex-main'], 24, path.join(workspace, '.loopx', 'runtime')]],
      );
      assert.deepEqual(await loopx.listGoals({ registryPath: path.join(workspace, 'none.json') }), []);
    });

    it("listGoals throws the registry's parse error with its code", async () => {
      const { registryPath } = demo();
      fs.writeFileSync(registryPath, '{"goals": [}');
      await rejectsWith(() => loopx.listGoals({ registryPath }), 'registry_invalid_json');
    });

    it('loadGoalState returns the structured projection of the state file', async () => {
      const { registryPath } = demo();
      const state = await loopx.loadGoalState({ registryPath, goalId: 'tidy-notes' });
      assert.equal(
        loopx.GoalStateSchema.parse(state).projection.schema_version,
        'active_state_structured_projection_v0',
      );
      assert.equal(state.projection.next_action.first, 'Add a "Related" section linking notes that share a tag.');
      assert.equal(state.projection.todos.agent.open_count, 4);
    });

    it('listTodos returns exactly what `loopx todo list --format json` prints', async () => {
      const { registryPath } = demo();
      const cli = await runLoopx([
        'todo',
        'list',
        '--goal-id',
        'tidy-notes',
        '--registry',
        registryPath,
        '--all',
        '--format',
        'json',
      ]);
      assert.equal(cli.code, 0, cli.stderr);
      const listed = await loopx.listTodos({ registryPath, goalId: 'tidy-notes', includeTerminal: true });
      assert.deepEqual(listed, cli.json());
      assert.equal(listed.count, 7);
    });

    it('listTodos filters by role, status and claimer', async () => {
      const { registryPath } = demo();
      const claimed = await loopx.listTodos({
        registryPath,
        goalId: 'tidy-notes',
        role: 'agent',
        claimedBy: 'codex-main',
      });
      assert.deepEqual(
        claimed.todos.map((t) => t.todo_id),
        ['todo_links'],
      );
      const done = await loopx.listTodos({ registryPath, goalId: 'tidy-notes', status: 'done' });
      assert.deepEqual(
        done.todos.map((t) => t.todo_id),
        ['todo_titles'],
      );
      const error = await rejectsWith(
        () => loopx.listTodos({ registryPath, goalId: 'tidy-notes', status: 'closed' as never }),
        loopx.INVALID_ARGUMENT,
      );
      assert.match(error.message, /options\.status must be one of "open", "done", "blocked", "deferred"/);
    });

    it('listGates reports the open gate and the agent todo it holds back', async () => {
      const { registryPath } = demo();
      const gates = await loopx.listGates({ registryPath, goalId: 'tidy-notes' });
      assert.deepEqual(
        gates.open_gates.map((g) => [g.todo_id, g.blocked_todo_ids]),
        [['todo_gate_publish', ['todo_publish']]],
      );
      assert.deepEqual(gates.lane_gates_by_agent, { demo: ['todo_gate_publish'] });
      assert.equal(gates.agent_todos.find((t) => t.todo_id === 'todo_publish')?.blocked, true);
    });

    it('refuses an unknown goal (goal_not_found) and a missing registry (registry_missing)', async () => {
      const { registryPath, workspace } = demo();
      await rejectsWith(() => loopx.listTodos({ registryPath, goalId: 'nope' }), 'goal_not_found');
      await rejectsWith(
        () => loopx.loadGoalState({ registryPath: path.join(workspace, 'none.json'), goalId: 'tidy-notes' }),
        'registry_missing',
      );
    });

    it('getGoalStatus summarizes the goal: next action, counts, latest status run and the stale-run warning', async () => {
      const { registryPath } = demo();
      const status = loopx.GoalStatusSchema.parse(await loopx.getGoalStatus({ registryPath, goalId: 'tidy-notes' }));
      assert.equal(status.goal.goalId, 'tidy-notes');
      assert.equal(status.state?.next_action, 'Add a "Related" section linking notes that share a tag.');
      assert.deepEqual(
        [status.state?.todos.agent.open_count, status.state?.todos.user.open_count, status.state?.open_gate_count],
        [4, 2, 1],
      );
      assert.equal(status.runs.count, 3);
      // The quota bookkeeping run at 08:56 is newer but does not speak for the goal.
      assert.equal(status.runs.latest_status_run?.classification, 'validated_progress');
      assert.deepEqual(
        status.warnings.map((w) => w.kind),
        ['stale_latest_run_projection'],
      );
    });

    it('getGoalStatus still reports the goal when its state file is missing', async () => {
      const { registryPath, workspace } = demo();
      fs.rmSync(path.join(workspace, '.codex'), { recursive: true });
      const status = await loopx.getGoalStatus({ registryPath, goalId: 'tidy-notes' });
      assert.equal(status.state, null);
      assert.equal(status.state_error?.code, 'state_file_missing');
      assert.equal(status.runs.count, 3);
    });
  });

  describe('shouldRun', () => {
    it('decides a turn for a registered agent: past the open publish gate (a safe bypass), on the first todo no gate holds back', async () => {
      const { registryPath } = demo();
      const decision = loopx.ShouldRunDecisionSchema.parse(
        await loopx.shouldRun({ registryPath, goalId: 'tidy-notes', agentId: 'demo', now: '2026-11-29T10:00:00Z' }),
      );
      assert.deepEqual(
        [decision.should_run, decision.decision, decision.route, decision.selected_todo?.todo_id],
        [true, 'safe_bypass_user_gate_fallback', 'ready_for_host', 'todo_related'],
      );
    });

    it('answers goal_not_found for a goal the registry does not list, and refuses an unregistered agent as `quota should-run` does', async () => {
      const { registryPath } = demo();
      const missing = await loopx.shouldRun({ registryPath, goalId: 'nope', now: NOW });
      assert.deepEqual([missing.ok, missing.status], [false, 'goal_not_found']);
      // One operation behind the CLI and the library: a refusal is an answer (should_run false), not a throw.
      const stranger = await loopx.shouldRun({ registryPath, goalId: 'tidy-notes', agentId: 'stranger', now: NOW });
      assert.deepEqual(
        [stranger.ok, stranger.should_run, 'error_code' in stranger ? stranger.error_code : null],
        [false, false, 'quota_agent_not_registered'],
      );
    });

    it('refuses capabilities that are not a list of names', async () => {
      const error = await rejectsWith(
        () => loopx.shouldRun({ registryPath: 'r.json', goalId: 'g', availableCapabilities: 'git' as never }),
        loopx.INVALID_ARGUMENT,
      );
      assert.equal(error.details['argument'], 'options.availableCapabilities');
    });
  });

  describe('settleTurn', () => {
    const at = '2026-11-29T10:00:00Z';
    async function deliver(workspace: string, turn: string): Promise<void> {
      // A validated delivery by agent demo on todo_related, turn `turn` (what a host records before settling).
      const run = await runLoopx(
        [
          'refresh-state',
          '--goal-id',
          'tidy-notes',
          '--classification',
          'validated_progress',
          // Accountable: the demo goal sits at its operator gate, so the spend is a safe bypass that needs one.
          '--delivery-outcome',
          'outcome_progress',
          '--agent-id',
          'demo',
          '--todo-id',
          'todo_related',
          '--turn-instance-id',
          turn,
          '--format',
          'json',
        ],
        { cwd: workspace, now: at },
      );
      assert.equal(run.code, 0, run.stdout + run.stderr);
    }
    const spendRows = (workspace: string): string[] =>
      fs
        .readFileSync(path.join(workspace, '.loopx', 'runtime', 'goals', 'tidy-notes', 'runs', 'index.jsonl'), 'utf8')
        .split('\n')
        .filter((line) => line.includes('"quota_slot_spent"') && line.includes('turn-api-1'));

    it('previews by default, writes exactly one spend with execute, and replays idempotently', async () => {
      const { workspace, registryPath } = demo();
      await deliver(workspace, 'turn-api-1');
      const options = {
        registryPath,
        goalId: 'tidy-notes',
        agentId: 'demo',
        todoId: 'todo_related',
        turnInstanceId: 'turn-api-1',
        now: at,
        usage: { tokens: 1200, cost_usd: 0.02, estimated: true },
      };
      const preview = await loopx.settleTurn(options);
      assert.deepEqual([preview.ok, preview.dry_run, preview.appended], [true, true, false], preview.reason);
      assert.equal(spendRows(workspace).length, 0);
      const spent = await loopx.settleTurn({ ...options, execute: true });
      assert.deepEqual(
        [spent.ok, spent.appended, spent.settlement_identity?.effect_id],
        [true, true, 'tidy-notes:demo:todo_related:turn-api-1'],
        spent.reason,
      );
      const replay = await loopx.settleTurn({ ...options, execute: true });
      assert.deepEqual([replay.ok, replay.idempotent_replay, replay.appended], [true, true, false]);
      assert.equal(spendRows(workspace).length, 1);
    });

    it('rejects a bad argument naming it, and writes nothing', async () => {
      const { workspace, registryPath } = demo();
      const error = await rejectsWith(
        () =>
          loopx.settleTurn({
            registryPath,
            goalId: 'tidy-notes',
            agentId: 'demo',
            turnInstanceId: 't',
            slots: 0,
            execute: true,
          }),
        loopx.INVALID_ARGUMENT,
      );
      assert.equal(error.details['argument'], 'options.slots');
      assert.equal(spendRows(workspace).length, 0);
    });
  });
});
