// Builds the production bundles and packages them into a .vsix with @vscode/vsce.
// vsce runs in a staging folder holding only what ships (the .vscodeignore allowlist), so it never
// walks the repository's large local folders (.vscode-test, bench-results, .demo).
// Prints the .vsix path on the last line.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const { name, version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const vsix = join(root, `${name}-${version}.vsix`);
const shipped = [
  'package.json',
  'README.md',
  'LICENSE',
  'CHANGELOG.md',
  '.vscodeignore',
  'out/extension.js',
  'out/cli.js',
  'out/cli-main.js',
  'out/demoAgent.js',
  'media',
  'docs/images',
];

execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--production'], { stdio: 'inherit', cwd: root });
const stage = mkdtempSync(join(tmpdir(), 'loopx-vsix-'));
try {
  for (const entry of shipped) {
    if (existsSync(join(root, entry))) cpSync(join(root, entry), join(stage, entry), { recursive: true });
  }
  execFileSync(
    process.execPath,
    [
      join(root, 'node_modules', '@vscode', 'vsce', 'vsce'),
      'package',
      '--no-dependencies',
      '--allow-missing-repository',
      '--no-rewrite-relative-links',
      '--out',
      vsix,
    ],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
      cwd: stage,
    },
  );
} finally {
  rmSync(stage, { recursive: true, force: true });
}
console.log(vsix);
