import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { COMMANDS } from '../../../src/core/commands/catalog';
import { SlashCatalogSchema, slashCatalog } from '../../../src/core/slash/catalog';
import {
  installSlashCommands,
  MANAGED_MARKER,
  parseSurfaces,
  plannedSlashFiles,
  SlashInstallResultSchema,
  uninstallSlashCommands,
} from '../../../src/core/slash/install';
import { runLoopx } from '../cli/run';

function project(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-slash-'));
}

function write(root: string, relative: string, content: string): string {
  const file = path.join(root, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  return file;
}

/** Every file under `root`, relative, with its content. */
function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else out[path.relative(root, full).split(path.sep).join('/')] = fs.readFileSync(full, 'utf8');
    }
  };
  walk(root);
  return out;
}

describe('slash-command catalog', () => {
  it('case 38: the catalog has /loopx, /loopx <goal text> and every slash form of the command table, canonical prefix /loopx', () => {
    const catalog = SlashCatalogSchema.parse(slashCatalog());
    const fromTable = COMMANDS.filter((spec) => spec.slash !== null);
    assert.equal(catalog.count, 3 + fromTable.length);
    assert.equal(catalog.canonical_prefix, '/loopx');
    assert.deepEqual(
      catalog.commands.slice(0, 2).map((entry) => entry.command),
      ['/loopx', '/loopx <goal text>'],
    );
    assert.deepEqual(
      catalog.commands.slice(2, -1).map((entry) => entry.command),
      fromTable.map((spec) => spec.slash),
    );
    // The original's seven commands keep their order; /loopx-pr-review is listed but unavailable here.
    const original = [
      '/loopx',
      '/loopx <goal text>',
      '/loopx-global-summary',
      '/loopx-global-gates',
      '/loopx-global-todos',
      '/loopx-global-risks',
      '/loopx-pr-review',
    ];
    const ours = catalog.commands.map((entry) => entry.command);
    assert.deepEqual(
      ours.filter((command) => original.includes(command)),
      original,
    );
    const prReview = catalog.commands.at(-1);
    assert.deepEqual([prReview?.command, prReview?.scope, prReview?.available], ['/loopx-pr-review', 'repo', false]);
    assert.ok(catalog.commands.slice(0, -1).every((entry) => entry.available));
    for (const name of ['summary', 'gates', 'todos', 'risks']) {
      const entry = catalog.commands.find((e) => e.command === `/loopx-global-${name}`);
      assert.ok(entry, name);
      assert.deepEqual(
        [entry.scope, entry.mutation_policy, entry.cli_reference],
        ['global', 'read_only', `loopx global-${name}`],
      );
    }
    assert.equal(catalog.commands[1]?.mutation_policy, 'writes_after_preview');
  });

  it('case 38: legacy /loop-global-* aliases are listed by default and absent with --no-legacy-aliases', async () => {
    assert.deepEqual(slashCatalog().legacy_aliases, [
      { alias: '/loop-global-summary', command: '/loopx-global-summary' },
      { alias: '/loop-global-gates', command: '/loopx-global-gates' },
      { alias: '/loop-global-todos', command: '/loopx-global-todos' },
      { alias: '/loop-global-risks', command: '/loopx-global-risks' },
    ]);
    const withAliases = await runLoopx(['slash-commands', '--format', 'json']);
    assert.equal(withAliases.code, 0);
    assert.equal(withAliases.json()['schema_version'], 'loopx_slash_command_catalog_v0');
    assert.ok(withAliases.stdout.includes('/loop-global-todos'));
    const without = await runLoopx(['slash-commands', '--format', 'json', '--no-legacy-aliases']);
    assert.equal(without.code, 0);
    assert.equal(without.stdout.includes('/loop-global-'), false);
    assert.equal(without.json()['include_legacy_aliases'], false);
    const markdown = await runLoopx(['slash-commands']);
    assert.match(markdown.stdout, /\| `\/loopx-global-risks` \| global \|/);
  });
});

