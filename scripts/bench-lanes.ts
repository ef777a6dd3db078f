/**
 * Lanes benchmark (docs/benchmarks.md#lanes): `npx tsx scripts/bench-lanes.ts [turns] [lanes]`.
 *
 * 1. Worktree creation and per-turn commit overhead (`git worktree add`; `git add -A` + commit of a
 *    one-line change) on this repository and on a generated 10,000-file tree.
 * 2. `lanes` demo-agent lanes (default 4) × `turns` rounds (default 100) on one goal, each turn a real
 *    agent process (the lane fixture agent through a command executor) in its own worktree, every
 *    lane's commit merged through its merge gate (`lane merge --execute`); at the end it checks that
 *    every lane turn reached main with its `LoopX-Turn` trailer, no lane saw another's edit (each
 *    lane writes its own file), and reports `git worktree` count and disk use.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../src/core/clock';
import { laneMerge } from '../src/core/ops/lanes';
import { runOperation } from '../src/core/ops/run';
import { quotaGoalFromRegistry } from '../src/core/quota/goal';
import { readRegistrySync } from '../src/core/registry/read';
import { runOnce } from '../src/core/turn/runOnce';
import { materializeDemoWorkspace } from '../test/support/demoWorkspace';

const turns = Number(process.argv[2] ?? 100);
const laneCount = Number(process.argv[3] ?? 4);
const REPO = path.resolve(__dirname, '..');
const AGENT = path.join(REPO, 'test', 'unit', 'lanes', 'fixtures', 'laneAgent.js');
const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'B',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'B',
  GIT_COMMITTER_EMAIL: 'b@b',
};
const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd, encoding: 'utf8', env: GIT_ENV, maxBuffer: 1 << 28 }).trim();
const ms = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function overhead(label: string, repo: string): void {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-lane-bench-wt-'));
  const adds: number[] = [];
  const commits: number[] = [];
  for (let i = 0; i < 3; i++) {
    const wt = path.join(tmp, `wt${i}`);
    let t = process.hrtime.bigint();
    git(repo, 'worktree', 'add', '-q', '-b', `loopx-bench/${process.pid}/${i}`, wt, 'HEAD');
    adds.push(ms(t));
    for (let j = 0; j < 5; j++) {
      fs.appendFileSync(path.join(wt, 'LANE_BENCH.txt'), `${j}\n`);
      t = process.hrtime.bigint();
      git(wt, 'add', '-A');
      git(wt, 'commit', '-q', '--no-verify', '-m', `bench ${j}`, '-m', `LoopX-Turn: bench:${i}:${j}`);
      commits.push(ms(t));
    }
    git(repo, 'worktree', 'remove', '--force', wt);
    git(repo, 'branch', '-D', `loopx-bench/${process.pid}/${i}`);
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  const files = git(repo, 'ls-files').split('\n').length;
  console.log(
    `${label} (${files} tracked files): worktree add median ${median(adds).toFixed(0)} ms; per-turn add+commit median ${median(commits).toFixed(0)} ms`,
  );
}

function tenThousandFileTree(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-lane-bench-10k-'));
  git(dir, 'init', '-q', '-b', 'main');
  for (let d = 0; d < 100; d++) {
    fs.mkdirSync(path.join(dir, `d${d}`));
    for (let f = 0; f < 100; f++) fs.writeFileSync(path.join(dir, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', '10k files');
  return dir;
}

function duKb(target: string): number {
  return Number(execFileSync('du', ['-sk', target], { encoding: 'utf8' }).split('\t')[0]);
}

async function lanesRun(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-lane-bench-run-'));
  const ws = materializeDemoWorkspace(path.join(root, 'workspace'));
  const agents = Array.from({ length: laneCount }, (_, i) => `lane${i + 1}`);
  const registryPath = path.join(ws, '.loopx', 'registry.json');
  const registry = JSON.parse(fs.readFileSync(registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
  const goal = registry.goals[0] as Record<string, unknown>;
  goal['coordination'] = {
    agent_model: 'peer_v1',
    registered_agents: agents,
    agent_profiles: Object.fromEntries(agents.map((a) => [a, { isolation: 'worktree' }])),
  };
  goal['spawn_policy'] = { mode: 'multi_subagent', allowed: true, max_children: laneCount };
  goal['quota'] = { compute: 1, window_hours: 24, slot_minutes: 1, max_slots: 100000 };
  fs.writeFileSync(registryPath, JSON.stringify(registry, null, 2));
  const statePath = path.join(ws, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md');
  const state = fs.readFileSync(statePath, 'utf8').split('\n');
  const userStart = state.findIndex((l) => l.startsWith('## User Todo'));
  const agentStart = state.findIndex((l) => l.startsWith('## Agent Todo'));
  // One todo per lane, claimed by it: the lanes never compete for a todo.
  const laneTodos = agents.flatMap((a) => [
    `- [ ] [P1] Lane work for ${a}.`,
    `  <!-- loopx:todo todo_id=todo_${a} status=open task_class=advancement_task claimed_by=${a} -->`,
  ]);
  fs.writeFileSync(
    statePath,
    [
      ...state.slice(0, userStart + 1),
      '',
      state[agentStart] ?? '## Agent Todo',
      ...laneTodos,
      ...state.slice(agentStart + 1),
    ].join('\n'),
  );
  git(ws, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(ws, '.gitignore'), '.loopx/runtime/\n');
  git(ws, 'add', '-A');
  git(ws, 'commit', '-q', '-m', 'demo');
  const env = {
    cwd: ws,
    env: { PATH: process.env['PATH'] ?? '', HOME: os.homedir() },
    clock: fixedClock('2026-11-28T10:00:00Z'),
    homeDir: os.homedir(),
    registryPath,
    actingAs: 'owner' as const,
  };
  const turnMs: number[] = [];
  const mergeMs: number[] = [];
  let committed = 0;
  const started = process.hrtime.bigint();
  for (let round = 0; round < turns; round++) {
    // Each clock instant is a new turn identity; the lanes of one round run in parallel.
    const clock = fixedClock(new Date(Date.parse('2026-11-28T10:00:00Z') + round * 60_000).toISOString());
    const t = process.hrtime.bigint();
    const results = await Promise.all(
      agents.map((agentId) =>
        runOnce({
          goal: quotaGoalFromRegistry(readRegistrySync(registryPath), { registryPath, goalId: 'tidy-notes' })!,
          agentId,
          clock,
          env: { PATH: process.env['PATH'] ?? '' },
          execute: true,
          hostAdapterCommand: [process.execPath, AGENT, `lanes/${agentId}.txt`, `round ${round}`],
        }),
      ),
    );
    turnMs.push(ms(t) / agents.length);
    committed += results.filter((r) => r.status === 'committed').length;
    for (const r of results)
      if (r.status !== 'committed') console.log(`round ${round}: ${r.agent_id} ${r.status} ${r.message}`);
    for (const agentId of results.filter((r) => r.status === 'committed').map((r) => r.agent_id)) {
      const m = process.hrtime.bigint();
      const merged = await runOperation(laneMerge, { goalId: 'tidy-notes', agentId, execute: true }, { ...env, clock });
      mergeMs.push(ms(m));
      if (merged.status !== 'merged')
        console.log(`round ${round}: merge ${agentId} ${merged.status} ${merged.message}`);
    }
  }
  const total = ms(started) / 1000;
  const trailers = git(ws, 'log', '--format=%(trailers:key=LoopX-Turn,valueonly)', 'main')
    .split('\n')
    .filter((l) => l.trim() !== '').length;
  const mixed = agents.filter((a) => {
    const files = git(ws, 'log', '--format=', '--name-only', `--author=${a} (LoopX)`, 'main')
      .split('\n')
      .filter(Boolean);
    return files.some((f) => f !== `lanes/${a}.txt`);
  });
  const worktrees = git(ws, 'worktree', 'list').split('\n').length;
  const lanesDir = path.join(ws, '.loopx', 'runtime', 'lanes');
  console.log(
    `${laneCount} lanes × ${turns} rounds: ${committed} turns committed, ${trailers} commits on main with a LoopX-Turn trailer, lanes with another lane's file in their commits: ${mixed.length}`,
  );
  console.log(
    `wall ${total.toFixed(0)} s; per turn (parallel rounds / lanes) median ${median(turnMs).toFixed(0)} ms; per merge median ${median(mergeMs).toFixed(0)} ms`,
  );
  console.log(
    `git worktree list: ${worktrees} (main + ${worktrees - 1} lanes); lanes folder ${duKb(lanesDir)} KiB; .git ${duKb(path.join(ws, '.git'))} KiB; workspace ${duKb(ws)} KiB`,
  );
  if (process.env['LOOPX_BENCH_KEEP'] === undefined) fs.rmSync(root, { recursive: true, force: true });
  if (committed !== turns * laneCount || trailers !== turns * laneCount || mixed.length > 0) process.exitCode = 1;
}

async function main(): Promise<void> {
  console.log(`uptime: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
  if (process.env['LOOPX_BENCH_SKIP_OVERHEAD'] === undefined) {
    overhead('this repository', REPO);
    const tree = tenThousandFileTree();
    overhead('10,000-file tree', tree);
    fs.rmSync(tree, { recursive: true, force: true });
  }
  await lanesRun();
  console.log(`uptime: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
}

void main();
