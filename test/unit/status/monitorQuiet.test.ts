import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { goalItems, type StatusQuotaSources } from '../../../src/core/status/statusPayload';
import { loadStatusAt } from '../../support/status';
import { tempDir } from '../../support/tempDir';

/**
 * LoopX's quiet-monitor display (kit seed 10 status-013; `normalize_monitor_quiet_attention_display`): a goal routed
 * to `codex` whose only open work is `continuous_monitor` todos that may run now waits on `monitor_signal` (severity
 * `watch`); its quota state still follows the route it had.
 */

const MONITOR =
  '- [ ] [P0] Watch the nightly benchmark\n  <!-- loopx:todo todo_id=todo_watch status=open task_class=continuous_monitor expires_at=2099-01-01T00:00:00Z -->';

function workspace(todos: { user?: string[]; agent: string[] }): string {
  const dir = tempDir('loopx-monitor-quiet-');
  const state = [
    '---',
    'status: active',
    'updated_at: 2026-07-01T00:00:00+00:00',
    '---',
    '',
    '## User Todo / Owner Review Reading Queue',
    '',
    ...(todos.user ?? []),
    '',
    '## Agent Todo',
    '',
    ...todos.agent,
    '',
    '## Next Action',
    '',
    '- Watch the nightly benchmark.',
    '',
  ].join('\n');
  fs.mkdirSync(path.join(dir, '.codex', 'goals', 'g'), { recursive: true });
  fs.writeFileSync(path.join(dir, '.codex', 'goals', 'g', 'ACTIVE_GOAL_STATE.md'), state);
  const runs = path.join(dir, '.loopx', 'runtime', 'goals', 'g', 'runs');
  fs.mkdirSync(runs, { recursive: true });
  fs.writeFileSync(path.join(runs, 'r.json'), '{}');
  fs.writeFileSync(path.join(runs, 'r.md'), '# run\n');
  fs.writeFileSync(
    path.join(runs, 'index.jsonl'),
    `${JSON.stringify({
      generated_at: '2026-07-01T00:00:00+00:00',
      goal_id: 'g',
      classification: 'validated_progress',
      recommended_action: 'Watch the nightly benchmark.',
      json_path: '.loopx/runtime/goals/g/runs/r.json',
      markdown_path: '.loopx/runtime/goals/g/runs/r.md',
    })}\n`,
  );
  fs.writeFileSync(
    path.join(dir, '.loopx', 'registry.json'),
    JSON.stringify({
      common_runtime_root: '.loopx/runtime',
      goals: [
        {
          id: 'g',
          domain: 'fixtures',
          repo: dir,
          state_file: '.codex/goals/g/ACTIVE_GOAL_STATE.md',
          status: 'active',
          adapter: { kind: 'generic_project_goal_v0', status: 'connected' },
        },
      ],
    }),
  );
  return dir;
}

async function statusOf(todos: { user?: string[]; agent: string[] }) {
  const dir = workspace(todos);
  const attention: StatusQuotaSources['attention'][] = [];
  const payload = await loadStatusAt({
    registryPath: path.join(dir, '.loopx', 'registry.json'),
    homeDir: dir,
    quotaSummary: (_goal, sources) => {
      attention.push(sources.attention);
      return Promise.resolve({ state: 'eligible', allowed_slots: 2, spent_slots: 0 });
    },
  });
  const item = goalItems(payload)[0];
  assert.ok(item);
  assert.deepEqual(payload.contract.errors, [], 'the fixture passes the contract check');
  return { item, attention: attention[0], queue: payload.attention_queue };
}

describe('status: quiet-monitor display (LoopX monitor_signal)', () => {
  it('a goal whose only open agent todos are monitors that may run waits on monitor_signal; the quota follows the route', async () => {
    const { item, attention, queue } = await statusOf({
      agent: [
        MONITOR,
        '- [x] [P4] Refactor the loader',
        '- [-] [P0] Validate the lane\n  <!-- loopx:todo todo_id=todo_lane status=deferred task_class=advancement_task -->',
      ],
    });
    assert.deepEqual(
      [item.status, item.waiting_on, item.severity, item.execution_waiting_on, item.execution_severity],
      ['validated_progress', 'monitor_signal', 'watch', 'codex', 'action'],
    );
    assert.equal(
      item.recommended_action,
      'No immediate agent work; monitor quietly. Context: Watch the nightly benchmark.',
    );
    assert.deepEqual(attention, { waiting_on: 'codex', severity: 'action' });
    assert.deepEqual([queue.watching_monitor, queue.needs_codex], [1, 0]);
  });

  it('any other open work keeps the route: an advancement todo, a todo without task_class, an open user todo', async () => {
    const advancement =
      '- [ ] [P1] Fix the test\n  <!-- loopx:todo todo_id=todo_fix status=open task_class=advancement_task -->';
    for (const todos of [
      { agent: [MONITOR, advancement] },
      { agent: [MONITOR, '- [ ] [P1] Fix the test'] },
      {
        user: [
          '- [ ] [P2] Read the summary\n  <!-- loopx:todo todo_id=todo_read status=open task_class=user_action -->',
        ],
        agent: [MONITOR],
      },
    ]) {
      const { item, attention } = await statusOf(todos);
      assert.deepEqual([item.waiting_on, item.severity, item.execution_waiting_on], ['codex', 'action', undefined]);
      assert.equal(item.recommended_action, 'Watch the nightly benchmark.');
      assert.deepEqual(attention, { waiting_on: 'codex', severity: 'action' });
    }
  });

  it('a monitor that may not run now (blocked, or resuming on a todo not done) is not quiet; once its condition holds it is', async () => {
    const blocked = MONITOR.replace('status=open', 'status=blocked');
    assert.equal((await statusOf({ agent: [blocked] })).item.waiting_on, 'codex');
    const resuming = MONITOR.replace('status=open', 'status=open resume_when=todo_done:todo_first');
    const first = (done: boolean): string =>
      `- [${done ? 'x' : ' '}] [P1] Ship the first cut\n  <!-- loopx:todo todo_id=todo_first status=${done ? 'done' : 'open'} task_class=continuous_monitor expires_at=2099-01-01T00:00:00Z -->`;
    assert.equal((await statusOf({ agent: [resuming, first(false)] })).item.waiting_on, 'codex');
    assert.equal((await statusOf({ agent: [resuming, first(true)] })).item.waiting_on, 'monitor_signal');
  });
});
