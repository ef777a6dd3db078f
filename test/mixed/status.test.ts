import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { GOAL_STATE, mixedWorkspace, run, stopLeftovers, writeGoal, type MixedWorkspace } from './helpers';

/**
 * `status` items read the same by both programs (issue 30): on one workspace the original's `status` and ours give
 * the same attention fields and quota for each goal: an operator gate (`quota.state: operator_gate`, the gate as the
 * recommended action, from the active state) and a goal whose agent todo is next. `/status.json` serves our `status`
 * items field by field (test/unit/server/statusServer.test.ts, "one status model").
 */

const FIELDS = ['goal_id', 'status', 'waiting_on', 'severity', 'source', 'recommended_action'] as const;

function items(w: MixedWorkspace, program: 'ours' | 'original'): Record<string, Record<string, unknown>> {
  const result = run(program, w, ['status']);
  const queue = result.json['attention_queue'] as { items?: Record<string, unknown>[] } | undefined;
  assert.ok(queue?.items !== undefined, `${program} status: ${result.stdout}\n${result.stderr}`);
  return Object.fromEntries(queue.items.map((item) => [String(item['goal_id']), item]));
}

function quotaFields(item: Record<string, unknown> | undefined): unknown[] {
  const quota = (item?.['quota'] ?? {}) as Record<string, unknown>;
  return [quota['state'], Number(quota['allowed_slots']), Number(quota['spent_slots'])];
}

describe('mixed team: status items read the same by both programs', () => {
  it('an operator gate and an agent todo: attention fields and quota equal field by field', () => {
    const w = mixedWorkspace('status');
    try {
      writeGoal(w, 'gated', { compute: 1, window_hours: 24 }, ['codex-a']);
      // A second goal in the same registry, with only an agent todo.
      const registry = JSON.parse(fs.readFileSync(w.registry, 'utf8')) as { goals: Record<string, unknown>[] };
      const first = registry.goals[0] as Record<string, unknown>;
      const stateRel = '.codex/goals/working/ACTIVE_GOAL_STATE.md';
      fs.mkdirSync(`${w.ws}/.codex/goals/working`, { recursive: true });
      fs.writeFileSync(`${w.ws}/${stateRel}`, GOAL_STATE);
      registry.goals.push({ ...first, id: 'working', state_file: stateRel });
      fs.writeFileSync(w.registry, `${JSON.stringify(registry, null, 2)}\n`);
      const gate = run('ours', w, [
        'todo',
        'add',
        '--goal-id',
        'gated',
        '--role',
        'user',
        '--task-class',
        'user_gate',
        '--text',
        'Approve the release',
      ]);
      assert.equal(gate.code, 0, gate.stdout);
      for (const goal of ['gated', 'working'])
        assert.equal(run('ours', w, ['refresh-state', '--goal-id', goal]).code, 0, `ours refresh-state ${goal}`);

      const theirs = items(w, 'original');
      const ours = items(w, 'ours');
      for (const goal of ['gated', 'working']) {
        for (const field of FIELDS)
          assert.deepEqual(ours[goal]?.[field], theirs[goal]?.[field], `${goal}.${field} (ours vs the original)`);
        assert.deepEqual(quotaFields(ours[goal]), quotaFields(theirs[goal]), `${goal}.quota`);
      }
      assert.equal(quotaFields(ours['gated'])[0], 'operator_gate');
      assert.deepEqual(
        [ours['gated']?.['source'], ours['gated']?.['recommended_action']],
        ['active_state', 'Approve the release'],
      );
    } finally {
      stopLeftovers(w);
      fs.rmSync(w.dir, { recursive: true, force: true });
    }
  });
});
