import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runLoopx } from '../cli/run';

/**
 * The `loopx status --format json` contract LoopX's agents and dashboards read, on a workspace of our
 * own: each goal exercises one attention route (docs/status.md, "Attention status"), with the quota
 * state the status view derives from it and null todo counts for a goal without a state file.
 */

const NOW = '2026-05-02T12:00:00Z';

function todo(text: string, meta: string, mark = ' '): string {
  return `- [${mark}] ${text}\n  <!-- loopx:todo ${meta} -->\n`;
}

function state(userTodos: string, agentTodos: string): string {
  return `---\nstatus: active\nupdated_at: 2026-05-01T00:00:00+00:00\n---\n\n# Active Goal State\n\n## User Todo\n\n${userTodos}\n## Agent Todo\n\n${agentTodos}\n## Next Action\n\n- Keep going.\n`;
}

interface GoalSpec {
  id: string;
  userTodos?: string;
  agentTodos?: string;
  /** Omit the state file. */
  noState?: boolean;
  /** Write one status run; `missingMarkdown` leaves its Markdown artifact out. */
  run?: { classification: string; missingMarkdown?: boolean };
  extra?: Record<string, unknown>;
}

function workspace(goals: GoalSpec[]): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-status-contract-')));
  const entries = goals.map((goal) => ({
    id: goal.id,
    status: 'active',
    role: 'controller',
    repo: dir,
    domain: 'fixture',
    state_file: `.codex/goals/${goal.id}/ACTIVE_GOAL_STATE.md`,
    adapter: { kind: 'generic_project_goal_v0', status: 'connected' },
    quota: { compute: 1, allowed_slots: 4, window_hours: 6 },
    ...goal.extra,
  }));
  fs.mkdirSync(path.join(dir, '.loopx'), { recursive: true });
  fs.writeFileSync(
    path.join(dir, '.loopx', 'registry.json'),
    JSON.stringify({ schema_version: '0.1', common_runtime_root: './runtime', goals: entries }, null, 2),
  );
  for (const goal of goals) {
    if (!goal.noState) {
      const file = path.join(dir, '.codex', 'goals', goal.id, 'ACTIVE_GOAL_STATE.md');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, state(goal.userTodos ?? '', goal.agentTodos ?? ''));
    }
    if (goal.run) {
      const runs = path.join(dir, 'runtime', 'goals', goal.id, 'runs');
      fs.mkdirSync(runs, { recursive: true });
      const stem = '2026-05-02T10-00-00-00-00';
      const row = {
        generated_at: '2026-05-02T10:00:00+00:00',
        goal_id: goal.id,
        classification: goal.run.classification,
        recommended_action: 'Keep going.',
        json_path: `runtime/goals/${goal.id}/runs/${stem}.json`,
        markdown_path: `runtime/goals/${goal.id}/runs/${stem}.md`,
        progress_scope: 'goal',
      };
      fs.writeFileSync(path.join(runs, `${stem}.json`), JSON.stringify(row));
      if (!goal.run.missingMarkdown) fs.writeFileSync(path.join(runs, `${stem}.md`), '# run\n');
      fs.writeFileSync(path.join(runs, 'index.jsonl'), `${JSON.stringify(row)}\n`);
    }
  }
  return dir;
}

interface Item {
  goal_id: string;
  status: string;
  waiting_on: string;
  severity: string;
  user_todos: { open_count: number } | null;
  agent_todos: { open_count: number } | null;
  quota?: { state: string };
}

async function status(
  dir: string,
): Promise<{ code: number; payload: Record<string, unknown>; items: Map<string, Item> }> {
  const result = await runLoopx(
    ['--registry', path.join(dir, '.loopx', 'registry.json'), '--format', 'json', 'status'],
    {
      cwd: dir,
      env: { HOME: dir },
      now: NOW,
    },
  );
  const payload = result.json() as Record<string, unknown>;
  const queue = payload['attention_queue'] as { items: Item[] };
  return { code: result.code, payload, items: new Map(queue.items.map((item) => [item.goal_id, item])) };
}

const route = (item: Item | undefined) => [item?.status, item?.waiting_on, item?.severity, item?.quota?.state];

