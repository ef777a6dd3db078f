// `npm test`: every tier, in order, with a count per tier. Fails if any tier fails, runs no test, or has a
// pending (skipped) test: a test that did not run proved nothing.
//   1. static       typecheck (tsc --noEmit, strict) and lint (eslint)
//   2. unit         mocha over src/core and the CLI (no VS Code)
//   3. integration  mocha inside a real VS Code extension host (code-server), dev build and installed .vsix
//      oldest-vscode the development integration suite again on the oldest VS Code engines.vscode admits
//   4. e2e          Playwright + Debian Chromium driving the real workbench, with screenshots
//   5. reliability  chaos-short (60 seeded SIGKILL cases) and fuzz-short (1,100 fast-check cases); the
//                   full suites are `npm run chaos` and `npm run fuzz` (docs/reliability.md)
//   6. agents       the real Claude Code, Codex and opencode CLIs against scripted model servers, in
//                   loopback-only network namespaces (docs/agents-conformance.md); needs root, else it says
//                   why it skipped (and fails under CI)
//   7. mixed        our CLI and the original Python LoopX on one workspace (docs/compatibility.md#mixed-teams);
//                   needs ../shared, and says "skipped (…)" in the summary without it
// LOOPX_TEST_TIERS=unit,e2e runs a subset (for local iteration; CI runs all); the summary still has a line
// for every tier, saying "skipped (LOOPX_TEST_TIERS)" for the others.
// Every command of a tier runs under the tier's time limit (TIER_MINUTES, default 30 min;
// LOOPX_TIER_MINUTES=N sets all of them): past it, scripts/time-limit.mjs kills the command's whole process
// tree and the tier fails with a message naming it, so a hanging test fails the run instead of hanging it.
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npmChildEnv } from './npm-env.cjs';
import { TIMED_OUT_EXIT_CODE } from './time-limit.mjs';

const root = new URL('..', import.meta.url).pathname;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const scratch = mkdtempSync(join(tmpdir(), 'loopx-test-'));
const only = process.env.LOOPX_TEST_TIERS?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);

const TIER_MINUTES = { static: 10, unit: 25, integration: 35, e2e: 25, reliability: 10 };
const limitMinutes = (tier) => Number(process.env.LOOPX_TIER_MINUTES) || TIER_MINUTES[tier] || 30;
const timeLimit = join(root, 'scripts', 'time-limit.mjs');
let currentTier = '';
let tierStarted = 0;
const timedOut = new Set();

function run(command, args, env = {}) {
  const started = Date.now();
  const left = Math.max(1, Math.round(limitMinutes(currentTier) * 60 - (started - tierStarted) / 1000));
  const limited = [timeLimit, String(left), currentTier, '--', command, ...args];
  const result = spawnSync(process.execPath, limited, {
    cwd: root,
    stdio: 'inherit',
    env: npmChildEnv(process.env, env),
  });
  if (result.status === TIMED_OUT_EXIT_CODE) timedOut.add(currentTier);
  return { ok: result.status === 0, seconds: (Date.now() - started) / 1000 };
}

function summaryOf(file) {
  if (!existsSync(file)) return { passed: 0, failed: 0, pending: 0 };
  const s = JSON.parse(readFileSync(file, 'utf8'));
  return { passed: s.passed ?? 0, failed: s.failed ?? 0, pending: s.pending ?? 0, skippedBecause: s.skipped };
}

const tiers = [
  {
    name: 'static',
    run() {
      const checks = [run(npm, ['run', '-s', 'typecheck']), run(npm, ['run', '-s', 'lint'])];
      return {
        passed: checks.filter((c) => c.ok).length,
        failed: checks.filter((c) => !c.ok).length,
        pending: 0,
        ok: checks.every((c) => c.ok),
      };
    },
  },
  ...[
    ['unit', 'test:unit'],
    ['integration', 'test:integration'],
    ['oldest-vscode', 'test:oldest-vscode'],
    ['e2e', 'test:e2e'],
  ].map(([name, script]) => ({
    name,
    run() {
      const file = join(scratch, `${name}.json`);
      // The unit tier tests the built CLI bundle and its launcher too (test/unit/cli): built first, so a fresh
      // clone's `npm test` finds it.
      if (name === 'unit' && !run(npm, ['run', '-s', 'build']).ok) return { ...summaryOf(file), ok: false };
      const result = run(npm, ['run', '-s', script], { LOOPX_TEST_SUMMARY: file });
      const counts = summaryOf(file);
      return { ...counts, ok: result.ok };
    },
  })),
];

