/**
 * CI-only (slow: installs Node 24 and code-server, about 2 minutes of CPU), run by .ci/run on every CI run
 * through `npm run test:setup`. It covers `npm start`'s first run on a fresh clone: the setup script started from
 * inside an npm script, whose npm variables name the outer Node 20, into an empty cache folder. That is
 * the README's first command; without the clean environment code-server's postinstall refuses Node 24.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codeServerInstall } from '../support/codeServerInstall';
import { REPO_ROOT } from '../support/demoWorkspace';

// What `npm start` run by the system npm on Node 20 hands down to its scripts (any value the child npm
// would wrongly adopt as its own).
const outerUserAgent = 'npm/10.8.2 node/v20.19.0 linux x64 workspaces/false';

describe('npm start setup path (fresh clone)', function () {
  this.timeout(30 * 60_000); // about 2 minutes on an idle machine; 14 under a heavily shared one
  let cache = '';

  before(() => {
    cache = mkdtempSync(join(tmpdir(), 'loopx-setup-cache-'));
  });
  after(() => {
    if (cache && !process.env['KEEP_TMP']) rmSync(cache, { recursive: true, force: true });
  });

  it('installs Node 24 and code-server when run from inside an npm script with an outer Node 20 npm', () => {
    const started = Date.now();
    // Deliberately the inherited (not cleaned) environment: this is the environment `npm start` gives it.
    const result = spawnSync('npm', ['run', '-s', 'setup:vscode-test'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: {
        ...process.env,
        npm_config_user_agent: outerUserAgent,
        npm_lifecycle_event: 'start',
        LOOPX_VSCODE_TEST_CACHE: cache,
      },
    });
    const output = `${result.stdout}\n${result.stderr}`;
    console.log(`      setup took ${((Date.now() - started) / 1000).toFixed(0)} s`);
    assert.equal(result.status, 0, `npm run setup:vscode-test failed:\n${output}`);
    assert.match(output, /installing code-server/, 'the cache folder was empty, so code-server must be installed');
    const install = codeServerInstall(cache);
    const codeServerVersion = install.version;
    assert.ok(existsSync(join(install.codeServerDir, `.complete-${codeServerVersion}`)), 'install marker missing');

    const nodeBin = join(install.nodeDir, 'node_modules', '.bin');
    const version = spawnSync(join(install.codeServerDir, 'node_modules', '.bin', 'code-server'), ['--version'], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${nodeBin}:${process.env['PATH'] ?? ''}` },
    });
    assert.equal(version.status, 0, `code-server --version failed:\n${version.stdout}\n${version.stderr}`);
    assert.match(version.stdout, new RegExp(`^${codeServerVersion.replace(/\./g, '\\.')}\\b`));
    const installed = JSON.parse(
      readFileSync(join(install.codeServerDir, 'node_modules', 'code-server', 'package.json'), 'utf8'),
    ) as { version: string };
    assert.equal(installed.version, codeServerVersion);
  });
});
