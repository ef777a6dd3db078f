// `npm run compat:seeds -- --seeds 1..10`: differential runs of our CLI against the original Python LoopX over
// other draws of the compatibility kit's generator (docs/compatibility.md, "Other seeds").
// Per seed: regenerate the cases (gen.py --seed N), record the original's answers once (compare.py --impl python
// --record, only when LOOPX_PY_CLI or the kit's original.sh makes the original available, and only when the
// recording is missing or stale), then compare `node out/cli.js`. Each differing case is looked up in the list of
// deliberate deviations (test/compat/deviations.json, scripts/compat-deviations.mjs): per family and seed the
// report counts matching cases, listed deviations and **unlisted** differences, and ends with "N unlisted".
// Recording is slow (minutes per seed): recordings are kept in --out and reused while cases.json is unchanged.
//
//   --seeds 1..10 | 1,4,7 | kit,1..10   seeds to run (default 1..10); `kit` is the kit's shipped cases
//   --deviations FILE       the deviation list (default test/compat/deviations.json)
//   --kit DIR               the kit (default: $LOOPX_COMPAT_KIT, ../shared/compat, ../../shared/compat)
//   --out DIR               where kit<N>/ goes (default: $LOOPX_COMPAT_SEEDS_DIR, else .compat-seeds/ here, gitignored)
//   --only FAMILY           repeatable, as compare.py's --only
//   --jobs N                parallel cases per compare.py run (default 1: the original is slow and CPU-bound)
//   --record-only           record, do not compare;  --no-record: compare what is recorded
//   --max-mismatches N      unlisted differences shown in full per seed (default 20)
// Exit code: 0 when every compared case matches or is a listed deviation, 1 when any difference is unlisted, 2 on a
// usage or setup error (a malformed deviation list included).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEVIATIONS_FILE, deviationFor, loadDeviations, matchingListedCases } from './compat-deviations.mjs';

const root = resolve(new URL('..', import.meta.url).pathname);

function usage(message) {
  console.error(`compat:seeds: ${message}`);
  process.exit(2);
}

function parseSeeds(text) {
  const seeds = [];
  for (const part of text.split(',')) {
    if (part.trim() === 'kit') {
      seeds.push('kit');
      continue;
    }
    const range = /^(\d+)\.\.(\d+)$/.exec(part.trim());
    if (range) {
      const [from, to] = [Number(range[1]), Number(range[2])];
      if (to < from) usage(`empty seed range ${part}`);
      for (let s = from; s <= to; s++) seeds.push(s);
    } else if (/^\d+$/.test(part.trim())) seeds.push(Number(part.trim()));
    else usage(`--seeds takes N, A..B, kit or a comma list, not ${JSON.stringify(part)}`);
  }
  return [...new Set(seeds)];
}

function parseArgs(argv) {
  const options = { seeds: parseSeeds('1..10'), only: [], jobs: 1, record: true, compare: true, maxMismatches: 20 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) usage(`${arg} needs a value`);
      return v;
    };
    if (arg === '--seeds') options.seeds = parseSeeds(value());
    else if (arg === '--kit') options.kit = resolve(value());
    else if (arg === '--deviations') options.deviations = resolve(value());
    else if (arg === '--out') options.out = resolve(value());
    else if (arg === '--only') options.only.push(value());
    else if (arg === '--jobs') options.jobs = Number(value());
    else if (arg === '--max-mismatches') options.maxMismatches = Number(value());
    else if (arg === '--record-only') options.compare = false;
    else if (arg === '--no-record') options.record = false;
    else usage(`unknown option ${arg}`);
  }
  return options;
}

function findKit(explicit) {
  if (explicit !== undefined)
    return existsSync(join(explicit, 'compare.py')) ? explicit : usage(`no compare.py in --kit ${explicit}`);
  const candidates = [
    explicit,
    process.env.LOOPX_COMPAT_KIT,
    join(root, '../shared/compat'),
    join(root, '../../shared/compat'),
  ];
  for (const dir of candidates)
    if (dir && existsSync(join(dir, 'compare.py')) && existsSync(join(dir, 'gen.py'))) return resolve(dir);
  return null;
}

