// `npm start`: the main job. Installs what is missing, builds and packages the extension,
// materializes the demo workspace, and opens VS Code on it with the extension installed.
// This file only makes sure dependencies exist; scripts/start.ts does the rest.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { npmChildEnv } from './npm-env.cjs';

const root = new URL('..', import.meta.url).pathname;
if (!existsSync(join(root, 'node_modules', '.package-lock.json'))) {
  console.log('[start] installing npm dependencies (npm ci)…');
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], {
    cwd: root,
    stdio: 'inherit',
    env: npmChildEnv(),
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
const child = spawn(
  process.execPath,
  ['--import', 'tsx', join(root, 'scripts', 'start.ts'), ...process.argv.slice(2)],
  // Without `npm start`'s own npm variables: start.ts installs code-server with npm and runs code-server,
  // whose terminals would otherwise inherit them too.
  { cwd: root, stdio: 'inherit', env: npmChildEnv() },
);
// Ctrl+C reaches both processes through the terminal; a plain kill of this one is passed on.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code) => process.exit(code ?? 0));
