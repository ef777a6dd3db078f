import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import {
  GlobalGatesResponseSchema,
  GlobalRisksResponseSchema,
  GlobalSummaryResponseSchema,
  GlobalTodosResponseSchema,
  GlobalUnavailableResponseSchema,
} from '../../../src/core/status/globalSchemas';
import { loadGlobalSnapshot } from '../../../src/core/status/globalSnapshot';
import {
  globalGates,
  globalRisks,
  globalSummary,
  globalTodos,
  parseTimeRange,
} from '../../../src/core/status/globalViews';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import { runLoopx } from '../cli/run';

const NOW = '2026-11-28T09:30:00Z';

function demo(): { dir: string; registryPath: string; statePath: string; indexPath: string } {
  const dir = materializeDemoWorkspace(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-global-')), 'ws'));
  return {
    dir,
    registryPath: path.join(dir, '.loopx', 'registry.json'),
    statePath: path.join(dir, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md'),
    indexPath: path.join(dir, '.loopx', 'runtime', 'goals', 'tidy-notes', 'runs', 'index.jsonl'),
  };
}

function editRegistry(registryPath: string, edit: (goals: Record<string, unknown>[]) => void): void {
  const registry = JSON.parse(fs.readFileSync(registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
  edit(registry.goals);
  fs.writeFileSync(registryPath, JSON.stringify(registry, null, 2));
}

const snapshotOf = (registryPath: string, extra: { isProcessAlive?: (pid: number) => boolean } = {}) =>
  loadGlobalSnapshot({ registryPath, homeDir: os.homedir(), clock: fixedClock(NOW), ...extra });

const ids = (rows: readonly { todo_id: string }[]): string[] => rows.map((row) => row.todo_id);

describe('global read models on the demo workspace', () => {
  it('global-summary: one active goal, its todo and gate counts, runs in the last 24 h and quota', async () => {
    const { registryPath } = demo();
    const response = GlobalSummaryResponseSchema.parse(globalSummary(await snapshotOf(registryPath)));
    assert.equal(response.schema_version, 'global_manager_command_response_v0');
    assert.deepEqual(response.request, {
      agent_id: null,
      limit: 8,
      time_range: '24h',
      time_range_hours: 24,
      generated_at: '2026-11-28T09:30:00Z',
    });
    assert.deepEqual(response.summary, {
      goal_count: 1,
      active_goal_count: 1,
      stopped_goal_count: 0,
      waiting_on_user: 0,
      waiting_on_agents: 1,
      open_agent_todos: 4,
      open_user_todos: 2,
      open_gates: 1,
      runs_in_range: 3,
      progress_runs_in_range: 2,
      contract_errors: 0,
      contract_warnings: 0,
    });
    assert.deepEqual(response.groups.goals[0], {
      goal_id: 'tidy-notes',
      display_name: 'Tidy the notes folder',
      status: 'active_state_user_gate',
      activation_state: 'active',
      waiting_on: 'controller',
      severity: 'action',
      recommended_action: '[P0] Approve publishing the knowledge base to the team wiki.',
      open_agent_todos: 4,
      open_user_todos: 2,
      open_gates: 1,
      runs_in_range: 3,
      progress_runs_in_range: 2,
      latest_run_at: '2026-11-28T08:56:00+00:00',
      latest_run_classification: 'quota_slot_spent',
      quota_state: 'operator_gate',
      spent_slots: 1,
      allowed_slots: 24,
    });
    assert.deepEqual(response.boundary, {
      mode: 'read_only',
      writes: false,
      spends_quota: false,
      scrubbed: true,
      source: 'loopx status read model (registry, ACTIVE_GOAL_STATE.md, run index, quota ledger)',
      registry: '<project>/.loopx/registry.json',
      goal_count: 1,
    });
    const narrow = globalSummary(await snapshotOf(registryPath), { timeRange: '40m' });
    assert.equal(narrow.summary.runs_in_range, 2, 'the runs at 08:55 and 08:56, not the one of the day before');
  });

  it('global-gates: the publishing gate, what it holds back and the lane it blocks', async () => {
    const { registryPath } = demo();
    const response = GlobalGatesResponseSchema.parse(globalGates(await snapshotOf(registryPath)));
    assert.deepEqual(response.summary, {
      open_gate_count: 1,
      holding_gate_count: 0,
      goals_with_open_gates: 1,
      blocked_todo_count: 1,
      unscoped_gate_count: 0,
    });
    assert.deepEqual(response.groups.open, [
      {
        goal_id: 'tidy-notes',
        display_name: 'Tidy the notes folder',
        todo_id: 'todo_gate_publish',
        title: 'Approve publishing the knowledge base to the team wiki.',
        priority: 'P0',
        gate_state: 'open',
        blocks_agent: 'demo',
        global_gate: false,
        decision_scope: 'public_claim:goal:wiki',
        blocked_todo_ids: ['todo_publish'],
        unscoped: false,
        line: 10,
      },
    ]);
    assert.deepEqual(response.groups.holding, []);
    assert.equal(
      globalGates(await snapshotOf(registryPath), { agentId: 'codex-main' }).summary.open_gate_count,
      0,
      "the gate blocks demo's lane, not codex-main's",
    );
  });

  it('global-todos: runnable in priority order, the gated todo blocked, the owner review listed', async () => {
    const { registryPath } = demo();
    const response = GlobalTodosResponseSchema.parse(globalTodos(await snapshotOf(registryPath)));
    assert.deepEqual(ids(response.groups.runnable), ['todo_related', 'todo_index', 'todo_links']);
    assert.deepEqual(
      response.groups.blocked.map((row) => [row.todo_id, row.reasons]),
      [['todo_publish', ['gate:todo_gate_publish']]],
    );
    assert.deepEqual(ids(response.groups.review), ['todo_review_index']);
    assert.deepEqual(response.groups.deferred_ready, []);
    assert.deepEqual(response.summary, {
      runnable_count: 3,
      deferred_ready_count: 0,
      blocked_count: 1,
      review_count: 1,
      deferred_waiting_count: 0,
      not_listed_without_delivery_authority: 0,
      goals_considered: 1,
    });
    assert.equal(response.truncated, false);
    const asDemo = globalTodos(await snapshotOf(registryPath), { agentId: 'demo' });
    assert.deepEqual(
      ids(asDemo.groups.runnable),
      ['todo_related', 'todo_index'],
      "codex-main's claimed todo is not demo's",
    );
    const limited = globalTodos(await snapshotOf(registryPath), { limit: 1 });
    assert.deepEqual(ids(limited.groups.runnable), ['todo_related']);
    assert.equal(limited.summary.runnable_count, 3);
    assert.equal(limited.truncated, true);
  });

  it('global-risks: the stale latest run; a failing validation, quota over its limit and a dead lock when present', async () => {
    const { registryPath, indexPath, dir } = demo();
    const plain = GlobalRisksResponseSchema.parse(globalRisks(await snapshotOf(registryPath)));
    assert.equal(plain.summary.risk_count, 1);
    assert.deepEqual(
      plain.groups.stale_runs.map((row) => [row.kind, row.severity, row.goal_id, row.recommended_action]),
      [['stale_latest_run_projection', 'action', 'tidy-notes', 'loopx refresh-state --goal-id tidy-notes']],
    );

    fs.appendFileSync(
      indexPath,
      `${JSON.stringify({ generated_at: '2026-11-28T09:10:00+00:00', goal_id: 'tidy-notes', classification: 'validation_failed', recommended_action: 'Fix the broken link check.', health_check: 'validation failed: node scripts/check-notes.js exited 1' })}\n`,
    );
    editRegistry(registryPath, (goals) => {
      (goals[0] as Record<string, unknown>)['quota'] = {
        compute: 1,
        window_hours: 24,
        slot_minutes: 1,
        allowed_slots: 1,
      };
    });
    const lockFile = path.join(dir, '.loopx', 'registry.json.loopx-lock');
    fs.writeFileSync(
      lockFile,
      JSON.stringify({
        schema_version: 'file_lock_holder_v0',
        lock_id: 'abc',
        policy: 'mutation',
        pid: 424242,
        agent_id: 'demo',
        operation: 'todo_add',
        acquired_at: '2026-11-28T09:00:00Z',
        hostname: os.hostname(),
      }),
    );
    const risky = GlobalRisksResponseSchema.parse(
      globalRisks(await snapshotOf(registryPath, { isProcessAlive: (pid) => pid !== 424242 })),
    );
    assert.deepEqual(
      risky.groups.failing_validations.map((row) => [row.kind, row.severity, row.details['failing_runs_in_range']]),
      [['failing_validation', 'high', 1]],
    );
    assert.deepEqual(
      risky.groups.quota.map((row) => [
        row.kind,
        row.severity,
        row.details['spent_slots'],
        row.details['allowed_slots'],
      ]),
      [['quota_over_limit', 'high', 1, 1]],
    );
    assert.deepEqual(
      risky.groups.dead_locks.map((row) => [row.kind, row.details['pid'], row.details['lock_file']]),
      [['lock_held_by_dead_process', 424242, '<project>/.loopx/registry.json.loopx-lock']],
    );
    assert.equal(risky.summary.high, 2);
    assert.equal(JSON.stringify(risky).includes(dir), false, 'paths are labelled');

    const alive = globalRisks(await snapshotOf(registryPath, { isProcessAlive: () => true }));
    assert.deepEqual(alive.groups.dead_locks, [], 'a live holder is not a risk');
  });

  it('finds a lock whose holder process really exited', async () => {
    const { registryPath, statePath } = demo();
    const child = spawn(process.execPath, ['-e', '0']);
    const pid = child.pid ?? 0;
    await new Promise((resolve) => child.on('exit', resolve));
    fs.writeFileSync(
      `${statePath}.loopx-lock`,
      JSON.stringify({
        schema_version: 'file_lock_holder_v0',
        lock_id: 'def',
        policy: 'mutation',
        pid,
        agent_id: 'codex-main',
        operation: 'todo_claim',
        acquired_at: '2026-11-28T09:00:00Z',
        hostname: os.hostname(),
      }),
    );
    fs.writeFileSync(
      `${registryPath}.loopx-lock`,
      JSON.stringify({
        schema_version: 'file_lock_holder_v0',
        lock_id: 'ghi',
        policy: 'mutation',
        pid: process.pid,
        agent_id: 'demo',
        operation: 'todo_add',
        acquired_at: '2026-11-28T09:00:00Z',
        hostname: os.hostname(),
      }),
    );
    const risks = globalRisks(await snapshotOf(registryPath));
    assert.deepEqual(
      risks.groups.dead_locks.map((row) => row.details['pid']),
      [pid],
    );
  });
});

describe('global-todos readiness (case 37)', () => {
  it('case 37: no goals → ok, counts 0, four empty groups, not truncated', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-global-empty-'));
    const registryPath = path.join(dir, '.loopx', 'registry.json');
    fs.mkdirSync(path.dirname(registryPath), { recursive: true });
    fs.writeFileSync(registryPath, JSON.stringify({ schema_version: '0.1', goals: [] }));
    const response = globalTodos(await snapshotOf(registryPath));
    assert.equal(response.ok, true);
    assert.deepEqual(response.groups, { runnable: [], deferred_ready: [], blocked: [], review: [] });
    assert.equal(response.truncated, false);
    assert.deepEqual(Object.values(response.summary), [0, 0, 0, 0, 0, 0, 0]);
  });

  it('case 37: a todo with conflicting readiness is one blocked row with a conflicting_readiness_projection warning', async () => {
    const { registryPath, statePath } = demo();
    const text = fs
      .readFileSync(statePath, 'utf8')
      // Deferred until the titles are done (they are), but the publishing gate holds it back.
      .replace(
        'status=open task_class=advancement_task -->\n- [ ] [P1] Write notes/index.md',
        'status=deferred task_class=advancement_task resume_when=todo_done:todo_titles -->\n- [ ] [P1] Write notes/index.md',
      )
      .replace('unblocks_todo_id=todo_publish', 'unblocks_todo_id=todo_publish,todo_related');
    fs.writeFileSync(statePath, text);
    const response = globalTodos(await snapshotOf(registryPath));
    const rows = [...response.groups.runnable, ...response.groups.deferred_ready, ...response.groups.blocked].filter(
      (row) => row.todo_id === 'todo_related',
    );
    assert.deepEqual(
      rows.map((row) => [row.status, row.reasons]),
      [['deferred', ['gate:todo_gate_publish']]],
    );
    assert.ok(response.groups.blocked.some((row) => row.todo_id === 'todo_related'));
    assert.deepEqual(
      response.warnings.map((w) => [w.kind, w.todo_id]),
      [['conflicting_readiness_projection', 'todo_related']],
    );
  });

  it('a deferred todo is listed as ready once its resume condition holds, and not before', async () => {
    const { registryPath, statePath } = demo();
    const base = fs.readFileSync(statePath, 'utf8');
    const defer = (condition: string) =>
      base.replace(
        'todo_id=todo_index status=open task_class=advancement_task',
        `todo_id=todo_index status=deferred task_class=advancement_task resume_when=${condition}`,
      );
    fs.writeFileSync(statePath, defer('todo_done:todo_titles'));
    let response = globalTodos(await snapshotOf(registryPath));
    assert.deepEqual(
      response.groups.deferred_ready.map((row) => [row.todo_id, row.reasons]),
      [['todo_index', ['resume_when:todo_done:todo_titles']]],
    );
    fs.writeFileSync(statePath, defer('todo_done:todo_links'));
    response = globalTodos(await snapshotOf(registryPath));
    assert.deepEqual(response.groups.deferred_ready, []);
    assert.equal(response.summary.deferred_waiting_count, 1);
    fs.writeFileSync(statePath, defer('capacity_available'));
    response = globalTodos(await snapshotOf(registryPath));
    assert.deepEqual(ids(response.groups.deferred_ready), ['todo_index'], 'the quota has slots left');
    fs.writeFileSync(statePath, defer('pr_merged:#12'));
    response = globalTodos(await snapshotOf(registryPath));
    assert.deepEqual(response.groups.deferred_ready, [], 'a pull request LoopX cannot check stays deferred');
  });

  it('case 37: open todos of a goal without delivery authority are not listed', async () => {
    for (const edit of [
      (goal: Record<string, unknown>) => {
        goal['status'] = 'stopped';
      },
      (goal: Record<string, unknown>) => {
        goal['coordination'] = { agent_model: 'peer_v1', registered_agents: [] };
      },
      (goal: Record<string, unknown>) => {
        goal['quota'] = { compute: 0 };
      },
    ]) {
      const { registryPath } = demo();
      editRegistry(registryPath, (goals) => edit(goals[0] as Record<string, unknown>));
      const response = globalTodos(await snapshotOf(registryPath));
      assert.deepEqual([...response.groups.runnable, ...response.groups.blocked], []);
      assert.equal(response.summary.not_listed_without_delivery_authority, 4);
      assert.deepEqual(ids(response.groups.review), ['todo_review_index'], "the owner review is still the owner's");
    }
    const { registryPath } = demo();
    const stranger = globalTodos(await snapshotOf(registryPath), { agentId: 'someone-else' });
    assert.deepEqual(stranger.groups.runnable, [], 'an agent not registered on the goal may not deliver for it');
  });
});

describe('loopx global-* (CLI)', () => {
  it('prints Markdown for people and the JSON response with --format json', async () => {
    const { dir } = demo();
    const markdown = await runLoopx(['global-todos'], { cwd: dir, now: NOW });
    assert.equal(markdown.code, 0, markdown.stderr);
    assert.match(markdown.stdout, /^# LoopX global todos/);
    assert.match(markdown.stdout, /3 runnable, 0 deferred and ready to resume, 1 blocked, 1 for you to review\./);
    assert.match(markdown.stdout, /Read-only: nothing was written/);
    for (const command of ['global-summary', 'global-gates', 'global-todos', 'global-risks']) {
      const run = await runLoopx(
        [command, '--format', 'json', '--limit', '2', '--time-range', '7d', '--agent-id', 'demo'],
        { cwd: dir, now: NOW },
      );
      assert.equal(run.code, 0, `${command}: ${run.stderr}`);
      const json = run.json();
      assert.equal(json['command'], command);
      assert.deepEqual(json['request'], {
        agent_id: 'demo',
        limit: 2,
        time_range: '7d',
        time_range_hours: 168,
        generated_at: '2026-11-28T09:30:00Z',
      });
    }
  });

  it('answers ok:false "Global status source unavailable." (exit 1) when the registry cannot be read; bad arguments exit 2', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-global-none-'));
    // No global registry either: the default one lives under the home folder, which other runs (the editor's
    // Create Goal, as the original's bootstrap) may have filled on this machine.
    const home = process.env['HOME'];
    process.env['HOME'] = dir;
    const run = await runLoopx(['global-risks', '--format', 'json'], { cwd: dir, now: NOW }).finally(() => {
      process.env['HOME'] = home;
    });
    assert.equal(run.code, 1);
    const json = GlobalUnavailableResponseSchema.parse(run.json());
    assert.equal(json.error, 'Global status source unavailable.');
    assert.equal(run.stdout.includes(dir), false);
    fs.mkdirSync(path.join(dir, '.loopx'));
    fs.writeFileSync(path.join(dir, '.loopx', 'registry.json'), '{ not json');
    assert.equal((await runLoopx(['global-summary'], { cwd: dir, now: NOW })).code, 1);
    for (const args of [
      ['--limit', '0'],
      ['--time-range', 'soon'],
      ['--agent-id', '../x'],
    ]) {
      assert.equal((await runLoopx(['global-todos', ...args], { cwd: dir, now: NOW })).code, 2, args.join(' '));
    }
  });

  it('parses time ranges in minutes, hours and days', () => {
    assert.equal(parseTimeRange('90m'), 1.5);
    assert.equal(parseTimeRange('24h'), 24);
    assert.equal(parseTimeRange('7d'), 168);
    for (const bad of ['', '0h', '-1h', '1w', 'h']) assert.throws(() => parseTimeRange(bad), /time range/);
  });
});
