import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { BENCHMARKS } from './benchmarks';
import {
  renderMachine,
  renderResults,
  renderScaling,
  renderTargets,
  replaceBetweenMarkers,
  scalingRows,
  type BenchResults,
  type MachineInfo,
} from './core/report';
import { round } from './core/stats';
import type { BenchCase, CaseResult, RunnableBenchmark, SideResult } from './core/types';
import { BENCH_SEED, ensureWorkspace } from './core/workspaces';
import { SIZE_NAMES, SIZES, type SizeName } from './workspace/generate';
import { RESULT_PREFIX, type WorkerInput } from './core/protocol';

/**
 * `npm run bench [-- --only NAME[,NAME] --sizes S,M --runs N --no-docs --rebuild-cli]`:
 * generates (or reuses) the workspaces, runs every benchmark and its raw baseline in fresh
 * processes, prints median/min/max and peak memory, writes bench-results/latest.json and
 * regenerates the tables of docs/benchmarks.md between their marker comments.
 */
const ROOT = path.resolve(__dirname, '..');
const RESULTS_DIR = path.join(ROOT, 'bench-results');
const BUILD_DIR = path.join(RESULTS_DIR, '.build');
const WORKSPACES_DIR = path.join(RESULTS_DIR, 'workspaces');
const LATEST = path.join(RESULTS_DIR, 'latest.json');
const DOCS = path.join(ROOT, 'docs', 'benchmarks.md');
const BUILT_CLI = path.join(ROOT, 'out', 'cli.js');
/** The CLI is benchmarked from a private copy: `npm run build` elsewhere empties out/ while it runs. */
const CLI_PATH = path.join(BUILD_DIR, 'cli.js');

interface RunOptions {
  only: string[] | null;
  sizes: SizeName[] | null;
  runs: number | null;
  docs: boolean;
  rebuildCli: boolean;
  keepCaEnv: boolean;
}

