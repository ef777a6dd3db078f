// `npm run test:mixed`: the mixed-team tier (docs/compatibility.md#mixed-teams). Our CLI and the original Python LoopX
// take turns on one workspace. The original comes from ../shared (its tarball, made runnable by
// ../shared/compat/original.sh) and is set up once into .mixed-cache/ (gitignored); the setup is redone when the
// tarball or the script changes. On a clone without ../shared the tier says so and records itself as skipped
// (LOOPX_TEST_SUMMARY gets {skipped}), so `npm test` shows it in its summary instead of passing silently.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { npmChildEnv } from './npm-env.cjs';

const root = new URL('..', import.meta.url).pathname;
const shared = resolve(process.env.LOOPX_SHARED_DIR ?? join(root, '..', 'shared'));
const script = join(shared, 'compat', 'original.sh');
const tarball = join(shared, 'original', 'loopx-bf27af77e.tar.gz');
const summary = process.env.LOOPX_TEST_SUMMARY;

if (!existsSync(script) || !existsSync(tarball)) {
  const reason = `no ${existsSync(script) ? tarball : script}: the original LoopX is not beside this clone`;
  console.log(`mixed tier skipped: ${reason} (set LOOPX_SHARED_DIR to the folder that holds compat/ and original/)`);
  if (summary) writeFileSync(summary, JSON.stringify({ passed: 0, failed: 0, pending: 0, skipped: reason }));
  process.exit(0);
}

const cache = join(root, '.mixed-cache');
const out = join(cache, 'original');
const stampFile = join(cache, 'stamp.json');
const stamp = JSON.stringify([
  tarball,
  statSync(tarball).size,
  statSync(tarball).mtimeMs,
  readFileSync(script, 'utf8'),
]);
const cached = existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp && existsSync(join(out, 'lx'));
if (!cached) {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(cache, { recursive: true });
  const setup = spawnSync('bash', [script, out], { stdio: 'inherit' });
  if (setup.status !== 0) {
    console.error(`mixed tier: ${script} failed (exit ${setup.status})`);
    process.exit(1);
  }
  writeFileSync(stampFile, stamp);
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
if (!existsSync(join(root, 'out', 'cli.js')) || process.env['LOOPX_MIXED_BUILD'] !== '0') {
  const build = spawnSync(npm, ['run', '-s', 'build'], { cwd: root, stdio: 'inherit', env: npmChildEnv(process.env) });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
// A generous ceiling per test (not a timed assertion): 20 rounds of the original take 2–3 min idle, far more on a loaded machine.
const mocha = spawnSync('npx', ['mocha', '--timeout', '1200000', 'test/mixed/**/*.test.ts'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, LOOPX_PY_CLI: join(out, 'lx') },
});
process.exit(mocha.status ?? 1);
