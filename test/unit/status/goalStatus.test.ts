import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileSystemGoalReader, type GoalFileReader } from '../../../src/core/goal/files';
import {
  activeStateAction,
  GoalStatusCache,
  GoalStatusItemSchema,
  loadGoalStatus,
} from '../../../src/core/status/goalStatus';
import { goalItems, StatusPayloadSchema, type StatusPayload } from '../../../src/core/status/statusPayload';
import { loadStatusAt, statusRef } from '../../support/status';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';

const DEMO_NEXT_ACTION = 'Add a "Related" section linking notes that share a tag.';
/** The demo's open user gate: its attention comes from the state file, so the gate is the recommended action. */
const DEMO_GATE = '[P0] Approve publishing the knowledge base to the team wiki.';

function tempDir(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

function demo(): { dir: string; registryPath: string } {
  const dir = materializeDemoWorkspace(path.join(tempDir('loopx-status-'), 'demo'));
  return { dir, registryPath: path.join(dir, '.loopx', 'registry.json') };
}

/** A reader that counts reads per kind and file. */
function countingReader(): { reader: GoalFileReader; reads: string[]; reset: () => void } {
  const reads: string[] = [];
  const reader: GoalFileReader = {
    stat: (file) => fileSystemGoalReader.stat(file),
    readRegistry: (file) => {
      reads.push(`registry:${path.basename(file)}`);
      return fileSystemGoalReader.readRegistry(file);
    },
    readState: (file) => {
      reads.push(`state:${path.basename(path.dirname(file))}`);
      return fileSystemGoalReader.readState(file);
    },
    readRunIndex: (file, options) => {
      reads.push(`index:${path.basename(path.dirname(path.dirname(file)))}`);
      return fileSystemGoalReader.readRunIndex(file, options);
    },
  };
  return {
    reader,
    reads,
    reset: () => {
      reads.length = 0;
    },
  };
}

const STATE = (route: string): string =>
  `---\nstatus: active\nupdated_at: 2026-07-01T00:00:00+00:00\n---\n## Agent Todo\n- [ ] ${route}\n  <!-- loopx:todo todo_id=todo_work status=open task_class=advancement_task -->\n## Next Action\n- ${route}\n`;

/** A project with goals `alpha` and `beta`, each with a state file and one run. */
function twoGoals(): {
  dir: string;
  registryPath: string;
  statePath: (goal: string) => string;
  indexPath: (goal: string) => string;
} {
  const dir = tempDir('loopx-status-cache-');
  const statePath = (goal: string): string => path.join(dir, '.codex', 'goals', goal, 'ACTIVE_GOAL_STATE.md');
  const indexPath = (goal: string): string => path.join(dir, '.loopx', 'runtime', 'goals', goal, 'runs', 'index.jsonl');
  const goals = ['alpha', 'beta'].map((id) => {
    fs.mkdirSync(path.dirname(statePath(id)), { recursive: true });
    fs.writeFileSync(statePath(id), STATE(`Build the ${id} report.`));
    fs.mkdirSync(path.dirname(indexPath(id)), { recursive: true });
    fs.writeFileSync(
      indexPath(id),
      `${JSON.stringify({ generated_at: '2026-07-01T00:00:00+00:00', goal_id: id, classification: 'state_refreshed', recommended_action: `Build the ${id} report.` })}\n`,
    );
    return { id, repo: dir, state_file: `.codex/goals/${id}/ACTIVE_GOAL_STATE.md`, status: 'active' };
  });
  const registryPath = path.join(dir, '.loopx', 'registry.json');
  fs.writeFileSync(registryPath, JSON.stringify({ common_runtime_root: '.loopx/runtime', goals }, null, 2));
  return { dir, registryPath, statePath, indexPath };
}

/** Rewrites a file so its stamp changes even within one mtime tick (a new inode, as atomic writes do). */
/**
 * Dates a file's mtime a minute back: a file modified within the state-file cache's racy window
 * (`RACY_MS`) has its text read again on every call (`StateFileCache` in core/goal/cache.ts).
 */
function settle(file: string, agoMs = 60_000): void {
  const at = new Date(Date.now() - agoMs);
  fs.utimesSync(file, at, at);
}

function replaceFile(file: string, text: string): void {
  fs.writeFileSync(`${file}.tmp`, text);
  fs.renameSync(`${file}.tmp`, file);
}

describe('status read model', () => {
  it('projects the demo workspace: route, latest run, todos, gate, stale warning', async () => {
    const { dir, registryPath } = demo();
    const payload = await loadStatusAt({ registryPath, homeDir: dir });
    StatusPayloadSchema.parse(payload);
    assert.equal(payload.goal_count, 1);
    assert.equal(payload.run_count, 3);
    assert.equal(payload.runtime_root, path.join(dir, '.loopx', 'runtime'));
    const item = goalItems(payload)[0];
    assert.ok(item);
    assert.equal(item.goal_id, 'tidy-notes');
    assert.equal(item.display_name, 'Tidy the notes folder');
    assert.equal(item.active_state_next_action, DEMO_NEXT_ACTION);
    assert.deepEqual(item.active_state_next_action_entries, [DEMO_NEXT_ACTION]);
    // The open user gate routes the goal to the controller before its latest run (LoopX's attention status).
    assert.equal(item.status, 'active_state_user_gate');
    assert.equal(item.waiting_on, 'controller');
    // The 08:56 quota spend is status-neutral, so the 08:55 validated run speaks for the goal.
    assert.equal(
      item.latest_runs.find((run) => run.classification !== 'quota_slot_spent')?.classification,
      'validated_progress',
    );
    assert.equal(item.latest_run_recommended_action, DEMO_NEXT_ACTION);
    assert.equal(item.latest_run_recommended_action_source, 'latest_status_run');
    // As the original's active-state attention item: the open gate, not the latest run, is the action.
    assert.equal(item.recommended_action, DEMO_GATE);
    assert.equal(item.source, 'active_state');
    assert.equal(item.severity, 'action');
    assert.deepEqual(item.registered_agents, ['demo', 'codex-main']);

    assert.deepEqual(
      [
        item.agent_todos!.source_section,
        item.agent_todos!.total_count,
        item.agent_todos!.open_count,
        item.agent_todos!.done_count,
      ],
      ['Agent Todo', 5, 4, 1],
    );
    assert.deepEqual(
      item.agent_todos!.items.map((todo) => todo.todo_id),
      // The original's items: the open todos by priority, then the done one.
      ['todo_related', 'todo_index', 'todo_links', 'todo_publish', 'todo_titles'],
    );
    assert.deepEqual(item.agent_todos!.items[0], {
      schema_version: 'todo_item_v0',
      role: 'agent',
      archive_state: 'active',
      source_section: 'Agent Todo',
      index: 2,
      done: false,
      text: `[P1] ${DEMO_NEXT_ACTION}`,
      title: DEMO_NEXT_ACTION,
      todo_id: 'todo_related',
      priority: 'P1',
      status: 'open',
      claimed_by: null,
      task_class: 'advancement_task',
    });
    assert.deepEqual(
      [item.user_todos!.source_section, item.user_todos!.open_count],
      ['User Todo / Owner Review Reading Queue', 2],
    );
    // One claimed open agent todo (todo_links): the original's claimed counts; no user todo is claimed.
    assert.deepEqual(
      [
        item.agent_todos!.claimed_open_count,
        item.agent_todos!.unclaimed_open_count,
        item.agent_todos!.claimed_advancement_open_count,
        item.agent_todos!.claimed_monitor_open_count,
      ],
      [1, 3, 1, 0],
    );
    assert.equal(Object.hasOwn(item.user_todos!, 'claimed_open_count'), false);
    // Each todo carries the original's role and its role's first heading (the summary's source_section).
    assert.deepEqual(
      item.user_todos!.items.map((todo) => [todo.role, todo.source_section, todo.archive_state]),
      [
        ['user', 'User Todo / Owner Review Reading Queue', 'active'],
        ['user', 'User Todo / Owner Review Reading Queue', 'active'],
      ],
    );

    assert.equal(item.open_gates.length, 1);
    const gate = item.open_gates[0];
    assert.deepEqual(
      [gate?.todo_id, gate?.blocks_agent, gate?.unblocks_todo_ids, gate?.decision_scope, gate?.blocked_todo_ids],
      ['todo_gate_publish', 'demo', ['todo_publish'], 'public_claim:goal:wiki', ['todo_publish']],
    );

    // The state file says updated_at 09:00, after the 08:55 run that has no snapshot of it.
    assert.deepEqual(
      item.projection_warnings.map((warning) => warning.kind),
      ['stale_latest_run_projection'],
    );
    assert.deepEqual(item.stale_latest_run_warning?.reason_codes, ['active_state_updated_after_latest_run']);
    assert.equal(item.next_action_projection_warning, undefined);
    assert.equal(item.state_projection_gap, undefined);

    assert.deepEqual(
      item.latest_runs.map((run) => run.classification),
      ['quota_slot_spent', 'validated_progress', 'state_refreshed'],
    );
    assert.equal(
      item.latest_runs.every((run) => run.json_exists && run.markdown_exists),
      true,
    );
    assert.equal(item.active_state.available, true);
    assert.equal(item.active_state.updated_at, '2026-11-28T09:00:00+00:00');
    assert.equal(item.state_diagnostics?.parseable, true);
    assert.equal(item.quota, undefined);

    assert.equal(payload.contract.ok, true);
    // Drift is the item's (stale_latest_run_warning, projection_warnings), not a contract problem, as in LoopX.
    assert.equal(payload.contract.summary.warnings, 0);
    assert.deepEqual(payload.contract.warnings, []);
    assert.equal(item.stale_latest_run_warning?.kind, 'stale_latest_run_projection');
    // LoopX's agents read the counts at the top level too.
    assert.deepEqual(payload.contract_summary, payload.contract.summary);
    assert.deepEqual(
      [
        payload.attention_queue.item_count,
        payload.attention_queue.needs_codex,
        payload.attention_queue.needs_user_or_controller,
      ],
      [1, 0, 1],
    );
    assert.deepEqual(
      payload.run_history.goals.map((goal) => [goal.id, goal.unique_runs, goal.latest_runs.length]),
      [['tidy-notes', 3, 3]],
    );
  });

  it('emits the fields the dashboards always require, with their types', async () => {
    const { dir, registryPath } = demo();
    const payload = JSON.parse(JSON.stringify(await loadStatusAt({ registryPath, homeDir: dir }))) as StatusPayload;
    const always: [string, string][] = [
      ['ok', 'boolean'],
      ['registry', 'string'],
      ['runtime_root', 'string'],
      ['goal_count', 'number'],
      ['run_count', 'number'],
      ['contract.ok', 'boolean'],
      ['contract.summary.errors', 'number'],
      ['contract.summary.warnings', 'number'],
      ['contract.summary.checks', 'number'],
      ['attention_queue.available', 'boolean'],
      ['attention_queue.item_count', 'number'],
      ['attention_queue.needs_user_or_controller', 'number'],
      ['attention_queue.needs_codex', 'number'],
      ['attention_queue.watching_external_evidence', 'number'],
    ];
    for (const [field, type] of always) {
      const value = field.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], payload);
      assert.equal(typeof value, type, field);
    }
    assert.ok(
      Array.isArray(payload.contract.errors) &&
        Array.isArray(payload.contract.warnings) &&
        payload.contract.checks.every((c) => typeof c === 'string'),
    );
    for (const item of goalItems(payload)) {
      for (const field of ['goal_id', 'status', 'waiting_on', 'severity', 'recommended_action'] as const)
        assert.equal(typeof item[field], 'string', field);
      for (const todo of [...item.user_todos!.items, ...item.agent_todos!.items]) {
        assert.deepEqual([typeof todo.index, typeof todo.done, typeof todo.text], ['number', 'boolean', 'string']);
      }
    }
    for (const goal of payload.run_history.goals) {
      assert.equal(typeof goal.id, 'string');
      for (const run of goal.latest_runs)
        assert.deepEqual([typeof run.generated_at, typeof run.goal_id], ['string', 'string']);
    }
  });

  it('done_count counts closed todos as LoopX does: done and deferred', async () => {
    const { dir, registryPath } = demo();
    const statePath = path.join(dir, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md');
    const state = fs
      .readFileSync(statePath, 'utf8')
      .replace('- [ ] [P3] Publish', '- [-] [P3] Publish')
      .replace('todo_id=todo_publish status=open', 'todo_id=todo_publish status=deferred');
    fs.writeFileSync(statePath, state);
    const payload = await loadStatusAt({ registryPath, homeDir: os.homedir() });
    const agent = goalItems(payload)[0]?.agent_todos;
    assert.deepEqual([agent?.open_count, agent?.done_count, agent?.deferred_count], [3, 2, 1]);
  });

  it('seen as one agent: its lane and unclaimed todos are listed, other claims are not', async () => {
    const { dir, registryPath } = demo();
    const payload = await loadStatusAt({ registryPath, homeDir: dir, agentId: 'demo' });
    const item = goalItems(payload)[0];
    assert.equal(payload.agent_id, 'demo');
    assert.equal(item?.agent_id, 'demo');
    assert.deepEqual(
      item?.agent_todos?.items.map((todo) => todo.todo_id),
      ['todo_related', 'todo_index', 'todo_publish', 'todo_titles'],
    );
    assert.equal(item?.agent_todos.open_count, 4, 'counts stay goal-wide');
  });

  it('a goal whose state file is missing is reported in its item, with paths labelled, and the rest still projects', async () => {
    const { dir, registryPath } = demo();
    fs.rmSync(path.join(dir, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md'));
    const payload = await loadStatusAt({ registryPath, homeDir: dir });
    const item = goalItems(payload)[0];
    assert.ok(item);
    assert.equal(item.active_state.available, false);
    assert.equal(item.active_state.error?.code, 'state_file_missing');
    assert.ok(!item.active_state.error?.message.includes(dir), 'no absolute path leaks into the item');
    assert.match(
      item.active_state.error?.message ?? '',
      /<project>\/\.codex\/goals\/tidy-notes\/ACTIVE_GOAL_STATE\.md/,
    );
    // No todos to read: LoopX reports null counts and routes the goal by its latest run alone.
    assert.equal(item.user_todos, null);
    assert.equal(item.agent_todos, null);
    assert.notEqual(item.status, 'active_state_user_gate');
    assert.equal(item.latest_run_recommended_action, DEMO_NEXT_ACTION, 'the run history is still read');
    // A missing state file is not a contract error in LoopX's validator; the item carries the reason.
    assert.equal(payload.contract.summary.errors, 0);
  });

  it('hides a run recommendation that names a local path or a secret', async () => {
    const { dir, registryPath } = demo();
    const index = path.join(dir, '.loopx', 'runtime', 'goals', 'tidy-notes', 'runs', 'index.jsonl');
    fs.appendFileSync(
      index,
      `${JSON.stringify({ generated_at: '2026-11-28T10:00:00+00:00', goal_id: 'tidy-notes', classification: 'state_refreshed', recommended_action: 'deploy with token=abcdefghijklmnop' })}\n`,
    );
    const item = goalItems(await loadStatusAt({ registryPath, homeDir: dir }))[0];
    assert.equal(item?.latest_runs[0]?.recommended_action, null);
    assert.equal(item?.latest_run_recommended_action, null);
    assert.equal(item?.source, 'active_state');
    assert.equal(item?.recommended_action, DEMO_GATE);
    assert.doesNotMatch(JSON.stringify(item), /abcdefghijklmnop/);
  });

  it('attaches the quota summary a provider gives on every call; a failing provider leaves it unset with a contract warning', async () => {
    const { dir, registryPath } = demo();
    const cache = new GoalStatusCache();
    let calls = 0;
    const quotaSummary = async () => {
      calls++;
      return { state: 'eligible', allowed_slots: 24, spent_slots: calls };
    };
    const first = await loadStatusAt({ registryPath, homeDir: dir, cache, quotaSummary });
    const second = await loadStatusAt({ registryPath, homeDir: dir, cache, quotaSummary });
    assert.equal(goalItems(first)[0]?.quota?.spent_slots, 1);
    assert.equal(goalItems(second)[0]?.quota?.spent_slots, 2, 'quota is time-dependent, so never cached');
    const failing = await loadStatusAt({
      registryPath,
      homeDir: dir,
      cache,
      quotaSummary: () => Promise.reject(new Error('ledger unreadable')),
    });
    assert.equal(goalItems(failing)[0]?.quota, undefined);
    assert.ok(failing.contract.warnings.includes('tidy-notes: quota summary unavailable: ledger unreadable'));
  });

  it("loadGoalStatus takes the part of a goal's GoalRef status reads and validates its output", async () => {
    const { dir } = demo();
    const item = await loadGoalStatus(
      statusRef({
        goalId: 'tidy-notes',
        projectRoot: dir,
        runtimeRoot: path.join(dir, '.loopx', 'runtime'),
        entry: {
          display_name: 'Tidy',
          status: 'active',
          state_file: path.join(dir, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md'),
        },
      }),
      { homeDir: dir, limit: 1 },
    );
    assert.equal(GoalStatusItemSchema.parse(item).latest_runs.length, 1);
    assert.equal(item.unique_runs, 3);
  });

  it('the cache re-reads only the files that changed, and re-projects only the goal whose inputs changed', async () => {
    const project = twoGoals();
    for (const goal of ['alpha', 'beta']) settle(project.statePath(goal));
    const counter = countingReader();
    const cache = new GoalStatusCache(counter.reader);
    const load = () => loadStatusAt({ registryPath: project.registryPath, homeDir: project.dir, cache });
    const byId = (payload: StatusPayload, id: string) => goalItems(payload).find((item) => item.goal_id === id);

    const first = await load();
    assert.deepEqual(counter.reads.sort(), [
      'index:alpha',
      'index:beta',
      'registry:registry.json',
      'state:alpha',
      'state:beta',
    ]);

    counter.reset();
    const unchanged = await load();
    assert.deepEqual(counter.reads, [], 'nothing changed: nothing is read');
    assert.equal(byId(unchanged, 'alpha'), byId(first, 'alpha'), 'the same item object is reused');

    counter.reset();
    replaceFile(project.statePath('beta'), STATE('Ship the beta report.'));
    settle(project.statePath('beta'), 30_000);
    const afterState = await load();
    assert.deepEqual(counter.reads, ['state:beta']);
    assert.equal(byId(afterState, 'beta')?.active_state_next_action, 'Ship the beta report.');
    assert.equal(byId(afterState, 'alpha'), byId(first, 'alpha'));

    counter.reset();
    fs.appendFileSync(
      project.indexPath('alpha'),
      `${JSON.stringify({ generated_at: '2026-07-02T00:00:00+00:00', goal_id: 'alpha', classification: 'validated_progress', recommended_action: 'Review the alpha report.' })}\n`,
    );
    const afterRun = await load();
    assert.deepEqual(counter.reads, ['index:alpha']);
    assert.equal(byId(afterRun, 'alpha')?.latest_run_recommended_action, 'Review the alpha report.');
    assert.equal(byId(afterRun, 'beta'), byId(afterState, 'beta'));

    counter.reset();
    const registry = JSON.parse(fs.readFileSync(project.registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
    (registry.goals[0] as Record<string, unknown>)['display_name'] = 'Alpha renamed';
    replaceFile(project.registryPath, JSON.stringify(registry, null, 2));
    const afterRegistry = await load();
    assert.deepEqual(counter.reads, ['registry:registry.json'], 'a registry change re-reads no goal files');
    assert.equal(byId(afterRegistry, 'alpha')?.display_name, 'Alpha renamed');
    assert.equal(
      byId(afterRegistry, 'beta'),
      byId(afterState, 'beta'),
      "beta's entry did not change, so it is not re-projected",
    );
  });

  it("takes the action from the state file when the attention does (the original's active_state item)", () => {
    const open = { nextAction: 'the route', gapAction: null };
    const gate = { text: '[P1] Approve it', task_class: 'user_gate' };
    const action = { text: 'Rotate the key', task_class: 'user_action' };
    const agent = { text: '[P0] Ship it' };
    assert.equal(
      activeStateAction('active_state_user_gate', 'active_state', { ...open, user: [action, gate], agent: [] }),
      '[P1] Approve it',
    );
    assert.equal(
      activeStateAction('active_state_user_todo', 'active_state', { ...open, user: [action], agent: [] }),
      'Rotate the key',
    );
    assert.equal(
      activeStateAction('active_state_agent_todo', 'active_state', { ...open, user: [], agent: [agent] }),
      '[P0] Ship it',
    );
    assert.equal(
      activeStateAction('active_state_agent_todo', 'active_state', { ...open, user: [], agent: [] }),
      'the route',
    );
    assert.equal(
      activeStateAction('active_state_user_gate', 'active_state', {
        nextAction: null,
        gapAction: null,
        user: [],
        agent: [],
      }),
      'resolve the open user_gate todo from the active goal state',
    );
    assert.equal(
      activeStateAction('validated_progress', 'latest_run', { ...open, user: [gate], agent: [agent] }),
      null,
    );
  });
});

describe("status read model: a registry wait over a run (the original's goal_attention override)", () => {
  it("carries the registry's own question and handoff condition, and follows a change of the question", async () => {
    const project = twoGoals();
    const cache = new GoalStatusCache(fileSystemGoalReader);
    const setRegistry = (question: string) => {
      const registry = JSON.parse(fs.readFileSync(project.registryPath, 'utf8')) as {
        goals: Record<string, unknown>[];
      };
      Object.assign(registry.goals[0] as Record<string, unknown>, {
        waiting_on: 'controller',
        operator_question: question,
        next_handoff_condition: 'stop until the owner answers',
      });
      replaceFile(project.registryPath, JSON.stringify(registry, null, 2));
    };
    const alpha = async () =>
      goalItems(await loadStatusAt({ registryPath: project.registryPath, homeDir: project.dir, cache })).find(
        (item) => item.goal_id === 'alpha',
      );
    // The run's artifacts exist (else the route is `run_artifact_missing`).
    for (const ext of ['json', 'md']) fs.writeFileSync(path.join(project.dir, `run.${ext}`), '{}');
    fs.writeFileSync(
      project.indexPath('alpha'),
      `${JSON.stringify({ generated_at: '2026-07-01T00:00:00+00:00', goal_id: 'alpha', classification: 'state_refreshed', recommended_action: 'Build the alpha report.', json_path: path.join(project.dir, 'run.json'), markdown_path: path.join(project.dir, 'run.md') })}\n`,
    );
    setRegistry('Ship it?');
    const first = await alpha();
    assert.deepEqual(
      [first?.waiting_on, first?.source, first?.operator_question, first?.next_handoff_condition],
      ['controller', 'registry', 'Ship it?', 'stop until the owner answers'],
    );
    assert.deepEqual(
      [first?.project_asset?.gate, first?.project_asset?.stop_condition],
      ['operator_question', 'stop until the owner answers'],
    );
    // Only the registry's question changes: the next answer has the new one.
    setRegistry('Ship it now?');
    assert.equal((await alpha())?.operator_question, 'Ship it now?');
  });
});
