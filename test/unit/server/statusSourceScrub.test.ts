import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { scrubValue } from '../../../src/core/privacy/scrub';
import { registryProjectRoot } from '../../../src/core/registry/locate';
import { StatusSource } from '../../../src/core/server/statusSource';
import { SECRET_GITHUB_TOKEN, seededWorkspace } from './helpers';

/**
 * The status server scrubs again only the goal entries that changed since its last body; the body
 * must stay byte-identical to scrubbing the whole payload at once.
 */

function twoGoals(): { registryPath: string; stateOf: (goalId: string) => string; dir: string } {
  const seeded = seededWorkspace();
  const registry = JSON.parse(fs.readFileSync(seeded.registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
  const first = registry.goals[0] as Record<string, unknown>;
  const secondState = path.join(path.dirname(path.dirname(seeded.statePath)), 'other-notes', 'ACTIVE_GOAL_STATE.md');
  fs.mkdirSync(path.dirname(secondState), { recursive: true });
  fs.copyFileSync(seeded.statePath, secondState);
  registry.goals.push({
    ...first,
    id: 'other-notes',
    display_name: 'Other notes',
    state_file: path.relative(String(first['repo']), secondState),
  });
  fs.writeFileSync(seeded.registryPath, JSON.stringify(registry, null, 2));
  return {
    dir: seeded.dir,
    registryPath: seeded.registryPath,
    stateOf: (goalId) => (goalId === 'tidy-notes' ? seeded.statePath : secondState),
  };
}

/** What the body must be: the model's raw payload scrubbed in one piece. */
async function expectedBody(source: StatusSource, dir: string, registryPath: string): Promise<string> {
  const live = await source.model.current();
  assert.ok(live.ok);
  const context = {
    projectRoots: [...new Set([registryProjectRoot(registryPath), dir])],
    homeDir: os.homedir(),
    runtimeRoot: live.payload.runtime_root,
  };
  return JSON.stringify(scrubValue({ ...live.payload, local_dashboard_api: { routes: ['/status.json'] } }, context));
}

describe('status source: incremental scrubbing', () => {
  it('after a one-goal change the body equals the whole payload scrubbed at once, and leaks nothing', async () => {
    const { dir, registryPath, stateOf } = twoGoals();
    const source = new StatusSource({
      registryPath,
      homeDir: os.homedir(),
      clock: fixedClock('2026-11-28T12:00:00Z'),
      watch: false,
      dashboardApi: { routes: ['/status.json'] },
    });
    try {
      const first = await source.current();
      assert.ok(first.ok);
      assert.equal(first.bodies.status.json.toString('utf8'), await expectedBody(source, dir, registryPath));
      const state = stateOf('other-notes');
      fs.writeFileSync(
        state,
        fs
          .readFileSync(state, 'utf8')
          .replace('## Next Action\n', `## Next Action\n- Mail ${SECRET_GITHUB_TOKEN} to ${dir}/x\n`),
      );
      source.invalidate();
      const second = await source.current();
      assert.ok(second.ok);
      assert.notEqual(second.version, first.version);
      const body = second.bodies.status.json.toString('utf8');
      assert.equal(body, await expectedBody(source, dir, registryPath));
      assert.ok(!body.includes(SECRET_GITHUB_TOKEN));
      assert.ok(!body.includes(dir));
    } finally {
      source.close();
    }
  });
});

describe('status source: the top-level reports at the time of the answer', () => {
  it('serves an unchanged snapshot with its reports recomputed once they are a TTL old', async () => {
    const { registryPath } = twoGoals();
    let now = Date.parse('2026-11-28T12:00:00Z');
    const source = new StatusSource({
      registryPath,
      homeDir: os.homedir(),
      clock: { now: () => new Date(now) },
      watch: false,
      ttlMs: 5_000,
    });
    const generatedAt = (snapshot: Awaited<ReturnType<StatusSource['current']>>): unknown => {
      assert.ok(snapshot.ok);
      const body = JSON.parse(snapshot.bodies.status.json.toString('utf8')) as Record<
        string,
        { generated_at?: string }
      >;
      return [body['usage_summary']?.generated_at, body['event_ledger_summary']?.generated_at];
    };
    try {
      const first = await source.current();
      assert.deepEqual(generatedAt(first), ['2026-11-28T12:00:00+00:00', '2026-11-28T12:00:00+00:00']);
      now += 2_000;
      assert.equal(await source.current(), first, 'within the TTL: the same snapshot');
      now += 8_000;
      const later = await source.current();
      assert.notEqual(later, first);
      assert.deepEqual(generatedAt(later), ['2026-11-28T12:00:10+00:00', '2026-11-28T12:00:10+00:00']);
      assert.ok(later.ok && first.ok);
      assert.deepEqual(
        later.payload.attention_queue.items.map((item) => item.goal_id),
        first.payload.attention_queue.items.map((item) => item.goal_id),
      );
    } finally {
      source.close();
    }
  });
});
