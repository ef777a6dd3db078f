import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { codeServerInstall } from '../../support/codeServerInstall';
import { REPO_ROOT } from '../../support/demoWorkspace';

/** The folders scripts/setup-vscode-test.sh installs into, for this environment. */
function setupScriptDirs(env: NodeJS.ProcessEnv): { nodeDir: string; codeServerDir: string } {
  const result = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'setup-vscode-test.sh'), '--print-dirs'], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', ...env },
  });
  assert.equal(result.status, 0, result.stderr);
  const [nodeDir, codeServerDir] = result.stdout.trim().split('\n');
  return { nodeDir: nodeDir ?? '', codeServerDir: codeServerDir ?? '' };
}

describe('code-server install folders: the setup script and the test host agree', () => {
  const cache = '/tmp/loopx-cache';
  const cases: NodeJS.ProcessEnv[] = [
    {},
    { LOOPX_CODE_SERVER_VERSION: '4.90.3', LOOPX_CODE_SERVER_NODE: '20' },
    { LOOPX_CODE_SERVER_NODE: '22' },
  ];
  for (const env of cases) {
    it(`names the same folders for ${JSON.stringify(env)}`, () => {
      const expected = codeServerInstall(cache, env);
      assert.deepEqual(setupScriptDirs({ ...env, LOOPX_VSCODE_TEST_CACHE: cache }), {
        nodeDir: expected.nodeDir,
        codeServerDir: expected.codeServerDir,
      });
    });
  }

  it('keeps the default folders for the default pair and gives any other version its own', () => {
    assert.deepEqual(codeServerInstall(cache, {}), {
      version: '4.139.1',
      nodeMajor: '24',
      nodeDir: join(cache, 'node'),
      codeServerDir: join(cache, 'code-server'),
    });
    const oldest = codeServerInstall(cache, { LOOPX_CODE_SERVER_VERSION: '4.90.3', LOOPX_CODE_SERVER_NODE: '20' });
    assert.equal(oldest.codeServerDir, join(cache, 'code-server-4.90.3'));
    assert.equal(oldest.nodeDir, join(cache, 'node-20'));
  });

  it('refuses a Node version that is not a major number', () => {
    const result = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'setup-vscode-test.sh'), '--print-dirs'], {
      encoding: 'utf8',
      env: { PATH: process.env['PATH'] ?? '', LOOPX_CODE_SERVER_NODE: 'v20' },
    });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /LOOPX_CODE_SERVER_NODE must be a Node major version/);
  });
});
