// Builds the production bundles and packages them into a .vsix with @vscode/vsce.
// Prints the .vsix path on the last line.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const { name, version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const vsix = join(root, `${name}-${version}.vsix`);

execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--production'], { stdio: 'inherit', cwd: root });
execFileSync(process.execPath, [join(root, 'node_modules', '@vscode', 'vsce', 'vsce'), 'package', '--no-dependencies', '--allow-missing-repository', '--no-rewrite-relative-links', '--out', vsix], {
  stdio: ['ignore', 'inherit', 'inherit'], cwd: root,
});
console.log(vsix);
