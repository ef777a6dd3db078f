import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { QUOTA_SLOT_SPENT } from '../../../src/core/quota/ledger';
import { readGoalRuns } from '../../../src/core/runtime/runIndex';
import { REPO_ROOT } from '../../support/demoWorkspace';
import { removeTempDirs, tempDir, type ChildResult } from './helpers';

after(removeTempDirs);

/**
 * Parallel turns against max_cost_usd, with real processes: 10 `node out/cli.js turn run-once
 * --execute` (the CLI built by the repository's esbuild setup into the test's own folder), each
 * held behind a barrier until all 10 are up, one per agent, agents reporting $0.001 a turn. The
 * budget must hold in every round: spent never passes the limit, and no reservation is left.
 */
const GOAL = 'budget-race';
const AGENTS = Array.from({ length: 10 }, (_, i) => `agent-${i}`);
const COST_AGENT = path.join(REPO_ROOT, 'test', 'unit', 'turn', 'fixtures', 'costAgent.js');
const BARRIER = path.join(REPO_ROOT, 'test', 'unit', 'turn', 'fixtures', 'barrier.js');

let cli = '';

before(async function () {
  this.timeout(120_000);
  const outDir = tempDir('loopx-cli-build-');
  const common = { bundle: true, platform: 'node', target: 'node20', format: 'cjs', logLevel: 'warning' } as const;
  await esbuild.build({
    ...common,
    entryPoints: [path.join(REPO_ROOT, 'src/cli/main.ts')],
    outfile: path.join(outDir, 'cli-main.js'),
  });
  await esbuild.build({
    ...common,
    entryPoints: [path.join(REPO_ROOT, 'src/cli/launcher.ts')],
    outfile: path.join(outDir, 'cli.js'),
  });
  cli = path.join(outDir, 'cli.js');
});

interface Workspace {
  root: string;
  registryPath: string;
  runtimeRoot: string;
}

function workspace(quota: Record<string, unknown>, estimatedCostUsd?: number): Workspace {
  const root = tempDir('loopx-budget-');
  const stateRel = `.codex/goals/${GOAL}/ACTIVE_GOAL_STATE.md`;
  const profiles: Record<string, unknown> = {};
  for (const agent of AGENTS) {
    profiles[agent] = {
      executor: {
        preset: 'command',
        command: [process.execPath, COST_AGENT, '0.001'],
        ...(estimatedCostUsd !== undefined ? { estimated_cost_usd: estimatedCostUsd } : {}),
      },
    };
  }
  const registry = {
    schema_version: '0.1',
    updated_at: '2026-11-28T09:00:00Z',
    common_runtime_root: '.loopx/runtime',
    goals: [
      {
        id: GOAL,
        display_name: 'Budget race',
        domain: 'test',
        status: 'active',
        role: 'controller',
        repo: root,
        state_file: stateRel,
        adapter: { kind: 'generic_project_goal_v0', status: 'connected' },
        quota: { compute: 1, window_hours: 24, slot_minutes: 1, ...quota },
        spawn_policy: { mode: 'multi_subagent', allowed: true, max_children: AGENTS.length },
        coordination: { agent_model: 'peer_v1', registered_agents: AGENTS, agent_profiles: profiles },
        validation_command: [process.execPath, '-e', ''],
      },
    ],
  };
  const registryPath = path.join(root, '.loopx', 'registry.json');
  fs.mkdirSync(path.dirname(registryPath), { recursive: true });
  fs.writeFileSync(registryPath, JSON.stringify(registry, null, 2));
  const todos = AGENTS.map(
    (agent, i) =>
      `- [ ] [P1] Work item ${i}.\n  <!-- loopx:todo todo_id=todo_${i} status=open task_class=advancement_task claimed_by=${agent} -->`,
  );
  const state = [
    '---',
    'status: active',
    'objective: "Spend carefully."',
    'owner_mode: solo',
    'updated_at: 2026-11-28T09:00:00+00:00',
    '---',
    '# Budget race',
    '',
    '## Agent Todo',
    ...todos,
    '',
    '## Next Action',
    '- Work.',
    '',
  ].join('\n');
  fs.mkdirSync(path.join(root, path.dirname(stateRel)), { recursive: true });
  fs.writeFileSync(path.join(root, stateRel), state);
  return { root, registryPath, runtimeRoot: path.join(root, '.loopx', 'runtime') };
}

function setMaxCost(w: Workspace, maxCostUsd: number): void {
  const registry = JSON.parse(fs.readFileSync(w.registryPath, 'utf8')) as {
    goals: { quota: Record<string, unknown> }[];
  };
  (registry.goals[0] as { quota: Record<string, unknown> }).quota['max_cost_usd'] = maxCostUsd;
  fs.writeFileSync(w.registryPath, JSON.stringify(registry, null, 2));
}

