import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  expandHome,
  locateRegistry,
  registryProjectRoot,
  resolveRuntimeRoot,
  resolveStateFile,
} from '../../../src/core/registry/locate';
import { tempDir, writeJson } from './helpers';

const HOME = '/home/tester';

describe('registry location', () => {
  it('case 21: resolves the runtime root', () => {
    assert.equal(resolveRuntimeRoot({ registry: {}, homeDir: HOME }), '/home/tester/.codex/loopx');
    assert.equal(
      resolveRuntimeRoot({
        registry: { common_runtime_root: './runtime' },
        registryPath: '/x/proj/.loopx/registry.json',
        homeDir: HOME,
      }),
      '/x/proj/runtime',
    );
    assert.equal(
      resolveRuntimeRoot({
        registry: { common_runtime_root: 'rt' },
        registryPath: '/x/examples/registry.example.json',
        homeDir: HOME,
      }),
      '/x/examples/rt',
    );
    assert.equal(resolveRuntimeRoot({ registry: { common_runtime_root: './runtime' }, homeDir: HOME }), 'runtime');
    assert.equal(
      resolveRuntimeRoot({ registry: { common_runtime_root: '/abs' }, override: '', homeDir: HOME }),
      '/abs',
    );
    assert.equal(
      resolveRuntimeRoot({
        registry: { common_runtime_root: '/abs' },
        override: 'rel-override',
        registryPath: '/x/proj/.loopx/registry.json',
        homeDir: HOME,
      }),
      '/x/proj/rel-override',
    );
    assert.equal(resolveRuntimeRoot({ registry: { common_runtime_root: '~/rt' }, homeDir: HOME }), '/home/tester/rt');
  });

  it('anchors a relative runtime root to the registry project for every caller (fix of §13.3)', () => {
    // The original left it relative to the current directory for archive-runtime and sync-global.
    assert.equal(
      resolveRuntimeRoot({
        registry: { common_runtime_root: '.loopx/runtime' },
        registryPath: '/x/proj/.loopx/registry.json',
        homeDir: HOME,
        cwd: '/elsewhere',
      }),
      '/x/proj/.loopx/runtime',
    );
    assert.equal(
      resolveRuntimeRoot({ registry: { common_runtime_root: 'rt' }, homeDir: HOME, cwd: '/elsewhere' }),
      '/elsewhere/rt',
    );
  });

  it('finds the registry project root through symlinks', () => {
    const dir = tempDir();
    const project = path.join(dir, 'project');
    writeJson(path.join(project, '.loopx', 'registry.json'), {});
    fs.symlinkSync(path.join(project, '.loopx', 'registry.json'), path.join(dir, 'linked.json'));
    assert.equal(registryProjectRoot(path.join(dir, 'linked.json')), project);
    assert.equal(registryProjectRoot(path.join(project, '.loopx', 'registry.json')), project);
    assert.equal(registryProjectRoot(path.join(dir, 'other', 'reg.json')), path.join(dir, 'other'));
  });

  it('locates the registry by flag, then LOOPX_REGISTRY, then ./.loopx/registry.json, then the global file', () => {
    const dir = tempDir();
    const home = path.join(dir, 'home');
    const cwd = path.join(dir, 'work');
    fs.mkdirSync(cwd, { recursive: true });

    assert.deepEqual(locateRegistry({ flag: 'r.json', env: { LOOPX_REGISTRY: '/e.json' }, cwd, homeDir: home }), {
      path: path.join(cwd, 'r.json'),
      source: 'flag',
      exists: false,
    });
    assert.deepEqual(locateRegistry({ env: { LOOPX_REGISTRY: '~/e.json' }, cwd, homeDir: home }), {
      path: path.join(home, 'e.json'),
      source: 'env',
      exists: false,
    });
    assert.deepEqual(locateRegistry({ env: { LOOPX_REGISTRY: '  ' }, cwd, homeDir: home }), {
      path: path.join(cwd, '.loopx', 'registry.json'),
      source: 'cwd',
      exists: false,
    });

    const globalFile = path.join(home, '.codex', 'loopx', 'registry.global.json');
    writeJson(globalFile, { registry_role: 'global-local' });
    assert.deepEqual(locateRegistry({ env: {}, cwd, homeDir: home }), {
      path: globalFile,
      source: 'global',
      exists: true,
    });
    assert.equal(locateRegistry({ env: {}, cwd, homeDir: home, globalFallback: false }).source, 'cwd');
    const overridden = path.join(dir, 'rt', 'registry.global.json');
    writeJson(overridden, {});
    assert.equal(locateRegistry({ env: {}, cwd, homeDir: home, runtimeRootOverride: '../rt' }).path, overridden);

    writeJson(path.join(cwd, '.loopx', 'registry.json'), {});
    assert.deepEqual(locateRegistry({ env: {}, cwd, homeDir: home }), {
      path: path.join(cwd, '.loopx', 'registry.json'),
      source: 'cwd',
      exists: true,
    });
  });

  it('resolves state files against the repo, with ~ expanded, and none for an empty value', () => {
    assert.equal(
      resolveStateFile({ repo: '/p', state_file: '.codex/goals/g/ACTIVE_GOAL_STATE.md' }, HOME),
      '/p/.codex/goals/g/ACTIVE_GOAL_STATE.md',
    );
    assert.equal(resolveStateFile({ repo: '~/p', state_file: './s.md' }, HOME), '/home/tester/p/s.md');
    assert.equal(resolveStateFile({ repo: '/p', state_file: '~/s.md' }, HOME), '/home/tester/s.md');
    assert.equal(resolveStateFile({ repo: '/p', state_file: '' }, HOME), null);
    assert.equal(resolveStateFile({ state_file: 'rel.md' }, HOME), null);
  });

  it('expands only a leading ~', () => {
    assert.equal(expandHome('~', HOME), HOME);
    assert.equal(expandHome('~/a', HOME), '/home/tester/a');
    assert.equal(expandHome('a/~/b', HOME), 'a/~/b');
    assert.equal(expandHome('~other/x', HOME), '~other/x');
  });
});
