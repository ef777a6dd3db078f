import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateWorkspace } from '../../../bench/workspace/generate';
import { fixedClock } from '../../../src/core/clock';
import { dashboardSchemaProblems } from '../../../src/core/status/dashboardSchema';
import { startStatusServer } from '../../../src/core/server/statusServer';
import { auth, request, seededWorkspace, SERVER_TOKEN } from './helpers';

/**
 * What the original LoopX web dashboard taught us: it refused our `/status.json` although every
 * required field was there, because of types and nullability (`goal_channel_projection.quota` with a
 * nested `budgets` and a `config_warnings` list where it wants scalars; todos' `claimed_by: null`
 * where it wants a string or no key). `DashboardStatusPayloadSchema` mirrors its schema for every
 * field it reads; these fixtures exercise nulls, budgets set and unset, claimed and unclaimed todos,
 * warnings and a goal without a state file.
 */

const NOW = '2026-11-28T09:30:00Z';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function servedStatus(registryPath: string, now: string): Promise<Json> {
  const server = await startStatusServer({
    registryPath,
    homeDir: os.homedir(),
    clock: fixedClock(now),
    token: SERVER_TOKEN,
    port: 0,
    watch: false,
  });
  try {
    const answer = await request(server.port, '/status.json', { headers: auth() });
    assert.equal(answer.status, 200, answer.text.slice(0, 300));
    return answer.json() as Json;
  } finally {
    await server.close();
  }
}

/** The demo with budgets (one clamped value, so a config warning), a second claimed todo and a goal without a state file (its id sorts after the demo's, so the demo's item stays first). */
function richWorkspace(): string {
  const { registryPath, statePath } = seededWorkspace();
  const registry = JSON.parse(fs.readFileSync(registryPath, 'utf8')) as { goals: Json[] };
  const goal = registry.goals[0] as Json;
  goal['quota'] = { compute: 2, window_hours: 24, slot_minutes: 30, max_cost_usd: 5, max_tokens: 200000 };
  registry.goals.push({
    id: 'zz-bare-goal',
    domain: 'docs',
    status: 'active',
    repo: goal['repo'],
    state_file: '.codex/goals/zz-bare-goal/ACTIVE_GOAL_STATE.md',
    adapter: { kind: 'generic_project_goal_v0' },
  });
  fs.writeFileSync(registryPath, JSON.stringify(registry, null, 2));
  const state = fs
    .readFileSync(statePath, 'utf8')
    .replace('todo_id=todo_index status=open', 'todo_id=todo_index status=open claimed_by=demo');
  fs.writeFileSync(statePath, state);
  return registryPath;
}

function items(payload: Json): Json[] {
  return payload['attention_queue'].items as Json[];
}

