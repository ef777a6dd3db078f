#!/usr/bin/env node
// Interleaved A/B of `loopx quota should-run` on one goal of a real-shaped workspace (whole process):
// `node -e 0` (start-up floor), the old build, the new build from scratch (LOOPX_INDEX_CACHE=off), and
// the new build warm (the goal's .loopx-index-cache.json kept) and after one appended row (tail read),
// alternating run by run. Every answer must be byte-identical to the old build's.
//
//   node scripts/bench-should-run-ab.mjs --dir /tmp/perf-index-M --before /tmp/perf-index-base/out/cli.js [--runs 7]
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1] : fallback;
};
const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const dir = path.resolve(option('dir', path.join(os.tmpdir(), 'loopx-real-M')));
const before = path.resolve(option('before', ''));
const after = path.join(repo, 'out', 'cli.js');
const runs = Number(option('runs', '7'));
const registry = path.join(dir, '.loopx', 'registry.json');
const doc = JSON.parse(fs.readFileSync(registry, 'utf8'));
const goal =
  doc.goals.find((g) => g.id === option('goal', '')) ??
  doc.goals.find((g) => (g.coordination?.registered_agents ?? []).length === 1) ??
  doc.goals[0];
const agent = goal.coordination?.registered_agents?.[0];
const command = [
  'quota',
  'should-run',
  '--goal-id',
  goal.id,
  ...(agent === undefined ? [] : ['--agent-id', agent]),
  '--format',
  'json',
];

function timed(argv, env = {}) {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, argv, {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    env: { ...process.env, ...env },
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0 && result.status !== 1) throw new Error(`${argv.join(' ')}: ${result.stderr}`);
  return { ms, stdout: result.stdout };
}
const loopx = (cli, env) => timed([cli, '--registry', registry, ...command], env);

// The goal's index, to append one row between the "tail" runs (a copy of its last row, one second later).
const runsDir = path.join(dir, 'runtime', 'goals', goal.id, 'runs');
const indexFile = path.join(runsDir, 'index.jsonl');
const original = fs.readFileSync(indexFile);
function appendOne(i) {
  const lines = fs.readFileSync(indexFile, 'utf8').trimEnd().split('\n');
  const last = JSON.parse(lines[lines.length - 1]);
  const at = new Date(Date.parse(last.generated_at) + 1000);
  fs.appendFileSync(
    indexFile,
    `${JSON.stringify({ ...last, generated_at: at.toISOString().replace('.000Z', '+00:00'), ab_probe: i })}\n`,
  );
}

const series = { 'node -e 0': [], before: [], 'after, uncached': [], 'after, warm': [], 'after, one row appended': [] };
const loads = [];
try {
  loopx(after); // writes the cache
  for (let i = 0; i < runs; i++) {
    loads.push(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
    series['node -e 0'].push(timed(['-e', '0']).ms);
    const a = loopx(before);
    series.before.push(a.ms);
    const off = loopx(after, { LOOPX_INDEX_CACHE: 'off' });
    series['after, uncached'].push(off.ms);
    const warm = loopx(after);
    series['after, warm'].push(warm.ms);
    for (const [label, out] of [
      ['uncached', off],
      ['warm', warm],
    ])
      if (out.stdout !== a.stdout) throw new Error(`after, ${label}: output differs from the old build`);
    appendOne(i);
    const reference = loopx(before).stdout;
    const tail = loopx(after);
    series['after, one row appended'].push(tail.ms);
    if (tail.stdout !== reference) throw new Error('after, one row appended: output differs from the old build');
  }
} finally {
  fs.writeFileSync(indexFile, original);
}
const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
console.log(
  `quota should-run --goal-id ${goal.id} on ${dir} (${original.length} bytes of index); ${runs} interleaved runs; load ${loads.join(', ')}`,
);
console.log('| Case | Median | Min | Max |\n|---|---|---|---|');
for (const [label, values] of Object.entries(series))
  console.log(
    `| ${label} | ${median(values).toFixed(0)} ms | ${Math.min(...values).toFixed(0)} ms | ${Math.max(...values).toFixed(0)} ms |`,
  );
console.log('Every answer of the new build was byte-identical to the old build on the same index.');
