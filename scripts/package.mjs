// Builds the production bundles and packages them into a .vsix with @vscode/vsce.
// What ships is scripts/runtime-files.mjs's list, nothing else: the production build writes its bundles into
// a staging folder (the development build in out/ stays), the static files are copied beside them, and vsce
// runs there with a .vscodeignore generated from the same list, so it never walks the repository's large
// local folders (.vscode-test, bench-results, .demo). Fails when vsce's file listing differs from the list
// or when vsce prints a warning. `--out FILE` names the .vsix. Prints the .vsix path on the last line.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { builtFiles, runtimeFiles, vscodeignoreFor } from './runtime-files.mjs';

const root = new URL('..', import.meta.url).pathname;
const { name, version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const outArg = process.argv.indexOf('--out');
const vsix = outArg === -1 ? join(root, `${name}-${version}.vsix`) : resolve(process.argv[outArg + 1] ?? '');
const vsce = join(root, 'node_modules', '@vscode', 'vsce', 'vsce');

/** Runs vsce in the staging folder; its warnings (not-publishable metadata, links, files) fail packaging. */
function runVsce(stage, args) {
  const result = spawnSync(process.execPath, [vsce, ...args], { cwd: stage, encoding: 'utf8' });
  const output = `${result.stdout}${result.stderr}`;
  if (result.status !== 0) throw new Error(`vsce ${args[0]} failed:\n${output}`);
  const warnings = output.split('\n').filter((line) => /\bWARNING\b/i.test(line));
  if (warnings.length > 0) {
    throw new Error(`vsce ${args[0]} warned (fix the cause; no allow-flags):\n${warnings.join('\n')}\n\n${output}`);
  }
  return result.stdout;
}

const stage = mkdtempSync(join(tmpdir(), 'loopx-vsix-'));
try {
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--production', '--out-root', stage], {
    stdio: ['ignore', 'inherit', 'inherit'],
    cwd: root,
  });
  const files = runtimeFiles(root);
  const built = new Set(builtFiles());
  for (const file of files.filter((f) => !built.has(f))) {
    mkdirSync(dirname(join(stage, file)), { recursive: true });
    cpSync(join(root, file), join(stage, file));
  }
  writeFileSync(join(stage, '.vscodeignore'), vscodeignoreFor(root));
  // package.json's `files` is npm pack's list (the CLI and library); vsce refuses it beside a .vscodeignore.
  const manifest = JSON.parse(readFileSync(join(stage, 'package.json'), 'utf8'));
  if (manifest.files !== undefined) {
    delete manifest.files;
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  }

  const listed = runVsce(stage, ['ls', '--no-dependencies'])
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .sort();
  const missing = files.filter((file) => !listed.includes(file));
  const extra = listed.filter((file) => !files.includes(file));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(
      `the package's files differ from scripts/runtime-files.mjs: missing ${missing.join(', ') || 'none'}; not listed ${extra.join(', ') || 'none'}`,
    );
  }
  mkdirSync(dirname(vsix), { recursive: true });
  process.stdout.write(runVsce(stage, ['package', '--no-dependencies', '--out', vsix]));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
console.log(vsix);