/** The original's CLI: LOOPX_PY_CLI, else set up once with the kit's original.sh (when its tarball is there). */
function findOriginal(kit, out) {
  const fromEnv = process.env.LOOPX_PY_CLI;
  if (fromEnv && existsSync(fromEnv)) return fromEnv;
  const lx = join(out, 'original', 'lx');
  if (existsSync(lx)) return lx;
  if (!existsSync(join(kit, 'original.sh'))) return null;
  const setup = spawnSync('bash', [join(kit, 'original.sh'), join(out, 'original')], { encoding: 'utf8' });
  if (setup.status !== 0) {
    console.log(`original not available (original.sh: ${(setup.stderr || setup.stdout).trim().split('\n').pop()})`);
    return null;
  }
  return existsSync(lx) ? lx : null;
}

/**
 * The original's CLI behind a wrapper that shortens its effect runtime's idle time: that runtime outlives the
 * command by LOOPX_EFFECT_RUNTIME_IDLE_MS (the kit sets 20 s) holding stdout open, so a case took ~30 s of
 * waiting for ~5 s of work. The answers and files are written before the command exits, so they do not change.
 */
function shortIdle(lx) {
  const wrapper = join(out, 'lx-short-idle');
  writeFileSync(wrapper, `#!/bin/sh\nexport LOOPX_EFFECT_RUNTIME_IDLE_MS=1500\nexec ${JSON.stringify(lx)} "$@"\n`, {
    mode: 0o755,
  });
  return wrapper;
}

function python(args, env = {}) {
  return spawnSync('python3', args, {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    maxBuffer: 64 << 20,
  });
}

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

/**
 * Case ids of the selected families not recorded yet, or recorded as a timeout: on a loaded machine
 * the original can exceed compare.py's 120 s limit, and such a recording says nothing about the rule.
 */
function unrecorded(casesFile, expectedDir, families) {
  const have = existsSync(expectedDir) ? new Set(readdirSync(expectedDir)) : new Set();
  const { cases } = JSON.parse(readFileSync(casesFile, 'utf8'));
  const timedOut = (id) => JSON.parse(readFileSync(join(expectedDir, `${id}.json`), 'utf8')).expected?.rc === 'timeout';
  return cases
    .filter((c) => families.size === 0 || families.has(c.family))
    .filter((c) => !have.has(`${c.id}.json`) || timedOut(c.id))
    .map((c) => c.id);
}

/** Case ids grouped by family (the id's prefix), each group cut to at most 40. */
function recordingChunks(ids) {
  const chunks = [];
  let family = null;
  for (const id of ids) {
    const prefix = id.replace(/-\d+$/, '');
    if (prefix !== family || chunks.at(-1).length >= 40) chunks.push([]);
    family = prefix;
    chunks.at(-1).push(id);
  }
  return chunks;
}

