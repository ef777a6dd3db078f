import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runLoopx } from '../cli/run';
import { connectedProject, goalOf, readJson, tempDir } from './helpers';

/**
 * `register-agent` goes through the global registry, as the original does: the goal is looked up in
 * `<HOME>/.codex/loopx/registry.global.json` (or the one under `--runtime-root`), its `source_registry`
 * is written and the goal synced back. `--registry` does not choose the registry written; only
 * `--project-registry` does.
 */

/** A project whose goal `g` is mirrored into a global registry under a fresh HOME. */
function globalSetup(globalGoal: (registry: string) => Record<string, unknown> | null) {
  const { project, registry } = connectedProject({ coordination: { registered_agents: ['codex-a'] } });
  const home = tempDir();
  const globalPath = path.join(home, '.codex', 'loopx', 'registry.global.json');
  const entry = globalGoal(registry);
  if (entry !== null) {
    fs.mkdirSync(path.dirname(globalPath), { recursive: true });
    fs.writeFileSync(
      globalPath,
      `${JSON.stringify({ schema_version: '0.1', registry_role: 'global-local', goals: [entry] }, null, 2)}\n`,
    );
  }
  return { project, registry, home, globalPath };
}

const mirrored = (registry: string) => ({
  ...goalOf(registry),
  source_registry: registry,
  synced_at: '2026-01-01T00:00:00+00:00',
});

async function register(
  setup: { registry: string; home: string },
  extra: string[],
  global: string[] = [],
): Promise<Awaited<ReturnType<typeof runLoopx>>> {
  return runLoopx(
    [
      '--registry',
      setup.registry,
      ...global,
      '--format',
      'json',
      'register-agent',
      '--goal-id',
      'g',
      '--agent-id',
      'codex-b',
      ...extra,
    ],
    { env: { HOME: setup.home } },
  );
}

function agentsIn(file: string): unknown {
  return (goalOf(file)['coordination'] as Record<string, unknown> | undefined)?.['registered_agents'];
}

