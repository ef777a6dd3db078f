// `npm run test:oldest-vscode`: the development integration suite on the oldest VS Code that
// package.json's engines.vscode admits, so an API newer than that minimum is caught where it is called
// unconditionally. code-server 4.X.Y ships VS Code 1.X.Y; it is installed beside the usual one, in its own
// folders of the test cache (scripts/setup-vscode-test.sh, test/support/codeServerInstall.ts).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { npmChildEnv } from './npm-env.cjs';

// code-server for engines.vscode's minor. Its postinstall requires Node 20 (npm's `engines` for it says 18).
// Raise both with engines.vscode: the check below fails until they match. `npm test` runs this as its
// oldest-vscode tier (scripts/test-all.mjs).
const OLDEST = { codeServer: '4.90.3', node: '20' };

const root = new URL('..', import.meta.url).pathname;
const { engines } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const minor = /^\^1\.(\d+)\.\d+$/.exec(engines.vscode)?.[1];
if (minor === undefined || OLDEST.codeServer.split('.')[1] !== minor) {
  console.error(
    `engines.vscode is ${engines.vscode}, but this tier runs code-server ${OLDEST.codeServer} (VS Code 1.${OLDEST.codeServer.split('.')[1]}): ` +
      `set OLDEST in scripts/test-oldest-vscode.mjs to a code-server 4.${minor ?? '?'}.x (npm view code-server versions) and the Node its postinstall asks for.`,
  );
  process.exit(1);
}

const env = npmChildEnv(process.env, {
  LOOPX_CODE_SERVER_VERSION: OLDEST.codeServer,
  LOOPX_CODE_SERVER_NODE: OLDEST.node,
});
function run(command, args, extra = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: { ...env, ...extra } });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const setup = join(root, 'scripts', 'setup-vscode-test.sh');
run('bash', [setup]);
// The host that runs must be the engine's minor, not the usual code-server.
const [nodeDir, codeServerDir] = spawnSync('bash', [setup, '--print-dirs'], { encoding: 'utf8', env })
  .stdout.trim()
  .split('\n');
const version = spawnSync(join(codeServerDir, 'node_modules', '.bin', 'code-server'), ['--version'], {
  encoding: 'utf8',
  env: { ...env, PATH: `${join(nodeDir, 'node_modules', '.bin')}:${env.PATH}` },
});
const code = /with Code (1\.(\d+)\.\d+)/.exec(version.stdout ?? '');
if (version.status !== 0 || code?.[2] !== minor) {
  console.error(
    `code-server ${OLDEST.codeServer} does not report VS Code 1.${minor}:\n${version.stdout}${version.stderr}`,
  );
  process.exit(1);
}
console.log(
  `[oldest-vscode] VS Code ${code[1]} (code-server ${OLDEST.codeServer}, Node ${OLDEST.node}); engines.vscode ${engines.vscode}`,
);
run('npm', ['run', '-s', 'test:integration'], { LOOPX_IT_ONLY: 'development' });
