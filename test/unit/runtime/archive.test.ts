import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { isLoopxError } from '../../../src/core/errors';
import {
  archiveRuntimeGoal as archiveUnderRegistry,
  readArchiveRegistry,
  type ArchiveRuntimeOptions,
} from '../../../src/core/runtime/archive';
import { runLoopx } from '../cli/run';
import { removeTempDirs, tempDir } from '../../support/tempDir';

const NOW = '2026-01-15T10:00:00Z';
const STAMP = '20260115T100000Z';

interface Fixture {
  project: string;
  registryPath: string;
  runtimeRoot: string;
}

after(() => {
  removeTempDirs();
});

/** A project whose registry lists goal `reg` and keeps its runtime at the relative `./runtime`. */
function fixture(): Fixture {
  const project = fs.realpathSync(tempDir('loopx-'));
  const registryPath = path.join(project, '.loopx', 'registry.json');
  fs.mkdirSync(path.dirname(registryPath), { recursive: true });
  fs.writeFileSync(
    registryPath,
    JSON.stringify({ schema_version: '0.1', common_runtime_root: './runtime', goals: [{ id: 'reg', repo: project }] }),
  );
  const runtimeRoot = path.join(project, 'runtime');
  for (const id of ['old', 'reg']) {
    fs.mkdirSync(path.join(runtimeRoot, 'goals', id, 'runs'), { recursive: true });
    fs.writeFileSync(path.join(runtimeRoot, 'goals', id, 'runs', 'index.jsonl'), '{"goal_id":"x"}\n');
  }
  return { project, registryPath, runtimeRoot };
}

interface Options extends ArchiveRuntimeOptions {
  registryPath: string;
  runtimeRootOverride?: string;
  homeDir: string;
}

function options(f: Fixture, extra: Partial<Options> = {}): Options {
  return { registryPath: f.registryPath, goalId: 'old', clock: fixedClock(NOW), homeDir: os.homedir(), ...extra };
}

/** As the operation does: the registry read once (`readArchiveRegistry`), then the archive decided under it. */
async function archiveRuntimeGoal(o: Options) {
  return archiveUnderRegistry(await readArchiveRegistry(o.registryPath, o), o);
}

async function refusal(promise: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isLoopxError(error), String(error));
    assert.equal(error.code, code);
    assert.match(error.message, message);
    return true;
  });
}