describe('the /status.json types and nullability the LoopX web dashboard checks', function () {
  this.timeout(60_000);

  it('the demo workspace renders: no field refused', async () => {
    const payload = await servedStatus(seededWorkspace().registryPath, NOW);
    assert.deepEqual(dashboardSchemaProblems(payload), []);
  });

  it('budgets set, a config warning, claimed and unclaimed todos, a goal without a state file: no field refused', async () => {
    const payload = await servedStatus(richWorkspace(), NOW);
    assert.deepEqual(dashboardSchemaProblems(payload), []);
    // The fixture reaches what the dashboard refused before.
    const main = items(payload).find((item) => item['goal_id'] === 'tidy-notes') as Json;
    const bare = items(payload).find((item) => item['goal_id'] === 'zz-bare-goal') as Json;
    assert.ok(bare, 'the goal without a state file is an item');
    assert.equal(main['quota'].budgets.max_cost_usd.limit ?? main['quota'].budgets.max_cost_usd, 5);
    assert.ok(main['quota'].config_warnings.length > 0, 'compute 2 is clamped with a warning');
    const channel = main['goal_channel_projection'];
    for (const [key, value] of Object.entries(channel['quota'] as Json))
      assert.ok(value === null || typeof value !== 'object', `goal_channel_projection.quota.${key} is a scalar`);
    assert.equal(channel['quota'].state, main['quota'].state);
    const claims = (channel['agent_todos'] as Json[]).map((todo) => todo['claimed_by']);
    assert.ok(claims.includes('demo') && claims.includes('codex-main'), JSON.stringify(claims));
    assert.ok(claims.includes(undefined), 'an unclaimed todo has no claimed_by key');
    assert.ok(!(channel['agent_todos'] as Json[]).some((todo) => 'claimed_by' in todo && todo['claimed_by'] === null));
    assert.deepEqual((channel['active_leases'] as Json[]).map((lease) => lease['owner_agent']).sort(), [
      'codex-main',
      'demo',
    ]);
  });

  for (const seed of [3, 11]) {
    it(`a generated 10-goal workspace (seed ${seed}) renders`, async () => {
      const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-dash-')), 'ws');
      const workspace = generateWorkspace({ goals: 10, todos: 20, runs: 50, seed, out });
      const payload = await servedStatus(workspace.registryPath, workspace.now);
      // The generated todos break LoopX's contract rules here and there: the contract item is one more item.
      const goals = items(payload).filter((item) => item['source'] !== 'contract');
      assert.equal(goals.length, 10);
      assert.equal(items(payload).length, payload['ok'] === true ? 10 : 11);
      assert.deepEqual(dashboardSchemaProblems(payload), []);
    });
  }

  it('refuses what the dashboard refused, naming the field', async () => {
    const payload = await servedStatus(richWorkspace(), NOW);
    const broken = (edit: (copy: Json) => void): string[] => {
      const copy = JSON.parse(JSON.stringify(payload)) as Json;
      edit(copy);
      return dashboardSchemaProblems(copy);
    };
    const first = (p: Json): Json => p['attention_queue'].items[0];
    const cases: [string, (p: Json) => void][] = [
      ['goal_channel_projection.quota.budgets', (p) => (first(p).goal_channel_projection.quota.budgets = { a: 1 })],
      [
        'goal_channel_projection.quota.config_warnings',
        (p) => (first(p).goal_channel_projection.quota.config_warnings = []),
      ],
      [
        'goal_channel_projection.agent_todos.0.claimed_by',
        (p) => (first(p).goal_channel_projection.agent_todos[0].claimed_by = null),
      ],
      [
        'goal_channel_projection.user_todos.0.priority',
        (p) => (first(p).goal_channel_projection.user_todos[0].priority = null),
      ],
      [
        'goal_channel_projection.recent_events.0.summary',
        (p) => (first(p).goal_channel_projection.recent_events[0].summary = null),
      ],
      ['agent_todos.items.0.index', (p) => (first(p).agent_todos.items[0].index = null)],
      ['quota.must_advance', (p) => (first(p).quota.must_advance = null)],
      ['quota.spent_slots', (p) => (first(p).quota.spent_slots = null)],
      [
        'stale_latest_run_warning.requires_refresh_state',
        (p) => (first(p).stale_latest_run_warning = { requires_refresh_state: null }),
      ],
      ['project_asset.owner', (p) => (first(p).project_asset.owner = null)],
      [
        'run_history.goals.0.latest_runs.0.generated_at',
        (p) => (p['run_history'].goals[0].latest_runs[0].generated_at = null),
      ],
      ['contract.summary.checks', (p) => delete p['contract'].summary.checks],
    ];
    for (const [field, edit] of cases) {
      const problems = broken(edit);
      assert.ok(
        problems.some(
          (problem) => problem.startsWith(`attention_queue.items.0.${field}:`) || problem.startsWith(`${field}:`),
        ),
        `${field}: ${JSON.stringify(problems)}`,
      );
    }
    // Nullable fields stay accepted as null, as the dashboard accepts them.
    assert.deepEqual(
      broken((p) => {
        first(p).quota.allowed_slots = null;
        first(p).agent_todos.items[0].claimed_by = null;
        first(p).goal_channel_projection.generated_at = null;
      }),
      [],
    );
  });
});
