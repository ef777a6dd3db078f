import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { npmChildEnv } from '../../scripts/npm-env.cjs';
import { REPO_ROOT } from '../support/demoWorkspace';

// What `npm run` hands a script (trimmed from a real `npm run env`), plus variables of the user's own.
const outer: NodeJS.ProcessEnv = {
  PATH: '/repo/node_modules/.bin:/usr/bin:/bin',
  HOME: '/home/user',
  LOOPX_VSCODE_TEST_CACHE: '/tmp/cache',
  node_env: 'kept (not npm)',
  NODE_OPTIONS: '--max-old-space-size=4096',
  npm_config_user_agent: 'npm/10.8.2 node/v20.19.0 linux x64 workspaces/false',
  NPM_CONFIG_USER_AGENT: 'npm/10.8.2 node/v20.19.0 linux x64 workspaces/false',
  npm_config_local_prefix: '/repo',
  npm_config_global_prefix: '/usr',
  npm_config_node_gyp: '/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js',
  npm_config_npm_version: '10.8.2',
  npm_config_nodedir: '/usr',
  'npm_config_allow-scripts': '',
  npm_lifecycle_event: 'start',
  npm_lifecycle_script: 'node scripts/start.mjs',
  npm_package_name: 'loopx-vscode',
  npm_package_json: '/repo/package.json',
  npm_execpath: '/usr/lib/node_modules/npm/bin/npm-cli.js',
  npm_node_execpath: '/usr/bin/node',
  npm_command: 'run-script',
  INIT_CWD: '/repo',
  NODE: '/usr/bin/node',
  // Registry settings a user may export on purpose; a child npm needs them to reach the registry.
  npm_config_registry: 'https://mirror.example/',
  NPM_CONFIG_HTTPS_PROXY: 'http://proxy.example:3128',
  npm_config_noproxy: 'localhost',
  npm_config_cafile: '/etc/ssl/certs/ca-certificates.crt',
  'npm_config_strict-ssl': 'true',
  // npm's download cache as npm run resolved it (the user's setting, else ~/.npm).
  npm_config_cache: '/ci/npm-cache',
};
const kept = [
  'PATH',
  'HOME',
  'LOOPX_VSCODE_TEST_CACHE',
  'node_env',
  'NODE_OPTIONS',
  'npm_config_registry',
  'NPM_CONFIG_HTTPS_PROXY',
  'npm_config_noproxy',
  'npm_config_cafile',
  'npm_config_strict-ssl',
  'npm_config_cache',
];

describe('npm child environment', () => {
  it('drops the outer npm run variables and keeps the rest', () => {
    const env = npmChildEnv(outer);
    assert.deepEqual(Object.keys(env).sort(), [...kept].sort());
    for (const name of kept) assert.equal(env[name], outer[name], name);
    assert.equal(outer['npm_config_user_agent'] !== undefined, true, 'the input is not modified');
  });

  it('adds the extra variables after cleaning', () => {
    const env = npmChildEnv(outer, { LOOPX_TEST_SUMMARY: '/tmp/s.json', PATH: '/x' });
    assert.equal(env['LOOPX_TEST_SUMMARY'], '/tmp/s.json');
    assert.equal(env['PATH'], '/x');
    assert.equal(env['npm_lifecycle_event'], undefined);
  });

  it('scripts/setup-vscode-test.sh cleans its environment by the same rule before any npm runs', () => {
    // Names only bash can export (it cannot hold "-" in a variable name: those are left to the JS test).
    const shellOuter = Object.fromEntries(
      Object.entries(outer).filter(([name]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)),
    );
    const result = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'setup-vscode-test.sh'), '--print-env'], {
      encoding: 'utf8',
      env: { ...shellOuter, PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    });
    assert.equal(result.status, 0, result.stderr);
    const printed = new Set(result.stdout.split('\n').map((line) => line.split('=')[0]));
    for (const name of Object.keys(shellOuter)) {
      assert.equal(printed.has(name), name in npmChildEnv(shellOuter), `${name} in the script's environment`);
    }
  });
});