// chaos and fuzz add their counts to one summary file.
tiers.push({
  name: 'reliability',
  run() {
    const file = join(scratch, 'reliability.json');
    const env = { LOOPX_TEST_SUMMARY: file };
    // A new seed each run (LOOPX_SEED=N replays one), printed first so a failure can be replayed.
    const seed = process.env.LOOPX_SEED?.trim() || String(randomInt(1, 1_000_000));
    console.log(`reliability: seed ${seed} (replay: LOOPX_SEED=${seed} LOOPX_TEST_TIERS=reliability npm test)`);
    const build = run(npm, ['run', '-s', 'build']);
    const chaos = build.ok && run('npx', ['tsx', 'test/reliability/chaos.ts', '--cases', '60', '--seed', seed], env);
    const fuzz = build.ok && run('npx', ['tsx', 'test/reliability/fuzz.ts', '--cases', '1100', '--seed', seed], env);
    return { ...summaryOf(file), ok: build.ok && chaos.ok && fuzz.ok };
  },
});

tiers.push({
  name: 'mixed',
  run() {
    const file = join(scratch, 'mixed.json');
    const result = run(npm, ['run', '-s', 'test:mixed'], { LOOPX_TEST_SUMMARY: file });
    return { ...summaryOf(file), ok: result.ok };
  },
});

tiers.push({
  name: 'agents',
  run() {
    const file = join(scratch, 'agents.json');
    const result = run(npm, ['run', '-s', 'test:agents'], { LOOPX_TEST_SUMMARY: file });
    return { ...summaryOf(file), ok: result.ok };
  },
});

const unknown = (only ?? []).filter((name) => !tiers.some((t) => t.name === name));
if (unknown.length > 0) {
  console.error(
    `LOOPX_TEST_TIERS names no tier: ${unknown.join(', ')} (tiers: ${tiers.map((t) => t.name).join(', ')})`,
  );
  process.exit(1);
}

const rows = [];
for (const tier of tiers) {
  if (only && !only.includes(tier.name)) {
    rows.push({ name: tier.name, skipped: true });
    continue;
  }
  console.log(`\n━━ ${tier.name} ━━`);
  currentTier = tier.name;
  const started = Date.now();
  tierStarted = started;
  const result = tier.run();
  rows.push({ name: tier.name, ...result, seconds: (Date.now() - started) / 1000 });
}
rmSync(scratch, { recursive: true, force: true });

console.log('\n━━ summary ━━');
let passed = 0;
let failed = 0;
let ok = true;
for (const row of rows) {
  if (row.skipped) {
    console.log(`${row.name.padEnd(13)} skipped (LOOPX_TEST_TIERS)`);
    continue;
  }
  if (row.skippedBecause && row.ok) {
    console.log(`${row.name.padEnd(13)} skipped: ${row.skippedBecause}`);
    continue;
  }
  const empty = row.passed + row.failed === 0;
  const tierOk = row.ok && row.failed === 0 && row.pending === 0 && !empty;
  ok &&= tierOk;
  passed += row.passed;
  failed += row.failed + (tierOk || row.failed > 0 ? 0 : 1);
  const notes = [
    empty ? '(ran no test!)' : '',
    row.pending > 0 ? `(${row.pending} pending: a test that did not run)` : '',
    timedOut.has(row.name) ? `(timed out after ${limitMinutes(row.name)} min: process tree killed)` : '',
  ]
    .filter(Boolean)
    .join(' ');
  console.log(
    `${row.name.padEnd(13)} ${String(row.passed).padStart(4)} passed ${String(row.failed).padStart(3)} failed  ${row.seconds.toFixed(1).padStart(6)} s${notes ? `  ${notes}` : ''}${tierOk ? '' : '  FAILED'}`,
  );
}
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = ok ? 0 : 1;
