#!/usr/bin/env node
// Whole-process figures of `loopx status` and `quota should-run` on workspaces shaped like real
// LoopX ones (the shared generator, in the original's on-disk format), with and without the
// persistent status cache. Every cached answer is checked against the uncached path (identical
// JSON) before its time counts.
//
//   npm run bench:real -- --size M [--runs 5] [--dir /tmp/loopx-real-M] [--against /tmp/out-before/cli.js]
//                          [--python /path/to/loopx-checkout [--python-node /dir/with/node22+] [--python-runs 1]]
//                          [--keep-ca-env] [--shared-tmp]
//
// Each row: wall time (median, min, max), CPU time of the process (user + system, median: steadier
// than wall time on a loaded machine), peak RSS (max), and the load average when the row ended.
// `node -e 0` measured along the way is the start-up floor. `--against` names another build's
// cli.js: its status is run interleaved with ours (same cases) and must print identical bytes.
//
// `--python DIR` also times the original Python LoopX (a checkout of its repository: DIR/loopx is the
// package) on the same workspace and the same commands; its control plane starts a Node >= 22.6
// runtime, so `--python-node DIR` names a folder holding such a `node` (put first on its PATH).
//
// NODE_EXTRA_CA_CERTS is removed from the processes' environment unless `--keep-ca-env`: Node 20
// loads the named bundle at every start (about 90 ms on this machine's 200 KB system bundle), which
// LoopX never uses (it makes no TLS connection), and a user's shell rarely sets it. The floor row is
// measured in the same environment as the rows.
//
// Sizes: S = 10×20×50, M = 100×50×500, L = 500×100×400, XL = 2000×100×100 (goals × todos × runs, seed 11).
// The generator is python3 ../shared/bench/gen_workspace.py (override: LOOPX_REAL_SHAPE_GEN).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const SIZES = { S: [10, 20, 50], M: [100, 50, 500], L: [500, 100, 400], XL: [2000, 100, 100] };
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1] : fallback;
};
const size = option('size', 'M');
const runs = Number(option('runs', '5'));
if (!(size in SIZES)) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}`);
const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const dir = path.resolve(option('dir', path.join(os.tmpdir(), `loopx-real-${size}`)));
const generator = process.env.LOOPX_REAL_SHAPE_GEN ?? path.resolve(repo, '..', 'shared', 'bench', 'gen_workspace.py');
const cli = path.join(repo, 'out', 'cli.js');
const against = option('against', undefined);
const registry = path.join(dir, '.loopx', 'registry.json');
const cacheFile = path.join(dir, 'runtime', 'cache', 'status-cache.json');
const python = option('python', undefined);
const pythonNode = option('python-node', undefined);
const pythonRuns = Number(option('python-runs', '1'));
const baseEnv = { ...process.env };
if (!args.includes('--keep-ca-env')) delete baseEnv['NODE_EXTRA_CA_CERTS'];
// The CLI's code caches live in $TMPDIR/loopx-compile-cache-<uid>, which keeps the caches of the four bundles
// written to most recently (src/cli/compileCache.ts): on a machine where other checkouts build and run `loopx`,
// theirs evict ours between runs, and a row then times a compile instead of a cached start. Each bench run
// gets its own TMPDIR (its first run of each command makes the cache) unless `--shared-tmp`.
const privateTmp = args.includes('--shared-tmp') ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bench-tmp-'));
if (privateTmp !== null) baseEnv['TMPDIR'] = privateTmp;
process.on('exit', () => {
  if (privateTmp !== null) fs.rmSync(privateTmp, { recursive: true, force: true });
});

if (!fs.existsSync(registry)) {
  const [goals, todos, rows] = SIZES[size];
  const gen = spawnSync(
    'python3',
    [generator, dir, '--goals', `${goals}`, '--todos', `${todos}`, '--runs', `${rows}`, '--seed', '11'],
    { encoding: 'utf8' },
  );
  if (gen.status !== 0) throw new Error(`generator failed: ${gen.stderr}`);
}
const registryDoc = JSON.parse(fs.readFileSync(registry, 'utf8'));
const probe =
  registryDoc.goals.find((goal) => (goal.coordination?.registered_agents ?? []).length === 1) ?? registryDoc.goals[0];
const probeState = path.join(probe.repo, probe.state_file);

// Every run sees the same instant: the quota windows roll with the clock, and on a generated
// workspace a spend leaves the 24 h window every few seconds, which would make two honest answers
// a few seconds apart differ.
const NOW = new Date().toISOString();

/** One CLI process: wall ms, CPU ms and peak RSS (MB, through /usr/bin/time when present) and stdout. */
function loopx(cliArgs, env = {}, cliPath = cli) {
  const timeBin = fs.existsSync('/usr/bin/time') ? ['/usr/bin/time', '-f', '%M %U %S'] : [];
  const started = process.hrtime.bigint();
  const result = spawnSync(
    timeBin[0] ?? process.execPath,
    [...timeBin.slice(1), ...(timeBin.length ? [process.execPath] : []), cliPath, '--registry', registry, ...cliArgs],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 30,
      env: { ...baseEnv, LOOPX_NOW: NOW, ...env },
    },
  );
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0 && result.status !== 1) throw new Error(`loopx ${cliArgs.join(' ')}: ${result.stderr}`);
  const timeLine = /^(\d+) ([\d.]+) ([\d.]+)$/.exec(result.stderr.trim().split('\n').pop() ?? '');
  return {
    ms,
    rssMb: timeLine ? Number(timeLine[1]) / 1024 : null,
    cpuMs: timeLine ? (Number(timeLine[2]) + Number(timeLine[3])) * 1000 : null,
    stdout: result.stdout,
  };
}

/** `node -e 0` (the start-up floor), measured beside the rows. */
const floor = [];
function nodeFloor() {
  const started = process.hrtime.bigint();
  spawnSync(process.execPath, ['-e', '0'], { env: baseEnv });
  floor.push(Number(process.hrtime.bigint() - started) / 1e6);
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const STATUS = ['status', '--format', 'json'];
const SHOULD_RUN = ['quota', 'should-run', '--goal-id', probe.id, '--format', 'json'];
const OFF = { LOOPX_STATUS_CACHE: 'off' };
const rows = [];
/** A status answer without the times of the answer itself (`agent_management_projection.generated_at`). */
function withoutAnswerTimes(stdout) {
  try {
    const answer = JSON.parse(stdout);
    if (answer?.agent_management_projection !== undefined) delete answer.agent_management_projection.generated_at;
    return JSON.stringify(answer);
  } catch {
    return stdout;
  }
}
function measure(label, prepare, command, env, reference) {
  const sides = [{ label, cli, times: [], cpu: [], rss: [] }];
  if (against !== undefined)
    sides.push({ label: `${label} [--against build]`, cli: against, times: [], cpu: [], rss: [] });
  for (let i = 0; i < runs; i++) {
    for (const side of sides) {
      prepare(i, side.cli);
      const run = loopx(command, env, side.cli);
      if (reference !== undefined) {
        const expected = reference();
        if (run.stdout !== expected && withoutAnswerTimes(run.stdout) !== withoutAnswerTimes(expected))
          throw new Error(`${side.label}: output differs from the uncached path`);
      }
      side.times.push(run.ms);
      if (run.cpuMs !== null) side.cpu.push(run.cpuMs);
      if (run.rssMb !== null) side.rss.push(run.rssMb);
    }
    nodeFloor();
  }
  for (const side of sides)
    rows.push({
      label: side.label,
      median: median(side.times),
      min: Math.min(...side.times),
      max: Math.max(...side.times),
      cpu: side.cpu.length ? median(side.cpu) : null,
      rss: side.rss.length ? Math.max(...side.rss) : null,
      load: os.loadavg()[0],
    });
}

let edits = 0;
const touchProbe = () => fs.appendFileSync(probeState, `\n<!-- bench edit ${edits++} -->\n`);
// With --against the two builds share the cache file but not its format (each finds the other's
// foreign): a warm row first lets the side about to run write its own cache.
const warmUp = (cliPath) => {
  if (against !== undefined) loopx(STATUS, {}, cliPath);
};
const uncached = () => loopx(STATUS, OFF).stdout;
if (against !== undefined && loopx(STATUS, OFF, against).stdout !== uncached())
  throw new Error(`--against ${against}: its status differs from ours`);

measure('status, uncached (LOOPX_STATUS_CACHE=off)', () => undefined, STATUS, OFF);
measure('status, cold (no cache file)', () => fs.rmSync(cacheFile, { force: true }), STATUS, {}, uncached);
loopx(STATUS);
measure('status, warm (nothing changed)', (_, cliPath) => warmUp(cliPath), STATUS, {}, uncached);
measure(
  'status, one goal changed',
  (_, cliPath) => {
    warmUp(cliPath);
    touchProbe();
  },
  STATUS,
  {},
  uncached,
);
measure(`quota should-run, one goal (${probe.id})`, () => undefined, SHOULD_RUN, {});

/** The original Python LoopX on the same workspace: wall time and peak RSS of each command. */
function pythonRow(label, command) {
  const times = [];
  const rss = [];
  const env = { ...baseEnv, LOOPX_NOW: NOW, PYTHONPATH: python };
  if (pythonNode !== undefined) env['PATH'] = `${pythonNode}${path.delimiter}${env['PATH'] ?? ''}`;
  for (let i = 0; i < pythonRuns; i++) {
    const timeBin = fs.existsSync('/usr/bin/time') ? ['/usr/bin/time', '-f', '%M'] : [];
    const argv = [
      ...timeBin.slice(1),
      'python3',
      '-c',
      'import sys; from loopx.entrypoint import main; sys.argv[0] = "loopx"; sys.exit(main())',
      '--registry',
      registry,
      ...command,
    ];
    const started = process.hrtime.bigint();
    // In the workspace: the original resolves the registry's relative runtime root against the
    // current folder, and should-run writes its rollout event log there.
    const result = spawnSync(timeBin[0] ?? 'python3', timeBin.length ? argv : argv.slice(1), {
      encoding: 'utf8',
      maxBuffer: 1 << 30,
      env,
      cwd: dir,
    });
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    let answer;
    try {
      answer = JSON.parse(result.stdout);
    } catch {
      answer = undefined;
    }
    if (answer === undefined || (result.status !== 0 && result.status !== 1))
      throw new Error(`python loopx ${command.join(' ')} exited with ${result.status}: ${result.stderr.slice(-600)}`);
    const peak = /^(\d+)$/.exec(result.stderr.trim().split('\n').pop() ?? '');
    if (peak) rss.push(Number(peak[1]) / 1024);
  }
  rows.push({
    label: `${label} — Python LoopX`,
    median: median(times),
    min: Math.min(...times),
    max: Math.max(...times),
    cpu: null,
    rss: rss.length ? Math.max(...rss) : null,
    load: os.loadavg()[0],
  });
}
if (python !== undefined) {
  // The original takes --format as a global flag (before the command) for its quota commands.
  pythonRow('status', ['--format', 'json', 'status']);
  pythonRow(`quota should-run, one goal (${probe.id})`, [
    '--format',
    'json',
    'quota',
    'should-run',
    '--goal-id',
    probe.id,
  ]);
}

const load = os
  .loadavg()
  .map((v) => v.toFixed(1))
  .join(' / ');
console.log(
  `Real-shaped ${size} (${SIZES[size].join(' × ')}, seed 11) at ${dir}; ${runs} runs each; load ${load}; NODE_EXTRA_CA_CERTS ${'NODE_EXTRA_CA_CERTS' in baseEnv ? 'kept' : 'removed'}; ${privateTmp === null ? 'shared TMPDIR' : 'private TMPDIR (code caches)'}\n`,
);
console.log('| Case | Median | Min | Max | CPU (median) | Peak RSS | Load |\n|---|---|---|---|---|---|---|');
for (const row of rows)
  console.log(
    `| ${row.label} | ${row.median.toFixed(0)} ms | ${row.min.toFixed(0)} ms | ${row.max.toFixed(0)} ms | ${row.cpu === null ? '—' : `${row.cpu.toFixed(0)} ms`} | ${row.rss === null ? '—' : `${row.rss.toFixed(0)} MB`} | ${row.load.toFixed(1)} |`,
  );
console.log(
  `| \`node -e 0\` (start-up floor, measured between the runs) | ${median(floor).toFixed(0)} ms | ${Math.min(...floor).toFixed(0)} ms | ${Math.max(...floor).toFixed(0)} ms | | | |`,
);
