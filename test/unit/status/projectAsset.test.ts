import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { goalItems } from '../../../src/core/status/statusPayload';
import { loadStatusAt } from '../../support/status';
import { tempDir } from '../../support/tempDir';

/**
 * The `project_asset` block as the status payload carries it (`loopx status` and `/status.json` build the same payload):
 * wired from the item with its quota, the registry entry and the raw latest status run. The rules themselves are
 * pinned in projection/projectAsset.test.ts; the mixed tier compares whole blocks with the original's.
 */

interface Shape {
  sections: string[];
  run?: Record<string, unknown>;
  registry?: Record<string, unknown>;
}

function workspace(shape: Shape): string {
  const dir = tempDir('loopx-project-asset-');
  const state = ['---', 'status: active', 'updated_at: 2026-07-01T00:00:00+00:00', '---', '', ...shape.sections, ''];
  fs.mkdirSync(path.join(dir, '.codex', 'goals', 'g'), { recursive: true });
  fs.writeFileSync(path.join(dir, '.codex', 'goals', 'g', 'ACTIVE_GOAL_STATE.md'), state.join('\n'));
  const runs = path.join(dir, '.loopx', 'runtime', 'goals', 'g', 'runs');
  fs.mkdirSync(runs, { recursive: true });
  if (shape.run !== undefined) {
    fs.writeFileSync(path.join(runs, 'r.json'), '{}');
    fs.writeFileSync(path.join(runs, 'r.md'), '# run\n');
    const row = {
      generated_at: '2026-07-01T00:00:00+00:00',
      goal_id: 'g',
      json_path: '.loopx/runtime/goals/g/runs/r.json',
      markdown_path: '.loopx/runtime/goals/g/runs/r.md',
      ...shape.run,
    };
    fs.writeFileSync(path.join(runs, 'index.jsonl'), `${JSON.stringify(row)}\n`);
  }
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
          ...shape.registry,
        },
      ],
    }),
  );
  return dir;
}

async function itemOf(shape: Shape) {
  const dir = workspace(shape);
  const payload = await loadStatusAt({
    registryPath: path.join(dir, '.loopx', 'registry.json'),
    homeDir: dir,
    quotaSummary: () => Promise.resolve({ state: 'eligible', compute: 1, allowed_slots: 2, spent_slots: 0 }),
  });
  const item = goalItems(payload)[0];
  assert.ok(item);
  return item;
}

const AGENT = [
  '## Agent Todo',
  '',
  '- [ ] [P1] Build the index\n  <!-- loopx:todo todo_id=todo_build status=open task_class=advancement_task -->',
  '- [-] Write the follow-up\n  <!-- loopx:todo todo_id=todo_follow status=deferred resume_when=todo_done:todo_build -->',
];

describe('status payload: the project_asset block of each item', () => {
  it('a codex item: its route, the registry profile and spawn policy, the latest validation, the overviews', async () => {
    const item = await itemOf({
      sections: ['## User Todo', '', ...AGENT],
      run: { classification: 'validated_progress', health_check: 'all checks pass', recommended_action: 'Next' },
      registry: { execution_profile: { minimum_scale: 'single_surface' }, spawn_policy: { allowed: false } },
    });
    const asset = item.project_asset;
    assert.deepEqual(
      [asset.owner, asset.gate, asset.support_mode, asset.next_action],
      ['codex', 'none', 'selective_assist', item.recommended_action],
    );
    assert.equal(asset.execution_profile['minimum_scale'], 'single_surface');
    assert.deepEqual(asset.orchestration, { mode: 'default', spawn_allowed: false, max_children: 0 });
    assert.deepEqual(asset.latest_validation, {
      generated_at: '2026-07-01T00:00:00+00:00',
      classification: 'validated_progress',
      summary: 'all checks pass',
    });
    assert.deepEqual([asset.agent_todos?.open, asset.agent_todos?.next], [1, '[P1] Build the index']);
    assert.deepEqual(
      [asset.quota?.state, asset.quota?.allowed_slots],
      ['eligible', 2],
      'the quota is the one attached to the item',
    );
    // The deferred todo carries its resume condition, in the item's lists and in the overview.
    const deferred = item.agent_todos?.deferred_items[0];
    assert.deepEqual(
      [deferred?.resume_when, deferred?.resume_ready, deferred?.resume_condition?.['target_status']],
      ['todo_done:todo_build', false, 'open'],
    );
    assert.equal(asset.agent_todos?.deferred_items?.[0]?.['resume_when'], 'todo_done:todo_build');
    assert.equal(item.todo_projection_gap, undefined);
  });

  it("a latest run's controller readiness names the gate; a state file without a User Todo section is a gap", async () => {
    const item = await itemOf({
      sections: AGENT,
      run: {
        classification: 'needs_operator_review',
        controller_readiness: { classification: 'observer', missing_gates: ['write_gate'] },
      },
    });
    assert.deepEqual([item.controller_stage, item.missing_gates], ['observer', ['write_gate']]);
    assert.deepEqual([item.project_asset.gate, item.project_asset.support_mode], ['write_gate', 'decision_support']);
    assert.deepEqual(item.project_asset.todo_projection_gap?.missing_roles, ['user']);
    assert.deepEqual(item.todo_projection_gap, item.project_asset.todo_projection_gap);
    assert.equal(item.project_asset.user_todos, undefined);
  });
});