/** compare.py's report: `  family  P/T  ok|FAIL` rows and the `--- case (family: note)` blocks, by case id. */
function parseReport(stdout) {
  const families = {};
  for (const m of stdout.matchAll(/^ {2}(\w+)\s+(\d+)\/(\d+)\s+(ok|FAIL)$/gm))
    families[m[1]] = [Number(m[2]), Number(m[3])];
  const failures = new Map();
  for (const block of stdout.split('\n--- ').slice(1)) {
    const text = block.split('\n\n')[0].trimEnd();
    const head = /^(\S+) \((\w+):/.exec(text);
    if (head) failures.set(head[1], { family: head[2], text });
  }
  return { families, failures };
}

const options = parseArgs(process.argv.slice(2));
const kit = findKit(options.kit);
if (kit === null) {
  console.log(
    'compat:seeds: the compatibility kit (../shared/compat) is not here; set LOOPX_COMPAT_KIT or --kit. Nothing to do.',
  );
  process.exit(0);
}
const out = options.out ?? process.env.LOOPX_COMPAT_SEEDS_DIR ?? join(root, '.compat-seeds');
mkdirSync(out, { recursive: true });
const cli = join(root, 'out', 'cli.js');
if (options.compare && !existsSync(cli)) usage(`${cli} does not exist: run npm run build first`);
const familyAliases = JSON.parse(
  python([
    '-c',
    `import sys, json; sys.path.insert(0, ${JSON.stringify(kit)}); import compare; print(json.dumps(compare.ONLY_ALIASES))`,
  ]).stdout || '{}',
);
const families = new Set(options.only.map((o) => familyAliases[o] ?? usage(`unknown --only ${o}`)));
const onlyArgs = options.only.flatMap((o) => ['--only', o]);
let original = null;

let deviations;
try {
  deviations = loadDeviations(options.deviations ?? DEVIATIONS_FILE);
} catch (error) {
  usage(`the deviation list is malformed: ${error.message}`);
}

/** Per seed and family: `{ match, listed: [[id, rule]], unlisted: [id], unrecorded }`. */
const table = {};
let unlistedTotal = 0;
for (const seed of options.seeds) {
  const shipped = seed === 'kit';
  const dir = shipped ? kit : join(out, `kit${seed}`);
  const casesFile = join(dir, 'cases.json');
  const expectedDir = join(dir, 'expected');
  if (!shipped) {
    mkdirSync(dir, { recursive: true });
    const gen = python([join(kit, 'gen.py'), '--seed', String(seed), '--out', casesFile]);
    if (gen.status !== 0) usage(`gen.py --seed ${seed} failed: ${gen.stderr.trim()}`);
    const stamp = join(expectedDir, '.cases.sha256');
    // A recording of another cases.json (the generator changed) is stale as a whole. The stamp is written before
    // recording, so an interrupted recording keeps what it recorded; a folder without a stamp is taken as current.
    if (existsSync(stamp) && readFileSync(stamp, 'utf8').trim() !== sha256(casesFile))
      rmSync(expectedDir, { recursive: true, force: true });
    mkdirSync(expectedDir, { recursive: true });
    writeFileSync(stamp, `${sha256(casesFile)}\n`);
  }
  const missing = unrecorded(casesFile, expectedDir, families);
  if (missing.length > 0 && options.record && !shipped) {
    if (original === null) {
      const lx = findOriginal(kit, out);
      original = lx === null ? null : shortIdle(lx);
    }
    if (original === null)
      console.log(`seed ${seed}: ${missing.length} cases not recorded and the original is not available`);
    else {
      console.log(`seed ${seed}: recording ${missing.length} cases from the original (slow) …`);
      // compare.py writes its recordings when its run ends: record in chunks of one family (at most 40 cases), so
      // an interrupted recording keeps every chunk it finished.
      for (const chunk of recordingChunks(missing)) {
        const rec = python(
          [
            join(kit, 'compare.py'),
            '--impl',
            'python',
            '--record',
            '--cases',
            casesFile,
            '--expected',
            expectedDir,
            '--jobs',
            String(options.jobs),
            ...chunk.flatMap((id) => ['--case', id]),
          ],
          { LOOPX_PY_CLI: original, ORACLE_TIMEOUT: process.env.ORACLE_TIMEOUT ?? '600' },
        );
        if (rec.status !== 0) usage(`recording seed ${seed} failed: ${(rec.stderr || rec.stdout).trim()}`);
        console.log(`seed ${seed}: recorded ${chunk[0]} … ${chunk.at(-1)}`);
      }
    }
  }
  if (!options.compare) continue;
  // Compare what is recorded; a case still missing (or recorded as a timeout) is counted as unrecorded, not as a
  // difference.
  const stillMissing = new Set(unrecorded(casesFile, expectedDir, families));
  const selected = JSON.parse(readFileSync(casesFile, 'utf8')).cases.filter(
    (c) => families.size === 0 || families.has(c.family),
  );
  const compared = selected.filter((c) => !stillMissing.has(c.id));
  const row = (table[seed] = {});
  for (const c of selected) row[c.family] ??= { match: 0, listed: [], unlisted: [], unrecorded: 0 };
  for (const c of selected) if (stillMissing.has(c.id)) row[c.family].unrecorded++;
  if (compared.length === 0) {
    console.log(`seed ${seed}: nothing recorded, skipped`);
    continue;
  }
  const caseArgs = stillMissing.size === 0 ? onlyArgs : compared.flatMap((c) => ['--case', c.id]);
  const run = python([
    join(kit, 'compare.py'),
    '--impl',
    `node ${cli}`,
    '--cases',
    casesFile,
    '--expected',
    expectedDir,
    '--jobs',
    String(options.jobs),
    '--max-mismatches',
    '100000',
    ...caseArgs,
  ]);
  const report = parseReport(run.stdout);
  if (Object.keys(report.families).length === 0)
    usage(`compare.py failed on seed ${seed}: ${(run.stderr || run.stdout).trim()}`);
  const shown = [];
  for (const c of compared) {
    const failure = report.failures.get(c.id);
    const cell = row[c.family];
    if (failure === undefined) cell.match++;
    else {
      const deviation = deviationFor(deviations, seed, c.id, c.family);
      if (deviation) cell.listed.push([c.id, deviation.rule]);
      else {
        cell.unlisted.push(c.id);
        shown.push(failure.text);
      }
    }
  }
  const stale = matchingListedCases(
    deviations,
    seed,
    new Set(compared.map((c) => c.id)),
    new Set(report.failures.keys()),
  );
  const count = (key) =>
    Object.values(row).reduce((n, cell) => n + (Array.isArray(cell[key]) ? cell[key].length : cell[key]), 0);
  const unlisted = count('unlisted');
  unlistedTotal += unlisted;
  console.log(
    `\n== seed ${seed}: ${count('match')} matching, ${count('listed')} listed deviations, ${unlisted} unlisted` +
      (count('unrecorded') > 0 ? `, ${count('unrecorded')} not recorded` : ''),
  );
  for (const [family, cell] of Object.entries(row))
    if (cell.listed.length > 0)
      console.log(`   listed  ${family}: ${cell.listed.map(([id, rule]) => `${id} (${rule})`).join(', ')}`);
  for (const text of shown.slice(0, options.maxMismatches)) console.log(`--- UNLISTED ${text}`);
  if (shown.length > options.maxMismatches) console.log(`... ${shown.length - options.maxMismatches} more unlisted`);
  if (stale.length > 0) console.log(`   listed but matching now (remove from the list?): ${stale.join(', ')}`);
}

if (options.compare && Object.keys(table).length > 0) {
  const seeds = Object.keys(table);
  const names = [...new Set(seeds.flatMap((s) => Object.keys(table[s])))].sort();
  const cellText = (cell) => {
    if (cell === undefined) return '-';
    const total = cell.match + cell.listed.length + cell.unlisted.length;
    const parts = [`${cell.match}/${total}`];
    if (cell.listed.length > 0) parts.push(`${cell.listed.length} listed`);
    if (cell.unlisted.length > 0) parts.push(`**${cell.unlisted.length} unlisted**`);
    if (cell.unrecorded > 0) parts.push(`${cell.unrecorded} not recorded`);
    return parts.join(', ');
  };
  const label = (s) => (s === 'kit' ? 'shipped kit' : `seed ${s}`);
  console.log(`\n| family | ${seeds.map(label).join(' | ')} |`);
  console.log(`|---|${seeds.map(() => '---').join('|')}|`);
  for (const f of names) console.log(`| ${f} | ${seeds.map((s) => cellText(table[s][f])).join(' | ')} |`);
  const sum = (s) =>
    Object.values(table[s]).reduce(
      (a, c) => ({
        match: a.match + c.match,
        listed: [...a.listed, ...c.listed],
        unlisted: [...a.unlisted, ...c.unlisted],
        unrecorded: a.unrecorded + c.unrecorded,
      }),
      { match: 0, listed: [], unlisted: [], unrecorded: 0 },
    );
  console.log(`| **all** | ${seeds.map((s) => cellText(sum(s))).join(' | ')} |`);
  console.log(`\n${unlistedTotal} unlisted`);
}
process.exit(unlistedTotal === 0 ? 0 : 1);