describe('loopx status JSON contract (attention routes, quota state, todo counts)', () => {
  it('routes each goal as LoopX does and derives the status quota state from the route', async () => {
    const agentWork = todo('Fix the flaky test', 'todo_id=todo_a1 status=open task_class=advancement_task');
    const dir = workspace([
      {
        id: 'gated',
        userTodos: todo('Approve the release', 'todo_id=todo_g1 status=open task_class=user_gate'),
        agentTodos: agentWork,
        run: { classification: 'state_refreshed' },
      },
      {
        id: 'user-todo',
        userTodos: todo('Review the notes', 'todo_id=todo_u1 status=open'),
        run: { classification: 'state_refreshed' },
      },
      {
        id: 'user-action-only',
        userTodos: todo('Rotate the key', 'todo_id=todo_u2 status=open task_class=user_action'),
        agentTodos: agentWork,
        run: { classification: 'state_refreshed' },
      },
      { id: 'no-run', agentTodos: agentWork },
      {
        id: 'artifact-missing',
        agentTodos: agentWork,
        run: { classification: 'validated_progress', missingMarkdown: true },
      },
      {
        id: 'evidence',
        agentTodos: agentWork,
        run: { classification: 'validated_progress' },
        extra: { waiting_on: 'external_evidence' },
      },
      { id: 'no-state', noState: true },
    ]);
    const { code, payload, items } = await status(dir);
    // The open user todo without task_class=user_gate|user_action fails LoopX's contract check.
    assert.equal(code, 1);
    assert.equal(payload['ok'], false);
    assert.deepEqual(route(items.get('loopx-contract')), ['contract_check_failed', 'codex', 'high', undefined]);
    assert.deepEqual(route(items.get('gated')), ['active_state_user_gate', 'controller', 'action', 'operator_gate']);
    assert.deepEqual(route(items.get('user-todo')), [
      'active_state_user_todo',
      'controller',
      'action',
      'operator_gate',
    ]);
    // Open user todos that are all explicit user actions do not hold the goal: the latest run routes it.
    assert.deepEqual(route(items.get('user-action-only')), ['state_refreshed', 'codex', 'action', 'eligible']);
    assert.deepEqual(route(items.get('no-run')), ['connected_without_run', 'codex', 'action', 'eligible']);
    assert.deepEqual(route(items.get('artifact-missing')), ['run_artifact_missing', 'codex', 'high', 'blocked_health']);
    assert.deepEqual(route(items.get('evidence')), ['validated_progress', 'external_evidence', 'watch', 'waiting']);
    // No state file: null todo counts (not zeros), routed by its runs alone, and no contract error.
    const noState = items.get('no-state');
    assert.equal(noState?.user_todos, null);
    assert.equal(noState?.agent_todos, null);
    assert.deepEqual(route(noState), ['connected_without_run', 'codex', 'action', 'eligible']);
    assert.deepEqual(payload['contract_summary'], { errors: 1, warnings: 0, checks: 6 });
    const queue = payload['attention_queue'] as Record<string, number>;
    assert.deepEqual(
      [queue['needs_user_or_controller'], queue['needs_codex'], queue['watching_external_evidence']],
      [2, 5, 1],
    );
  });

  it('throttles a codex-routed goal whose slots are spent, but an open user gate still shows operator_gate', async () => {
    const agentWork = todo('Fix the flaky test', 'todo_id=todo_a1 status=open task_class=advancement_task');
    const gate = todo('Approve the release', 'todo_id=todo_g1 status=open task_class=user_gate');
    const dir = workspace([
      {
        id: 'busy',
        agentTodos: agentWork,
        run: { classification: 'state_refreshed' },
        extra: { quota: { compute: 1, allowed_slots: 0 } },
      },
      {
        id: 'busy-gated',
        userTodos: gate,
        agentTodos: agentWork,
        run: { classification: 'state_refreshed' },
        extra: { quota: { compute: 1, allowed_slots: 0 } },
      },
    ]);
    const { items } = await status(dir);
    assert.equal(items.get('busy')?.quota?.state, 'throttled');
    assert.equal(items.get('busy-gated')?.quota?.state, 'operator_gate');
  });
});
