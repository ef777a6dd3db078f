import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { isLoopxError } from '../../../src/core/errors';
import { withFileLock } from '../../../src/core/fs/fileLock';
import { mergeGlobalRegistry } from '../../../src/core/globalRegistry/merge';
import { projectGoalForGlobal } from '../../../src/core/globalRegistry/project';
import { syncGlobalRegistry, type SyncGlobalOptions } from '../../../src/core/globalRegistry/sync';
import { runLoopx } from '../cli/run';
import { expectSuccess, startTogether, startWorker } from '../../support/barrier';
import { tempDir } from '../../support/tempDir';

const FIXTURES = path.join(__dirname, 'fixtures');

function writeJson(file: string, value: unknown): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
  return file;
}

function readJson(file: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
}

function goalIds(registry: Record<string, unknown>): string[] {
  return (registry['goals'] as Record<string, unknown>[]).map((goal) => String(goal['id']));
}

function goalById(registry: Record<string, unknown>, id: string): Record<string, unknown> {
  const goal = (registry['goals'] as Record<string, unknown>[]).find((entry) => entry['id'] === id);
  assert.ok(goal, `goal ${id} missing`);
  return goal;
}

/** A project folder with `.loopx/registry.json` holding the given goals (repo defaults to the folder). */
function makeProject(
  root: string,
  name: string,
  goals: Record<string, unknown>[],
  projects: Record<string, unknown>[] = [],
): string {
  const dir = path.join(root, name);
  return writeJson(path.join(dir, '.loopx', 'registry.json'), {
    schema_version: '0.1',
    goals: goals.map((goal) => ({
      repo: dir,
      state_file: `.codex/goals/${String(goal['id'])}/ACTIVE_GOAL_STATE.md`,
      domain: 'd',
      ...goal,
    })),
    projects,
  });
}

function options(
  projectRegistryPath: string,
  globalRegistryPath: string,
  extra: Partial<SyncGlobalOptions> = {},
): SyncGlobalOptions {
  return {
    projectRegistryPath,
    globalRegistryPath,
    allowRouteReplacement: false,
    dryRun: false,
    clock: fixedClock('2026-01-15T10:00:00Z'),
    ...extra,
  };
}

/** A fixture script as a real process; the root after-each hook kills it if a failed assertion left it waiting. */
async function runTsx(script: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  const worker = startWorker(path.join(FIXTURES, script), args);
  const code = await worker.exited;
  return { code: typeof code === 'number' ? code : null, stderr: worker.stderr() };
}