describe('slash-command install', () => {
  it('case 39: default and all surfaces are codex, claude-code, opencode; unknown ones are refused', () => {
    assert.deepEqual(parseSurfaces([]), ['codex', 'claude-code', 'opencode']);
    assert.deepEqual(parseSurfaces(['all']), ['codex', 'claude-code', 'opencode']);
    assert.deepEqual(parseSurfaces(['opencode,claude-code']), ['claude-code', 'opencode']);
    assert.throws(() => parseSurfaces(['gemini']), /unknown surface/);
  });

  it('case 39: a codex skill without the managed marker is untouched (skipped_user_file); with the marker it is updated', async () => {
    const root = project();
    const skill = write(root, '.agents/skills/loopx/SKILL.md', '---\nname: loopx\ndescription: my own\n---\nMine.\n');
    const first = await installSlashCommands({ projectRoot: root, surfaces: ['codex'] });
    assert.deepEqual(
      first.files.map((f) => [f.path, f.status, f.written]),
      [['.agents/skills/loopx/SKILL.md', 'skipped_user_file', false]],
    );
    assert.equal(fs.readFileSync(skill, 'utf8'), '---\nname: loopx\ndescription: my own\n---\nMine.\n');
    fs.writeFileSync(skill, `---\nname: loopx\n---\n<!-- ${MANAGED_MARKER} -->\nold\n`);
    const second = await installSlashCommands({ projectRoot: root, surfaces: ['codex'] });
    assert.deepEqual(
      second.files.map((f) => f.status),
      ['updated'],
    );
    assert.match(
      fs.readFileSync(skill, 'utf8'),
      /^---\nname: loopx\ndescription: ".+"\n---\n<!-- loopx-managed-slash-command:v1 -->/,
    );
  });

  it('installs every surface with the marker, is idempotent, and never touches user files; uninstall removes only ours', async () => {
    const root = project();
    const userCommand = write(root, '.claude/commands/loopx-status.md', 'my own status prompt\n');
    const unrelated = write(root, '.opencode/commands/deploy.md', '---\ndescription: deploy\n---\nDeploy it.\n');
    const old = new Date('2020-01-01T00:00:00Z');
    fs.utimesSync(userCommand, old, old);

    const dry = await installSlashCommands({ projectRoot: root, surfaces: parseSurfaces([]), dryRun: true });
    assert.ok(dry.files.every((f) => !f.written));
    assert.deepEqual(Object.keys(tree(root)).sort(), [
      '.claude/commands/loopx-status.md',
      '.opencode/commands/deploy.md',
    ]);

    const result = SlashInstallResultSchema.parse(
      await installSlashCommands({ projectRoot: root, surfaces: parseSurfaces([]) }),
    );
    const planned = plannedSlashFiles(parseSurfaces([]));
    assert.equal(result.files.length, planned.length);
    assert.deepEqual(
      result.files.filter((f) => f.status === 'skipped_user_file').map((f) => f.path),
      ['.claude/commands/loopx-status.md'],
    );
    assert.ok(
      result.files
        .filter((f) => f.path !== '.claude/commands/loopx-status.md')
        .every((f) => f.status === 'created' && f.written),
    );
    const files = tree(root);
    assert.equal(files['.claude/commands/loopx-status.md'], 'my own status prompt\n');
    assert.equal(fs.statSync(userCommand).mtime.getTime(), old.getTime());
    for (const name of [
      'loopx',
      'loopx-commands',
      'loopx-bootstrap',
      'loopx-global-summary',
      'loopx-global-gates',
      'loopx-global-todos',
      'loopx-global-risks',
    ]) {
      for (const dir of ['.claude/commands', '.opencode/commands']) {
        const content = files[`${dir}/${name}.md`];
        assert.ok(content?.includes(MANAGED_MARKER), `${dir}/${name}.md`);
        assert.ok(content?.includes('$ARGUMENTS'), `${dir}/${name}.md takes arguments`);
      }
    }
    assert.match(
      files['.claude/commands/loopx-global-todos.md'] ?? '',
      /Run `"\$\{LOOPX_CLI:-loopx\}" global-todos \$ARGUMENTS`/,
    );
    assert.match(files['.claude/commands/loopx.md'] ?? '', /argument-hint: "<goal text>"/);
    assert.ok(files['.agents/skills/loopx/SKILL.md']?.includes('`/loopx-global-risks`'));

    const again = await installSlashCommands({ projectRoot: root, surfaces: parseSurfaces([]) });
    assert.deepEqual([...new Set(again.files.map((f) => f.status))].sort(), ['skipped_user_file', 'unchanged']);

    // An older managed file that the catalog no longer names is ours too.
    write(root, '.claude/commands/loopx-retired.md', `<!-- ${MANAGED_MARKER} -->\nold\n`);
    const dryRemove = await uninstallSlashCommands({
      projectRoot: root,
      surfaces: parseSurfaces(['all']),
      dryRun: true,
    });
    assert.ok(dryRemove.files.every((f) => !f.written));
    assert.ok(fs.existsSync(path.join(root, '.claude/commands/loopx.md')));
    const removed = await uninstallSlashCommands({ projectRoot: root, surfaces: parseSurfaces(['all']) });
    assert.ok(removed.files.some((f) => f.path === '.claude/commands/loopx-retired.md' && f.status === 'removed'));
    assert.deepEqual(
      removed.files.filter((f) => f.status === 'skipped_user_file').map((f) => f.path),
      ['.claude/commands/loopx-status.md'],
    );
    assert.deepEqual(tree(root), {
      '.claude/commands/loopx-status.md': 'my own status prompt\n',
      '.opencode/commands/deploy.md': '---\ndescription: deploy\n---\nDeploy it.\n',
    });
    assert.equal(fs.readFileSync(unrelated, 'utf8'), '---\ndescription: deploy\n---\nDeploy it.\n');
    assert.equal(fs.existsSync(path.join(root, '.agents', 'skills', 'loopx')), false);
  });

  it('loopx slash-commands --install / --uninstall from the CLI, relative to --project; bad combinations exit 2', async () => {
    const root = project();
    const install = await runLoopx(
      ['slash-commands', '--install', '--surface', 'claude-code', '--project', 'sub', '--format', 'json'],
      { cwd: root },
    );
    assert.equal(install.code, 0, install.stderr);
    const json = install.json() as { action: string; files: { path: string; status: string }[] };
    assert.equal(json.action, 'install');
    assert.ok(json.files.every((f) => f.path.startsWith('.claude/commands/') && f.status === 'created'));
    assert.ok(fs.existsSync(path.join(root, 'sub', '.claude', 'commands', 'loopx-global-summary.md')));
    const dry = await runLoopx(
      ['slash-commands', '--uninstall', '--surface', 'claude-code', '--project', 'sub', '--dry-run'],
      { cwd: root },
    );
    assert.equal(dry.code, 0);
    assert.match(dry.stdout, /dry run, nothing written/);
    assert.match(dry.stdout, /would remove/);
    assert.ok(fs.existsSync(path.join(root, 'sub', '.claude', 'commands', 'loopx-global-summary.md')));
    for (const args of [
      ['--install', '--uninstall'],
      ['--surface', 'codex'],
      ['--install', '--surface', 'gemini'],
      ['--dry-run'],
    ]) {
      assert.equal((await runLoopx(['slash-commands', ...args], { cwd: root })).code, 2, args.join(' '));
    }
  });
});