describe('register-agent through the global registry', () => {
  it('without a global registry: exit 1 with the original text, the failure fields, nothing written', async () => {
    const setup = globalSetup(() => null);
    const before = fs.readFileSync(setup.registry, 'utf8');
    const run = await register(setup, ['--execute']);
    assert.equal(run.code, 1);
    const json = run.json();
    assert.ok(
      String(json['error']).startsWith(`global registry does not exist: ${setup.globalPath}`),
      String(json['error']),
    );
    assert.equal(json['error_code'], 'global_registry_not_found');
    assert.deepEqual([json['ok'], json['dry_run'], json['changed'], json['written']], [false, false, false, false]);
    assert.equal(fs.readFileSync(setup.registry, 'utf8'), before);
    assert.equal(fs.existsSync(setup.globalPath), false);
  });

  it('a goal missing from the global registry, or its entry without source_registry, is refused with exit 1', async () => {
    const other = globalSetup((registry) => ({ ...mirrored(registry), id: 'other-goal' }));
    const missing = await register(other, []);
    assert.equal(missing.code, 1);
    assert.ok(String(missing.json()['error']).startsWith('goal_id not found in global registry: g'));
    assert.equal(missing.json()['error_code'], 'goal_not_found');

    const unsourced = globalSetup((registry) => {
      const entry: Record<string, unknown> = mirrored(registry);
      delete entry['source_registry'];
      return entry;
    });
    const before = fs.readFileSync(unsourced.registry, 'utf8');
    const run = await register(unsourced, ['--execute']);
    assert.equal(run.code, 1);
    assert.ok(
      String(run.json()['error']).startsWith(
        'g: global registry entry has no source_registry; use configure-goal with an explicit --registry instead of connect',
      ),
    );
    assert.equal(run.json()['error_code'], 'source_registry_missing');
    assert.equal(fs.readFileSync(unsourced.registry, 'utf8'), before);
  });

  it('previews without writing; executes into the source registry and syncs the goal back', async () => {
    const setup = globalSetup(mirrored);
    const globalBefore = fs.readFileSync(setup.globalPath, 'utf8');
    const preview = await register(setup, []);
    assert.equal(preview.code, 0, preview.stdout);
    assert.deepEqual(
      [preview.json()['dry_run'], preview.json()['changed'], preview.json()['written']],
      [true, true, false],
    );
    assert.deepEqual(agentsIn(setup.registry), ['codex-a']);
    assert.equal(fs.readFileSync(setup.globalPath, 'utf8'), globalBefore);

    const run = await register(setup, ['--execute']);
    assert.equal(run.code, 0, run.stdout);
    const json = run.json();
    assert.deepEqual([json['ok'], json['changed'], json['written'], json['verified']], [true, true, true, true]);
    assert.equal(json['source_registry'], setup.registry);
    assert.equal(json['global_registry'], setup.globalPath);
    assert.deepEqual(json['global_sync'], { enabled: true, wrote: true, action: 'updated' });
    assert.deepEqual(json['registration_readback'], {
      verified: true,
      registered_agents: ['codex-a', 'codex-b'],
      global_registered_agents: ['codex-a', 'codex-b'],
    });
    assert.deepEqual(agentsIn(setup.registry), ['codex-a', 'codex-b']);
    assert.deepEqual(agentsIn(setup.globalPath), ['codex-a', 'codex-b']);
    assert.equal(readJson(setup.globalPath)['registry_role'], 'global-local');
  });

  it('writes the registry the global entry names, not the one --registry points at', async () => {
    const setup = globalSetup(mirrored);
    const decoy = connectedProject({ coordination: { registered_agents: ['codex-a'] } });
    const decoyBefore = fs.readFileSync(decoy.registry, 'utf8');
    const run = await register({ registry: decoy.registry, home: setup.home }, ['--execute']);
    assert.equal(run.code, 0, run.stdout);
    assert.deepEqual(agentsIn(setup.registry), ['codex-a', 'codex-b']);
    assert.equal(fs.readFileSync(decoy.registry, 'utf8'), decoyBefore);
  });

  it('--runtime-root chooses the global registry (never the project registry common_runtime_root)', async () => {
    const setup = globalSetup(() => null);
    const runtimeRoot = tempDir();
    const globalPath = path.join(runtimeRoot, 'registry.global.json');
    fs.writeFileSync(globalPath, JSON.stringify({ schema_version: '0.1', goals: [mirrored(setup.registry)] }));
    const run = await register(setup, ['--execute'], ['--runtime-root', runtimeRoot]);
    assert.equal(run.code, 0, run.stdout);
    assert.deepEqual(agentsIn(setup.registry), ['codex-a', 'codex-b']);
    assert.deepEqual(agentsIn(globalPath), ['codex-a', 'codex-b']);
  });

  it('--project-registry writes the located registry and syncs a global entry that comes from it', async () => {
    const setup = globalSetup(mirrored);
    const run = await register(setup, ['--project-registry', '--execute']);
    assert.equal(run.code, 0, run.stdout);
    assert.deepEqual(run.json()['global_sync'], { enabled: true, wrote: true, action: 'updated' });
    assert.deepEqual(agentsIn(setup.globalPath), ['codex-a', 'codex-b']);

    // A global entry synced from another project is left alone.
    const elsewhere = globalSetup((registry) => ({
      ...mirrored(registry),
      source_registry: '/elsewhere/registry.json',
    }));
    const globalBefore = fs.readFileSync(elsewhere.globalPath, 'utf8');
    const other = await register(elsewhere, ['--project-registry', '--execute']);
    assert.equal(other.code, 0, other.stdout);
    assert.equal(other.json()['global_registry'], null);
    assert.deepEqual(agentsIn(elsewhere.registry), ['codex-a', 'codex-b']);
    assert.equal(fs.readFileSync(elsewhere.globalPath, 'utf8'), globalBefore);
  });

  it('configure-goal --execute syncs the goal into the global entry that comes from its registry (the new quota there)', async () => {
    const configure = (setup: { registry: string; home: string }, extra: string[]) =>
      runLoopx(['--registry', setup.registry, '--format', 'json', 'configure-goal', '--goal-id', 'g', ...extra], {
        env: { HOME: setup.home },
      });
    const setup = globalSetup(mirrored);
    const preview = await configure(setup, ['--quota-compute', '0.5', '--quota-window-hours', '12']);
    assert.equal(preview.code, 0, preview.stdout);
    assert.equal(goalOf(setup.globalPath)['quota'], undefined, 'a preview writes nothing');
    const run = await configure(setup, ['--quota-compute', '0.5', '--quota-window-hours', '12', '--execute']);
    assert.equal(run.code, 0, run.stdout);
    assert.deepEqual(run.json()['global_sync'], { enabled: true, wrote: true, global_registry: setup.globalPath });
    assert.deepEqual(goalOf(setup.globalPath)['quota'], goalOf(setup.registry)['quota']);
    assert.deepEqual(goalOf(setup.globalPath)['quota'], { compute: 0.5, window_hours: 12 });

    // A global entry synced from another project is left alone.
    const elsewhere = globalSetup((registry) => ({
      ...mirrored(registry),
      source_registry: '/elsewhere/registry.json',
    }));
    const globalBefore = fs.readFileSync(elsewhere.globalPath, 'utf8');
    const other = await configure(elsewhere, ['--quota-compute', '0.5', '--execute']);
    assert.equal(other.code, 0, other.stdout);
    assert.deepEqual(other.json()['global_sync'], { enabled: false, wrote: false, global_registry: null });
    assert.equal(fs.readFileSync(elsewhere.globalPath, 'utf8'), globalBefore);

    // Without a global registry nothing is created.
    const none = globalSetup(() => null);
    const alone = await configure(none, ['--quota-compute', '0.5', '--execute']);
    assert.equal(alone.code, 0, alone.stdout);
    assert.deepEqual(alone.json()['global_sync'], { enabled: false, wrote: false, global_registry: null });
    assert.equal(fs.existsSync(none.globalPath), false);
  });
});