function parseOptions(): RunOptions {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      sizes: { type: 'string' },
      runs: { type: 'string' },
      'no-docs': { type: 'boolean' },
      'rebuild-cli': { type: 'boolean' },
      'keep-ca-env': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(
      'usage: npm run bench -- [--only NAME[,NAME…]] [--sizes S,M,L,XL] [--runs N] [--no-docs] [--rebuild-cli] [--keep-ca-env]',
    );
    console.log(`benchmarks: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
    process.exit(0);
  }
  const list = (text: string | undefined): string[] | null =>
    text === undefined
      ? null
      : text
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '');
  const only = list(values.only);
  for (const name of only ?? []) {
    if (!BENCHMARKS.some((b) => b.name === name || b.name.startsWith(name)))
      throw new Error(`--only ${name}: no such benchmark (${BENCHMARKS.map((b) => b.name).join(', ')})`);
  }
  const sizes = list(values.sizes);
  for (const size of sizes ?? [])
    if (!(SIZE_NAMES as readonly string[]).includes(size))
      throw new Error(`--sizes: ${size} is not one of ${SIZE_NAMES.join(', ')}`);
  if (values.runs !== undefined && !/^[1-9]\d*$/.test(values.runs))
    throw new Error('--runs must be a whole number ≥ 1');
  return {
    only,
    sizes: sizes as SizeName[] | null,
    runs: values.runs === undefined ? null : Number(values.runs),
    docs: values['no-docs'] !== true,
    rebuildCli: values['rebuild-cli'] === true,
    keepCaEnv: values['keep-ca-env'] === true,
  };
}

function machineInfo(): MachineInfo {
  let cpu = os.cpus()[0]?.model ?? 'unknown';
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'));
    if (match?.[1]) cpu = match[1].trim();
  } catch {
    // Not Linux: os.cpus() names the model.
  }
  return {
    cpu_model: cpu,
    cores: os.cpus().length,
    memory_gb: round(os.totalmem() / 1024 ** 3, 1),
    node_version: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    load_average_start: round(os.loadavg()[0] ?? 0, 2),
    load_average_end: null,
  };
}

/** Bundles the worker and the child scripts the way the CLI is bundled, so no TypeScript loader runs while measuring. */
async function buildHelpers(): Promise<void> {
  fs.mkdirSync(BUILD_DIR, { recursive: true });
  const entries = {
    worker: 'bench/worker.ts',
    rawRead: 'bench/children/rawRead.ts',
    appendRows: 'bench/children/appendRows.ts',
    appendEvents: 'bench/children/appendEvents.ts',
  };
  await Promise.all(
    Object.entries(entries).map(([name, entry]) =>
      build({
        entryPoints: [path.join(ROOT, entry)],
        outfile: path.join(BUILD_DIR, `${name}.cjs`),
        bundle: true,
        platform: 'node',
        target: 'node20',
        format: 'cjs',
        logLevel: 'warning',
        absWorkingDir: ROOT,
        // The extension benchmark drives a real workbench; Playwright cannot be bundled.
        external: ['playwright-core'],
      }),
    ),
  );
  fs.copyFileSync(path.join(ROOT, 'bench', 'children', 'peakRss.cjs'), path.join(BUILD_DIR, 'peakRss.cjs'));
}

/** Copies out/cli.js (building it first when missing or when asked) and returns when it was built. */
function ensureCli(rebuild: boolean): string {
  if (!fs.existsSync(BUILT_CLI) || rebuild) {
    console.log('building the CLI (npm run build) …');
    const result = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], {
      cwd: ROOT,
      stdio: 'inherit',
    });
    if (result.status !== 0 || !fs.existsSync(BUILT_CLI))
      throw new Error('npm run build failed; the whole-process benchmarks need out/cli.js');
  }
  const builtAt = fs.statSync(BUILT_CLI).mtime.toISOString();
  fs.copyFileSync(BUILT_CLI, CLI_PATH);
  // out/cli.js is a launcher that loads the bundle beside it (through a V8 code cache).
  fs.copyFileSync(path.join(ROOT, 'out', 'cli-main.js'), path.join(BUILD_DIR, 'cli-main.js'));
  return builtAt;
}

/** CLI words (`todo list`, `status`) the built CLI offers, from `loopx commands --format json`. */
function cliCommands(): Set<string> {
  const result = spawnSync(process.execPath, [CLI_PATH, 'commands', '--format', 'json'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`out/cli.js commands failed: ${result.stderr}`);
  const parsed = JSON.parse(result.stdout) as { commands: { cli: string | null }[] };
  return new Set(parsed.commands.map((c) => c.cli?.replace(/^loopx /, '')).filter((c): c is string => c !== undefined));
}

function sizeOf(benchCase: BenchCase): SizeName | null {
  if (benchCase.size !== undefined) return benchCase.size;
  const shape = benchCase.shape;
  if (shape === null) return null;
  return (
    SIZE_NAMES.find(
      (size) =>
        SIZES[size].goals === shape.goals && SIZES[size].todos === shape.todos && SIZES[size].runs === shape.runs,
    ) ?? null
  );
}

function runWorker(input: WorkerInput): SideResult {
  const result = spawnSync(
    process.execPath,
    ['--expose-gc', path.join(BUILD_DIR, 'worker.cjs'), JSON.stringify(input)],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 28 },
  );
  const line = result.stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
  if (result.status !== 0 || line === undefined)
    throw new Error(
      (result.stderr || result.stdout || `worker exited with ${String(result.status)}`)
        .trim()
        .split('\n')
        .slice(0, 6)
        .join('\n'),
    );
  return JSON.parse(line.slice(RESULT_PREFIX.length)) as SideResult;
}

function baseResult(benchmark: RunnableBenchmark, benchCase: BenchCase, runs: number): CaseResult {
  return {
    benchmark: benchmark.name,
    case: benchCase.label,
    size: benchCase.size ?? null,
    units: benchmark.units(benchCase.shape),
    unit_label: benchmark.unitLabel,
    runs,
    warmup: benchCase.warmup,
    measured_at: new Date().toISOString(),
    subject: null,
    baseline: null,
    baseline_ratio: null,
    skipped: null,
    error: null,
  };
}

const pad = (text: string, width: number): string => text.padEnd(width);
const ms = (value: number): string =>
  value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : Math.round(value).toString();

async function main(): Promise<void> {
  const options = parseOptions();
  // Node 20 loads the bundle NODE_EXTRA_CA_CERTS names at every start (~90 ms for the system's
  // bundle on this machine); LoopX makes no TLS connection and a user's shell rarely sets it, so
  // every process the benchmarks start goes without it unless --keep-ca-env.
  if (!options.keepCaEnv) delete process.env['NODE_EXTRA_CA_CERTS'];
  const started = Date.now();
  const machine = machineInfo();
  console.log(`${machine.cpu_model}, ${machine.cores} cores, ${machine.memory_gb} GB, node ${machine.node_version}`);
  await buildHelpers();
  const cliBuiltAt = ensureCli(options.rebuildCli);
  const available = cliCommands();
  // A name selects that benchmark alone when one has it exactly, else every benchmark it begins.
  const selects = (name: string, b: { name: string }): boolean =>
    BENCHMARKS.some((x) => x.name === name) ? b.name === name : b.name.startsWith(name);
  const selected = BENCHMARKS.filter((b) => options.only === null || options.only.some((name) => selects(name, b)));
  const results: CaseResult[] = [];

  for (const benchmark of selected) {
    if (benchmark.kind === 'pending') {
      console.log(`${pad(benchmark.name, 30)} not implemented yet (needs ${benchmark.needs.split(':')[0]})`);
      continue;
    }
    for (const benchCase of benchmark.cases) {
      const size = sizeOf(benchCase);
      if (options.sizes !== null && size !== null && !options.sizes.includes(size)) continue;
      const runs = options.runs ?? benchCase.runs;
      const result = baseResult(benchmark, benchCase, runs);
      results.push(result);
      const label = `${pad(benchmark.name, 30)} ${pad(benchCase.label, 22)}`;
      if (benchmark.requiresCli !== undefined && !available.has(benchmark.requiresCli)) {
        result.skipped = `not implemented yet: \`loopx ${benchmark.requiresCli}\` is not in out/cli.js`;
        console.log(`${label} ${result.skipped}`);
        continue;
      }
      try {
        const workspace =
          benchCase.shape === null
            ? null
            : ensureWorkspace(WORKSPACES_DIR, benchCase.shape, BENCH_SEED, (line) => console.log(`  ${line}`));
        const input = (side: WorkerInput['side']): WorkerInput => ({
          benchmark: benchmark.name,
          caseLabel: benchCase.label,
          side,
          workspaceRoot: workspace?.root ?? null,
          cliPath: CLI_PATH,
          buildDir: BUILD_DIR,
          runs,
          warmup: benchCase.warmup,
        });
        result.subject = runWorker(input('subject'));
        result.baseline = runWorker(input('baseline'));
        result.baseline_ratio = round(result.subject.median_ms / result.baseline.median_ms, 2);
        const s = result.subject;
        console.log(
          `${label} median ${ms(s.median_ms)} ms (min ${ms(s.min_ms)}, max ${ms(s.max_ms)}), raw ${ms(result.baseline.median_ms)} ms → ${result.baseline_ratio}×, peak ${s.peak_rss_mb.toFixed(0)} MB`,
        );
        if (s.verification !== null) console.log(`  ✓ ${s.verification}`);
      } catch (error) {
        result.error = error instanceof Error ? error.message : String(error);
        console.log(`${label} FAILED: ${result.error}`);
      }
    }
  }

  machine.load_average_end = round(os.loadavg()[0] ?? 0, 2);
  const merged = mergeWithPrevious(results, options);
  const data: BenchResults = {
    schema_version: 'loopx_bench_results_v1',
    generated_at: new Date().toISOString(),
    machine,
    cli: { path: path.relative(ROOT, BUILT_CLI), built_at: cliBuiltAt },
    results: merged,
    scaling: scalingRows(merged),
  };
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(LATEST, `${JSON.stringify(data, null, 2)}\n`);
  console.log(`\nwrote ${path.relative(ROOT, LATEST)}`);
  // The tables are regenerated from the merged results only when they hold every benchmark: a
  // partial run on a machine whose latest.json lacks the others would blank their committed figures.
  const missing = BENCHMARKS.filter((b) => !merged.some((r) => r.benchmark === b.name)).map((b) => b.name);
  if (options.docs && missing.length > 0)
    console.log(
      `\ndocs/benchmarks.md not regenerated: ${path.relative(ROOT, LATEST)} has no results for ${missing.join(', ')} ` +
        '(run the whole bench once on this machine, or copy the new figures by hand)',
    );
  if (options.docs && missing.length === 0) {
    let doc = fs.readFileSync(DOCS, 'utf8');
    doc = replaceBetweenMarkers(doc, 'machine', renderMachine(data));
    doc = replaceBetweenMarkers(doc, 'targets', renderTargets(BENCHMARKS, merged));
    doc = replaceBetweenMarkers(doc, 'results', renderResults(BENCHMARKS, merged));
    doc = replaceBetweenMarkers(doc, 'scaling', renderScaling(data.scaling));
    fs.writeFileSync(DOCS, doc);
    console.log(`regenerated the tables of ${path.relative(ROOT, DOCS)}`);
  }
  console.log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (results.some((r) => r.error !== null)) process.exitCode = 1;
}

/** A partial run (--only, --sizes) replaces only the cases it measured; the rest keep their earlier figures and dates. */
function mergeWithPrevious(results: CaseResult[], options: RunOptions): CaseResult[] {
  if (options.only === null && options.sizes === null) return results;
  let previous: CaseResult[] = [];
  try {
    previous = (JSON.parse(fs.readFileSync(LATEST, 'utf8')) as BenchResults).results;
  } catch {
    return results;
  }
  const key = (r: CaseResult): string => `${r.benchmark}\u0000${r.case}`;
  const fresh = new Map(results.map((r) => [key(r), r]));
  const kept = previous.filter((r) => !fresh.has(key(r)) && BENCHMARKS.some((b) => b.name === r.benchmark));
  const order = new Map(BENCHMARKS.map((b, index) => [b.name, index]));
  return [...kept, ...results].sort((a, b) => (order.get(a.benchmark) ?? 0) - (order.get(b.benchmark) ?? 0));
}

main().catch((error: unknown) => {
  console.error(`bench: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 2;
});