function spawnCli(args: string[], env: NodeJS.ProcessEnv): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', BARRIER, cli, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** All agents' `turn run-once --execute` at once: each child waits at the barrier until every one is ready. */
async function raceRound(w: Workspace): Promise<ChildResult[]> {
  const barrier = fs.mkdtempSync(path.join(w.root, 'barrier-'));
  const children = AGENTS.map((agent) =>
    spawnCli(
      [
        'turn',
        'run-once',
        '--registry',
        w.registryPath,
        '--goal-id',
        GOAL,
        '--agent-id',
        agent,
        '--execute',
        '--format',
        'json',
      ],
      { LOOPX_TEST_BARRIER_DIR: barrier },
    ),
  );
  // Wait until every child has signalled ready (no timing: the children block until "go" exists).
  await new Promise<void>((resolve) => {
    const poll = (): void => {
      if (fs.readdirSync(barrier).filter((n) => n.startsWith('ready-')).length === AGENTS.length) resolve();
      else setTimeout(poll, 10);
    };
    poll();
  });
  fs.writeFileSync(path.join(barrier, 'go'), '');
  return Promise.all(children);
}

async function spentCost(w: Workspace): Promise<{ cost: number; spends: number }> {
  const rows = (await readGoalRuns(w.runtimeRoot, GOAL, { projectRoot: w.root })).rows.filter(
    (r) => r.classification === QUOTA_SLOT_SPENT,
  );
  const cost = rows.reduce((sum, r) => sum + ((r as { usage?: { cost_usd?: number } }).usage?.cost_usd ?? 0), 0);
  return { cost: Math.round(cost * 1e6) / 1e6, spends: rows.length };
}

function liveReservations(w: Workspace): unknown[] {
  const file = path.join(w.runtimeRoot, 'goals', GOAL, 'quota-reservations.json');
  return fs.existsSync(file)
    ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { reservations: unknown[] }).reservations
    : [];
}

/** Every child ended cleanly: a committed turn, or a refusal that says why (never a crash). */
function assertCleanOutcomes(results: ChildResult[]): { committed: number; refused: number } {
  let committed = 0;
  let refused = 0;
  for (const r of results) {
    assert.equal(r.signal, null, r.stderr);
    assert.doesNotMatch(r.stderr, /\n\s+at /, `no stack trace: ${r.stderr}`);
    const json = JSON.parse(r.stdout) as Record<string, unknown>;
    if (json['status'] === 'committed') {
      assert.equal(r.code, 0, r.stderr);
      committed++;
    } else {
      // Refused at admission (the estimate does not fit), or the plan already saw the budget used up.
      if (json['status'] === 'stopped')
        assert.match(String(json['message']), /not admitted: quota refused: the max_cost_usd budget (has|is used up)/);
      else {
        assert.equal(json['status'], 'not_run', JSON.stringify(json).slice(0, 300));
        // The plan refuses with admission's own arithmetic (issue 34): used up, or the estimate does not fit.
        assert.match(String(json['message']), /max_cost_usd budget (used|has [0-9.]+ left, the turn's estimate is)/);
      }
      refused++;
    }
  }
  return { committed, refused };
}

describe('parallel turns never overspend max_cost_usd (real CLI processes behind a barrier)', function () {
  this.timeout(300_000);

  it('with the estimate in the agent profile: each round spends at most the limit, over several rounds', async () => {
    const w = workspace({ max_cost_usd: 0.0025 }, 0.001);
    let limit = 0.0025;
    for (let round = 1; round <= 3; round++) {
      const outcomes = assertCleanOutcomes(await raceRound(w));
      const { cost, spends } = await spentCost(w);
      assert.ok(cost <= limit + 1e-9, `round ${round}: spent $${cost} of the $${limit} limit`);
      // As many $0.001 turns as fit in the limit run (2, then 5, then 7 in all), not one more.
      const fit = Math.floor(limit / 0.001 + 1e-9);
      assert.equal(spends, fit, `round ${round}: ${fit} turns fit in $${limit}`);
      assert.equal(outcomes.committed, fit - (round === 1 ? 0 : Math.floor((limit - 0.0025) / 0.001 + 1e-9)));
      assert.deepEqual(liveReservations(w), [], 'no reservation is left behind');
      limit += 0.0025;
      setMaxCost(w, limit);
    }
  });

  it('without a profile estimate: the first turn reserves the rest of the budget, later ones the running average', async () => {
    const w = workspace({ max_cost_usd: 0.0025 });
    const first = assertCleanOutcomes(await raceRound(w));
    // With no history the first turn holds the whole $0.0025; only a turn admitted after its spend
    // (average $0.001, $0.0015 left) can join. Never more than the limit allows.
    const afterFirst = await spentCost(w);
    assert.ok(first.committed >= 1 && first.committed <= 2, `${first.committed} turns committed`);
    assert.equal(afterFirst.spends, first.committed);
    assert.ok(afterFirst.cost <= 0.0025 + 1e-9, `spent $${afterFirst.cost} of $0.0025`);
    setMaxCost(w, 0.0055);
    const second = assertCleanOutcomes(await raceRound(w));
    // With the $0.001 average known, exactly as many turns run as fit: 5 in all.
    const { cost, spends } = await spentCost(w);
    assert.equal(spends, 5);
    assert.equal(second.committed, 5 - first.committed);
    assert.ok(cost <= 0.0055 + 1e-9, `spent $${cost} of $0.0055`);
    assert.deepEqual(liveReservations(w), []);
  });
});