async function waitForFile(file: string): Promise<void> {
  while (!fs.existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('global registry sync', () => {
  it("projects a goal as the original's sanitize_goal_for_global: authority data as its counts, in its key order", () => {
    const goal = {
      id: 'g',
      authority_sources: [{ source_ref: 'x' }],
      authority_registry: {
        path: 'a.json',
        topic_authority: { t: 1 },
        default_entry_docs: ['e1', 'e2'],
        owner: 'name',
      },
      quota: { compute: 1 },
    };
    const before = structuredClone(goal);
    const projected = projectGoalForGlobal(goal, {
      sourceRegistry: '/p/.loopx/registry.json',
      syncedAt: '2026-01-15T10:00:00Z',
    });
    assert.deepEqual(goal, before);
    const empty = {
      declared: false,
      required: false,
      path: null,
      path_exists: null,
      read_status: null,
      default_entry_count: 0,
      default_entries_checked: 0,
      default_entries_present: 0,
      topic_authority_count: 0,
      project_material_count: 0,
      project_material_repository_count: 0,
      project_material_owner_review_required_count: 0,
      project_material_stale_count: 0,
      project_material_current_authority_count: 0,
      deprecated_source_count: 0,
      conflict_risk: 'unknown',
    };
    // No repo: nothing is checked on disk; the names (`owner`, the documents, the topics) stay in the project.
    assert.deepEqual(projected, {
      id: 'g',
      quota: { compute: 1 },
      source_registry: '/p/.loopx/registry.json',
      synced_at: '2026-01-15T10:00:00Z',
      authority_source_count: 1,
      authority_registry: {
        ...empty,
        declared: true,
        path: 'a.json',
        default_entry_count: 2,
        topic_authority_count: 1,
      },
    });
    assert.deepEqual(Object.keys(projected), [
      'id',
      'quota',
      'source_registry',
      'synced_at',
      'authority_source_count',
      'authority_registry',
    ]);
    assert.deepEqual(Object.keys(projected['authority_registry'] as object), Object.keys(empty));
    // A goal without authority data gets the original's empty summary; a projected entry projects to itself.
    const bare = projectGoalForGlobal({ id: 'h' }, { sourceRegistry: '/p/r.json', syncedAt: 't' });
    assert.deepEqual(bare, {
      id: 'h',
      source_registry: '/p/r.json',
      synced_at: 't',
      authority_source_count: 0,
      authority_registry: empty,
    });
    assert.deepEqual(projectGoalForGlobal(bare, { sourceRegistry: '/p/r.json', syncedAt: 't' }), bare);
  });

  it('case 34: sync a, b, a gives added, added, updated; re-synced goals move to the end; authority is counted', async () => {
    const root = tempDir();
    const project = makeProject(root, 'proj', [
      { id: 'goal-a', authority_sources: [{ kind: 'doc' }, { kind: 'doc' }] },
      { id: 'goal-b' },
    ]);
    const globalPath = path.join(root, 'rt', 'registry.global.json');
    const first = await syncGlobalRegistry(options(project, globalPath, { goalIds: ['goal-a'] }));
    const second = await syncGlobalRegistry(options(project, globalPath, { goalIds: ['goal-b'] }));
    const third = await syncGlobalRegistry(options(project, globalPath, { goalIds: ['goal-a'] }));
    assert.deepEqual(
      [...first.actions, ...second.actions, ...third.actions],
      ['goal-a:added', 'goal-b:added', 'goal-a:updated'],
    );
    const global = readJson(globalPath);
    assert.deepEqual(goalIds(global), ['goal-b', 'goal-a']);
    const goalA = goalById(global, 'goal-a');
    assert.equal(goalA['authority_source_count'], 2);
    assert.equal('authority_sources' in goalA, false);
    assert.equal(goalA['source_registry'], project);
    assert.equal(goalA['synced_at'], '2026-01-15T10:00:00Z');
    assert.equal(global['registry_role'], 'global-local');
    assert.equal(global['common_runtime_root'], path.join(root, 'rt'));
    assert.equal(global['updated_at'], '2026-01-15T10:00:00Z');
    assert.equal(third.written, true);
    assert.equal(third.backup_path, null);
  });

  it('case 35: another project claiming a goal id is a route collision; replacement writes a backup first', async () => {
    const root = tempDir();
    const globalPath = path.join(root, 'rt', 'registry.global.json');
    const owner = makeProject(root, 'owner', [{ id: 'goal-a' }]);
    const claimant = makeProject(root, 'claimant', [{ id: 'goal-a' }]);
    await syncGlobalRegistry(options(owner, globalPath));
    const before = fs.readFileSync(globalPath, 'utf8');

    await assert.rejects(syncGlobalRegistry(options(claimant, globalPath)), (error: unknown) => {
      assert.ok(isLoopxError(error, 'global_route_collision'));
      assert.match(error.message, /^global route collision for goal_id goal-a: source_registry, repo would change\. /);
      assert.match(error.message, /--allow-route-replacement/);
      return true;
    });
    assert.equal(fs.readFileSync(globalPath, 'utf8'), before, 'a refused sync writes nothing');

    const replaced = await syncGlobalRegistry(options(claimant, globalPath, { allowRouteReplacement: true }));
    assert.deepEqual(replaced.actions, ['goal-a:replaced-route']);
    assert.deepEqual(replaced.goals[0]?.route_changes, ['source_registry', 'repo']);
    assert.equal(replaced.backup_path, `${globalPath}.route-collision-backup-20260115T100000Z.bak`);
    assert.equal(fs.readFileSync(replaced.backup_path, 'utf8'), before);
    assert.equal(goalById(readJson(globalPath), 'goal-a')['repo'], path.join(root, 'claimant'));
  });

  it('attention fields survive a re-sync from a newly recorded source, unless the goal clears them, but never a route replacement', () => {
    const current = { goals: [{ id: 'g', repo: '/r', waiting_on: 'owner', operator_question: 'ship it?' }] };
    const mergeOptions = { allowRouteReplacement: true, runtimeRoot: '/rt', updatedAt: 't' };
    const carried = mergeGlobalRegistry(
      current,
      [{ id: 'g', repo: '/r', source_registry: '/p/r.json', waiting_on: '' }],
      [],
      mergeOptions,
    );
    assert.deepEqual(carried.goals[0]?.attention_carried, ['waiting_on', 'operator_question']);
    assert.equal((carried.registry['goals'] as Record<string, unknown>[])[0]?.['waiting_on'], 'owner');
    const cleared = mergeGlobalRegistry(
      current,
      [{ id: 'g', repo: '/r', source_registry: '/p/r.json', clear_attention_override: true }],
      [],
      mergeOptions,
    );
    assert.deepEqual(cleared.goals[0]?.attention_carried, []);
    const replaced = mergeGlobalRegistry(
      current,
      [{ id: 'g', repo: '/other', source_registry: '/p/r.json' }],
      [],
      mergeOptions,
    );
    assert.equal(replaced.goals[0]?.action, 'replaced-route');
    assert.deepEqual(replaced.goals[0]?.attention_carried, []);
  });

  it('keeps unknown top-level fields, non-synced goals in place, and merges project records by id', () => {
    const current = {
      schema_version: '0.1',
      custom: { keep: true },
      goals: [{ id: 'x' }, 'junk', { id: 'g', repo: '/r' }, { id: 'y' }],
      projects: [{ project_id: 'p1', v: 1 }, { project_id: 'p0' }],
    };
    const merged = mergeGlobalRegistry(
      current,
      [{ id: 'g', repo: '/r' }],
      [{ project_id: 'p1', v: 2 }, { project_id: 'p2' }],
      { allowRouteReplacement: false, runtimeRoot: '/rt', updatedAt: 't' },
    );
    assert.deepEqual(merged.registry['custom'], { keep: true });
    assert.deepEqual(merged.registry['goals'], [{ id: 'x' }, 'junk', { id: 'y' }, { id: 'g', repo: '/r' }]);
    assert.deepEqual(merged.registry['projects'], [
      { project_id: 'p1', v: 2 },
      { project_id: 'p0' },
      { project_id: 'p2' },
    ]);
    assert.deepEqual(merged.projects, [
      { project_id: 'p1', action: 'updated' },
      { project_id: 'p2', action: 'added' },
    ]);
    assert.deepEqual(current.projects[0], { project_id: 'p1', v: 1 }, 'the current registry is not modified');
  });

  it('refuses to overwrite a global registry it cannot parse, and reports unknown goal ids', async () => {
    const root = tempDir();
    const project = makeProject(root, 'proj', [{ id: 'goal-a' }]);
    const globalPath = path.join(root, 'rt', 'registry.global.json');
    fs.mkdirSync(path.dirname(globalPath), { recursive: true });
    fs.writeFileSync(globalPath, '{ "goals": [ broken');
    await assert.rejects(syncGlobalRegistry(options(project, globalPath)), (error: unknown) =>
      isLoopxError(error, 'registry_invalid_json'),
    );
    assert.equal(fs.readFileSync(globalPath, 'utf8'), '{ "goals": [ broken');
    await assert.rejects(
      syncGlobalRegistry(options(project, path.join(root, 'rt2', 'registry.global.json'), { goalIds: ['nope'] })),
      (error: unknown) => isLoopxError(error, 'goal_not_found'),
    );
  });

  describe('case 38: one lock hold, concurrent writers, dry runs', () => {
    it('a dry run takes no lock and writes nothing; a real sync waits for the lock', async () => {
      const root = tempDir();
      const project = makeProject(root, 'proj', [{ id: 'goal-a' }]);
      const globalPath = path.join(root, 'rt', 'registry.global.json');
      await withFileLock(globalPath, { agentId: 'test', operation: 'hold' }, async () => {
        const preview = await syncGlobalRegistry(options(project, globalPath, { dryRun: true }));
        assert.deepEqual(preview.actions, ['goal-a:added']);
        assert.equal(preview.written, false);
        assert.equal(preview.changed, true);
      });
      assert.equal(fs.existsSync(globalPath), false);

      const ready = path.join(root, 'ready');
      const go = path.join(root, 'go');
      const holder = runTsx('lockHolder.ts', [globalPath, ready, go, 'held-goal']);
      await waitForFile(ready);
      await assert.rejects(
        syncGlobalRegistry(options(project, globalPath, { lock: { timeoutMs: 150 } })),
        (error: unknown) => isLoopxError(error, 'lock_acquire_timeout'),
      );
      fs.writeFileSync(go, '');
      assert.equal((await holder).code, 0);
    });

    it('a goal committed by another process between the preview and the write survives', async () => {
      const root = tempDir();
      const project = makeProject(root, 'proj', [{ id: 'goal-a' }]);
      const globalPath = path.join(root, 'rt', 'registry.global.json');
      writeJson(globalPath, { registry_role: 'global-local', goals: [{ id: 'old' }] });
      const ready = path.join(root, 'ready');
      const go = path.join(root, 'go');
      const holder = runTsx('lockHolder.ts', [globalPath, ready, go, 'committed-meanwhile']);
      await waitForFile(ready);
      const preview = await syncGlobalRegistry(options(project, globalPath, { dryRun: true }));
      assert.equal(preview.global_goal_count, 2, 'the preview does not know the concurrent goal yet');
      const sync = syncGlobalRegistry(options(project, globalPath, { lock: { timeoutMs: 20_000 } }));
      // Let the sync start waiting for the lock, then let the holder commit its goal and release.
      await new Promise((resolve) => setTimeout(resolve, 300));
      fs.writeFileSync(go, '');
      const result = await sync;
      assert.equal((await holder).code, 0);
      assert.deepEqual(goalIds(readJson(globalPath)), ['old', 'committed-meanwhile', 'goal-a']);
      assert.equal(result.global_goal_count, 3);
    });

    it('6 processes x 3 syncs keep all 6 goals and projects', async function () {
      this.timeout(120_000);
      const root = tempDir();
      const globalPath = path.join(root, 'rt', 'registry.global.json');
      const projects = Array.from({ length: 6 }, (_, index) =>
        makeProject(
          root,
          `proj-${index}`,
          [{ id: `goal-${index}`, project_id: `project-${index}` }],
          [{ project_id: `project-${index}`, project_kind: 'code' }],
        ),
      );
      const workers = await startTogether(
        projects.map((project) => ({ script: path.join(FIXTURES, 'syncWorker.ts'), args: [project, globalPath, '3'] })),
      );
      await Promise.all(workers.map(expectSuccess));
      const global = readJson(globalPath);
      assert.deepEqual(goalIds(global).sort(), ['goal-0', 'goal-1', 'goal-2', 'goal-3', 'goal-4', 'goal-5']);
      assert.deepEqual((global['projects'] as Record<string, unknown>[]).map((p) => p['project_id']).sort(), [
        'project-0',
        'project-1',
        'project-2',
        'project-3',
        'project-4',
        'project-5',
      ]);
      assert.equal(global['registry_role'], 'global-local');
    });
  });

  it('loopx sync-global syncs into <runtime root>/registry.global.json, previews with --dry-run, and exits 1 on a collision', async () => {
    const root = tempDir();
    const projectDir = path.join(root, 'proj');
    writeJson(path.join(projectDir, '.loopx', 'registry.json'), {
      common_runtime_root: './runtime',
      goals: [
        { id: 'goal-a', repo: projectDir },
        { id: 'goal-b', repo: projectDir },
      ],
    });
    const dry = await runLoopx(['--format', 'json', 'sync-global', '--dry-run'], { cwd: projectDir });
    assert.equal(dry.code, 0);
    assert.deepEqual(dry.json()['actions'], ['goal-a:added', 'goal-b:added']);
    const globalPath = path.join(projectDir, 'runtime', 'registry.global.json');
    assert.equal(fs.existsSync(globalPath), false);

    const real = await runLoopx(['sync-global', '--goal-id', 'goal-b'], { cwd: projectDir });
    assert.equal(real.code, 0, real.stderr);
    assert.match(real.stdout, /# LoopX global sync/);
    assert.match(real.stdout, /\| goal-b \| added \|/);
    assert.deepEqual(goalIds(readJson(globalPath)), ['goal-b']);

    const otherDir = path.join(root, 'other');
    writeJson(path.join(otherDir, '.loopx', 'registry.json'), { goals: [{ id: 'goal-b', repo: otherDir }] });
    const collision = await runLoopx(
      ['--format', 'json', '--runtime-root', path.join(projectDir, 'runtime'), 'sync-global'],
      { cwd: otherDir },
    );
    assert.equal(collision.code, 1);
    const error: Record<string, unknown> = { ...collision.error() };
    assert.equal(error['code'], 'global_route_collision');
    assert.match(
      String(error['message']),
      /global route collision for goal_id goal-b: source_registry, repo would change/,
    );
  });
});
