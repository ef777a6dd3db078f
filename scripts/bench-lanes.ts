/**
 * Lanes benchmark (docs/benchmarks.md#lanes-issue-33): `npx tsx scripts/bench-lanes.ts [rounds=25] [lanes=4]`.
 *
 * 1. Worktree creation and per-turn commit overhead (`git worktree add`; `git add -A` + commit of a
 *    one-line change) on this repository and on a generated 10,000-file tree.
 * 2. Issue 33's "done when": `lanes` lanes (default 4) × `rounds` rounds (default 25: 100 turns) on one
 *    goal, run and checked by test/unit/lanes/manyLanes.ts (the unit test runs the same at 2 rounds):
 *    each turn a `loopx turn run-once` process (the bundled CLI) whose agent, the lane fixture agent,
 *    is the agent's configured command executor; each lane's commit merged through its merge gate
 *    (gate open, `lane merge` preview, `lane merge --execute`); then main's history must hold every
 *    turn's commit once with its `LoopX-Turn` trailer, no commit may touch another lane's file, no gate
 *    may be left open. Reports the times, `git worktree` count and disk use; exit 1 on any violation.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { manyLanesRoot, runManyLanes } from '../test/unit/lanes/manyLanes';
import { buildCliBundle } from '../test/unit/support/cliProcess';

const rounds = Number(process.argv[2] ?? 25);
const laneCount = Number(process.argv[3] ?? 4);
const REPO = path.resolve(__dirname, '..');
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
  const cli = await buildCliBundle();
  const root = manyLanesRoot();
  const report = await runManyLanes({
    cli,
    rounds,
    lanes: laneCount,
    root,
    onRound: (round, turnMs, mergeMs) => {
      if ((round + 1) % 5 === 0)
        console.log(`round ${round + 1}: turns ${turnMs.toFixed(0)} ms, merges ${mergeMs.toFixed(0)} ms`);
    },
  });
  const ws = report.workspace;
  const lanesDir = path.join(ws, '.loopx', 'runtime', 'lanes');
  console.log(
    `${laneCount} lanes × ${rounds} rounds: ${report.turns.length} turns committed (each a \`loopx turn run-once\` process), ${report.trailersOnMain.length} commits on main with a LoopX-Turn trailer, ${report.merges} merges each through its gate (previewed, approved by \`lane merge --execute\`)`,
  );
  console.log(`violations: ${report.violations.length === 0 ? 'none' : report.violations.join('\n  ')}`);
  console.log(
    `wall ${(report.wallMs / 1000).toFixed(0)} s; per round (${laneCount} turns at once) median ${median(report.turnMs).toFixed(0)} ms; per round's merges (${laneCount} × preview + execute) median ${median(report.mergeMs).toFixed(0)} ms`,
  );
  console.log(
    `git worktree list: ${report.worktrees} (main + ${report.worktrees - 1} lanes); lanes folder ${duKb(lanesDir)} KiB; .git ${duKb(path.join(ws, '.git'))} KiB; workspace ${duKb(ws)} KiB`,
  );
  if (process.env['LOOPX_BENCH_KEEP'] === undefined) fs.rmSync(root, { recursive: true, force: true });
  else console.log(`kept: ${ws}`);
  fs.rmSync(path.dirname(cli), { recursive: true, force: true });
  if (report.violations.length > 0 || report.turns.length !== rounds * laneCount) process.exitCode = 1;
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
