import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { QUOTA_SLOT_SPENT } from '../../../src/core/quota/ledger';
import { readGoalRuns } from '../../../src/core/runtime/runIndex';
import { REPO_ROOT } from '../../support/demoWorkspace';
import { removeTempDirs, tempDir } from './helpers';

after(removeTempDirs);

/**
 * Issue 34, defect 2: budgets hold in the heartbeat flow. 10 agents, each a real process running
 * the heartbeat prompt's steps (should-run → refresh-state → spend-slot with the cost it reports),
 * start together behind a barrier, 3 rounds, against max_cost_usd $0.0025 at $0.001 a turn. Before
 * the fix all 30 were told to run (real cost $0.030) and the ledger recorded $0.002. Now: never over
 * the limit, every agent told to run has its spend settled, and the recorded cost is the reported cost.
 */
const GOAL = 'heartbeat-budget';
const AGENTS = Array.from({ length: 10 }, (_, i) => `agent-${i}`);
const HEARTBEAT_AGENT = path.join(REPO_ROOT, 'test', 'unit', 'turn', 'fixtures', 'heartbeatAgent.js');
const BARRIER = path.join(REPO_ROOT, 'test', 'unit', 'turn', 'fixtures', 'barrier.js');
const LIMIT = 0.0025;
const COST = 0.001;

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

function workspace(estimatedCostUsd?: number): Workspace {
  const root = tempDir('loopx-heartbeat-budget-');
  const stateRel = `.codex/goals/${GOAL}/ACTIVE_GOAL_STATE.md`;
  const profiles: Record<string, unknown> = {};
  for (const agent of AGENTS)
    profiles[agent] =
      estimatedCostUsd === undefined
        ? {}
        : { executor: { preset: 'command', command: ['true'], estimated_cost_usd: estimatedCostUsd } };
  const registry = {
    schema_version: '0.1',
    common_runtime_root: '.loopx/runtime',
    goals: [
      {
        id: GOAL,
        status: 'active',
        repo: root,
        state_file: stateRel,
        adapter: { kind: 'generic_project_goal_v0', status: 'connected' },
        quota: { compute: 1, window_hours: 24, slot_minutes: 1, max_cost_usd: LIMIT },
        coordination: { agent_model: 'peer_v1', registered_agents: AGENTS, agent_profiles: profiles },
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
  const state = ['---', 'status: active', '---', '# Heartbeat budget', '', '## Agent Todo', ...todos, ''].join('\n');
  fs.mkdirSync(path.join(root, path.dirname(stateRel)), { recursive: true });
  fs.writeFileSync(path.join(root, stateRel), state);
  return { root, registryPath, runtimeRoot: path.join(root, '.loopx', 'runtime') };
}

interface AgentTurn {
  told_to_run: boolean;
  refresh_ok?: boolean;
  reported_cost?: number;
  spend_ok?: boolean;
  admission?: string | null;
  reason?: string;
}

function heartbeat(w: Workspace, agent: string, turn: string, barrier: string): Promise<AgentTurn> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--require', BARRIER, HEARTBEAT_AGENT, cli, w.registryPath, GOAL, agent, turn, String(COST)],
      { env: { ...process.env, LOOPX_TEST_BARRIER_DIR: barrier, LOOPX_NOW: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${agent} exited ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as AgentTurn);
    });
  });
}

async function round(w: Workspace, n: number): Promise<AgentTurn[]> {
  const barrier = fs.mkdtempSync(path.join(w.root, 'barrier-'));
  const turns = AGENTS.map((agent) => heartbeat(w, agent, `HB-${n}-${agent}`, barrier));
  await new Promise<void>((resolve) => {
    const poll = (): void => {
      if (fs.readdirSync(barrier).filter((f) => f.startsWith('ready-')).length === AGENTS.length) resolve();
      else setTimeout(poll, 10);
    };
    poll();
  });
  fs.writeFileSync(path.join(barrier, 'go'), '');
  return Promise.all(turns);
}

async function recordedCost(w: Workspace): Promise<{ cost: number; spends: number }> {
  const rows = (await readGoalRuns(w.runtimeRoot, GOAL, { projectRoot: w.root })).rows.filter(
    (r) => r.classification === QUOTA_SLOT_SPENT,
  );
  const cost = rows.reduce((sum, r) => sum + ((r as { usage?: { cost_usd?: number } }).usage?.cost_usd ?? 0), 0);
  return { cost: Math.round(cost * 1e9) / 1e9, spends: rows.length };
}

function liveReservations(w: Workspace): unknown[] {
  const file = path.join(w.runtimeRoot, 'goals', GOAL, 'quota-reservations.json');
  return fs.existsSync(file)
    ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { reservations: unknown[] }).reservations
    : [];
}

describe('heartbeat agents never overspend max_cost_usd (10 processes × 3 rounds behind a barrier)', function () {
  this.timeout(300_000);

  for (const [label, estimate] of [
    ['with the estimate in the agent profile', COST],
    ['without a profile estimate (the first turn holds the rest of the budget)', undefined],
  ] as const) {
    it(label, async () => {
      const w = workspace(estimate);
      let reported = 0;
      let told = 0;
      for (let n = 1; n <= 3; n++) {
        const turns = await round(w, n);
        for (const t of turns) {
          if (!t.told_to_run) continue;
          told++;
          assert.equal(t.refresh_ok, true, JSON.stringify(t));
          // Told to run means admitted: the spend settles its reservation, never refused, never over the limit.
          assert.equal(t.spend_ok, true, JSON.stringify(t));
          assert.equal(t.admission, 'reservation', JSON.stringify(t));
          reported += t.reported_cost ?? 0;
        }
        const { cost } = await recordedCost(w);
        assert.ok(cost <= LIMIT + 1e-9, `round ${n}: recorded $${cost} of the $${LIMIT} limit`);
        assert.equal(cost, Math.round(reported * 1e9) / 1e9, `round ${n}: recorded cost == reported cost`);
        assert.deepEqual(liveReservations(w), [], 'no reservation is left behind');
      }
      const { spends } = await recordedCost(w);
      assert.equal(spends, told);
      if (estimate !== undefined) assert.equal(told, Math.floor(LIMIT / COST + 1e-9), 'as many turns as fit, no more');
      else assert.ok(told >= 1 && told <= Math.floor(LIMIT / COST + 1e-9), `${told} turns`);
    });
  }
});