describe('archive-runtime', () => {
  it('case 23: a dry run of an unregistered goal reports would-move and moves nothing', async () => {
    const f = fixture();
    const result = await archiveRuntimeGoal(options(f));
    assert.equal(result.ok, true);
    assert.equal(result.action, 'would-move');
    assert.equal(result.archived, false);
    assert.equal(result.dry_run, true);
    assert.equal(result.registry_member, false);
    assert.equal(
      result.runtime_root,
      f.runtimeRoot,
      'a relative common_runtime_root is anchored to the registry project',
    );
    assert.equal(result.source, path.join(f.runtimeRoot, 'goals', 'old'));
    assert.equal(result.archive_path, path.join(f.runtimeRoot, 'archived-goals', `old-${STAMP}`));
    assert.ok(fs.existsSync(result.source));
    assert.ok(!fs.existsSync(path.join(f.runtimeRoot, 'archived-goals')), 'a dry run creates nothing');
  });

  it('case 24: a registered goal is refused without --allow-registered and archived with it', async () => {
    const f = fixture();
    await refusal(
      archiveRuntimeGoal(options(f, { goalId: 'reg' })),
      'goal_registered',
      /^goal exists in registry; pass --allow-registered only after confirming it is obsolete$/,
    );
    const allowed = await archiveRuntimeGoal(options(f, { goalId: 'reg', allowRegistered: true }));
    assert.equal(allowed.registry_member, true);
    assert.equal(allowed.action, 'would-move');
  });

  it('case 25: missing goal, a file instead of a folder, and a symlink out of the tree are refused', async () => {
    const f = fixture();
    await refusal(
      archiveRuntimeGoal(options(f, { goalId: 'missing' })),
      'runtime_goal_missing',
      /runtime goal directory does not exist: .*missing/,
    );
    fs.writeFileSync(path.join(f.runtimeRoot, 'goals', 'afile'), 'x');
    await refusal(
      archiveRuntimeGoal(options(f, { goalId: 'afile' })),
      'runtime_goal_not_directory',
      /runtime goal path is not a directory/,
    );
    const outside = tempDir('loopx-outside-');
    fs.writeFileSync(path.join(outside, 'precious.txt'), 'keep');
    fs.symlinkSync(outside, path.join(f.runtimeRoot, 'goals', 'escape'));
    await refusal(
      archiveRuntimeGoal(options(f, { goalId: 'escape', execute: true })),
      'runtime_goal_outside_goals_root',
      /resolved outside the goals root/,
    );
    assert.equal(fs.readFileSync(path.join(outside, 'precious.txt'), 'utf8'), 'keep');
    assert.ok(
      fs.lstatSync(path.join(f.runtimeRoot, 'goals', 'escape')).isSymbolicLink(),
      'the link stays where it was',
    );
  });

  it('case 26: executing twice in one second gives unique destinations and loses nothing', async () => {
    const f = fixture();
    const first = await archiveRuntimeGoal(options(f, { execute: true }));
    assert.equal(first.action, 'moved');
    assert.equal(first.archived, true);
    assert.equal(first.archive_path, path.join(f.runtimeRoot, 'archived-goals', `old-${STAMP}`));
    assert.ok(!fs.existsSync(first.source));
    assert.equal(fs.readFileSync(path.join(first.archive_path, 'runs', 'index.jsonl'), 'utf8'), '{"goal_id":"x"}\n');

    fs.mkdirSync(path.join(f.runtimeRoot, 'goals', 'old'));
    fs.writeFileSync(path.join(f.runtimeRoot, 'goals', 'old', 'second.txt'), '2');
    const second = await archiveRuntimeGoal(options(f, { execute: true }));
    assert.equal(second.action, 'moved');
    assert.equal(second.archive_path, path.join(f.runtimeRoot, 'archived-goals', `old-${STAMP}-2`));
    assert.equal(fs.readFileSync(path.join(second.archive_path, 'second.txt'), 'utf8'), '2');
    assert.ok(fs.existsSync(path.join(first.archive_path, 'runs', 'index.jsonl')), 'the first archive is untouched');
  });

  it('fails closed when the registry file is missing (fixes the original failing open)', async () => {
    const f = fixture();
    fs.rmSync(f.registryPath);
    await refusal(
      archiveRuntimeGoal(options(f, { goalId: 'reg', runtimeRootOverride: f.runtimeRoot })),
      'registry_unreadable',
      /registry could not be read .*does not exist.*--allow-registered/,
    );
    assert.ok(fs.existsSync(path.join(f.runtimeRoot, 'goals', 'reg')));
    const allowed = await archiveRuntimeGoal(
      options(f, { goalId: 'reg', runtimeRootOverride: f.runtimeRoot, allowRegistered: true }),
    );
    assert.equal(allowed.registry_member, null);
    assert.equal(allowed.registry_readable, false);
  });

  it('fails closed when the registry is not valid JSON, naming the line', async () => {
    const f = fixture();
    fs.writeFileSync(f.registryPath, '{\n  "goals": [\n');
    await refusal(
      archiveRuntimeGoal(options(f, { runtimeRootOverride: f.runtimeRoot })),
      'registry_unreadable',
      /registry could not be read \(.*registry\.json(:3:1| .*line 3)/,
    );
  });

  it('refuses an archive root inside the folder being archived', async () => {
    const f = fixture();
    await refusal(
      archiveRuntimeGoal(options(f, { archiveRoot: path.join(f.runtimeRoot, 'goals', 'old', 'inner'), execute: true })),
      'archive_root_inside_source',
      /inside the folder being archived/,
    );
    assert.ok(fs.existsSync(path.join(f.runtimeRoot, 'goals', 'old', 'runs', 'index.jsonl')));
  });

  it('rejects unsafe goal ids before touching anything', async () => {
    const f = fixture();
    await refusal(archiveRuntimeGoal(options(f, { goalId: '../old' })), 'invalid_goal_id', /single path segment/);
  });

  describe('CLI', () => {
    it('previews as JSON, anchored to the registry project whatever the current directory', async () => {
      const f = fixture();
      const elsewhere = tempDir('loopx-cwd-');
      const run = await runLoopx(
        ['--registry', f.registryPath, '--format', 'json', 'archive-runtime', '--goal-id', ' old '],
        { cwd: elsewhere, now: NOW, env: { HOME: os.homedir() } },
      );
      assert.equal(run.code, 0, run.stderr);
      const json = run.json();
      assert.equal(json['goal_id'], 'old');
      assert.equal(json['runtime_root'], f.runtimeRoot);
      assert.equal(json['action'], 'would-move');
      assert.ok(!fs.existsSync(path.join(elsewhere, 'runtime')));
    });

    it('moves with --execute to a relative --archive-root, and prints Markdown by default', async () => {
      const f = fixture();
      const run = await runLoopx(['archive-runtime', '--goal-id', 'old', '--archive-root', 'attic', '--execute'], {
        cwd: f.project,
        now: NOW,
        env: { HOME: os.homedir() },
      });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^# LoopX archive-runtime\n/);
      assert.match(run.stdout, /Moved to/);
      assert.ok(fs.existsSync(path.join(f.project, 'attic', `old-${STAMP}`, 'runs', 'index.jsonl')));
    });

    it('answers a refusal with ok:false, archived:false and exit 1; a missing --goal-id is a usage error', async () => {
      const f = fixture();
      const refused = await runLoopx(['--format', 'json', 'archive-runtime', '--goal-id', 'reg'], {
        cwd: f.project,
        now: NOW,
        env: { HOME: os.homedir() },
      });
      assert.equal(refused.code, 1);
      const json = refused.json();
      assert.equal(json['ok'], false);
      assert.equal(json['archived'], false);
      assert.equal(json['error_code'], 'goal_registered');
      assert.match(String(json['error']), /goal exists in registry/);
      const usage = await runLoopx(['archive-runtime'], { cwd: f.project, now: NOW, env: { HOME: os.homedir() } });
      assert.equal(usage.code, 2);
      assert.match(usage.stderr, /--goal-id/);
    });
  });
});
