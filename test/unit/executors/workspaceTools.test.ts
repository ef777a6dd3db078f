import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  resolveProjectPath,
  runWorkspaceTool,
  WORKSPACE_TOOLS,
  type WorkspaceToolContext,
} from '../../../src/core/executors/workspaceTools';

describe('The vscode-lm workspace tools: confined to the project', () => {
  let scratch: string;
  let project: string;
  let ctx: WorkspaceToolContext;

  beforeEach(() => {
    scratch = mkdtempSync(join(tmpdir(), 'loopx-wstools-'));
    project = join(scratch, 'project');
    mkdirSync(join(project, 'notes'), { recursive: true });
    mkdirSync(join(project, 'scripts'));
    mkdirSync(join(project, '.git'));
    writeFileSync(join(project, 'notes', 'bread.md'), '# Bread\n\nSourdough needs time.\n');
    writeFileSync(join(project, 'scripts', 'check.js'), 'process.exit(0)\n');
    writeFileSync(join(project, '.git', 'config'), '[core]\n');
    writeFileSync(join(scratch, 'secret.txt'), 'outside the project\n');
    mkdirSync(join(scratch, 'elsewhere'));
    writeFileSync(join(scratch, 'elsewhere', 'other.md'), 'elsewhere\n');
    symlinkSync(join(scratch, 'secret.txt'), join(project, 'notes', 'secret-link.md'));
    symlinkSync(join(scratch, 'elsewhere'), join(project, 'notes', 'away'));
    ctx = { projectRoot: project, writeScope: ['notes/**'], trusted: true, staged: new Map() };
  });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it('defines each tool as plain data with a JSON input schema', () => {
    assert.deepEqual(
      WORKSPACE_TOOLS.map((tool) => tool.name),
      ['read_file', 'list_files', 'search_workspace', 'apply_edit'],
    );
    for (const tool of WORKSPACE_TOOLS) {
      assert.equal(tool.inputSchema['type'], 'object');
      assert.deepEqual(JSON.parse(JSON.stringify(tool)), tool, `${tool.name} is not plain data`);
    }
  });

  it('reads a project file', async () => {
    const read = await runWorkspaceTool('read_file', { path: 'notes/bread.md' }, ctx);
    assert.deepEqual(read, { ok: true, text: '# Bread\n\nSourdough needs time.\n' });
  });

  for (const [label, raw] of [
    ['a path with ".."', '../secret.txt'],
    ['a path with ".." in the middle', 'notes/../../secret.txt'],
    ['an absolute path', '/etc/passwd'],
    ['a Windows absolute path', 'C:\\Windows\\win.ini'],
    ['a home path', '~/.ssh/id_rsa'],
  ] as const)
    it(`refuses ${label} with a message for the model`, async () => {
      const read = await runWorkspaceTool('read_file', { path: raw }, ctx);
      assert.equal(read.ok, false);
      assert.match(read.text, /^Refused: .*relative to the project folder, without "\.\."/);
      const edit = await runWorkspaceTool('apply_edit', { path: raw, new_text: 'x' }, ctx);
      assert.equal(edit.ok, false);
      assert.match(edit.text, /^Refused: /);
      assert.equal(ctx.staged.size, 0);
    });

  it('refuses a symbolic link that leads out of the project: the file, and a folder on the way', async () => {
    for (const raw of ['notes/secret-link.md', 'notes/away/other.md', 'notes/away/new.md']) {
      const read = await runWorkspaceTool('read_file', { path: raw }, ctx);
      assert.equal(read.ok, false, raw);
      assert.match(read.text, /leads out of the project through a symbolic link/, raw);
      assert.doesNotMatch(read.text, /outside the project|elsewhere\n/);
      const edit = await runWorkspaceTool('apply_edit', { path: raw, new_text: 'x' }, ctx);
      assert.match(edit.text, /leads out of the project through a symbolic link/, raw);
    }
    const listed = await runWorkspaceTool('list_files', { folder: 'notes/away' }, ctx);
    assert.match(listed.text, /symbolic link/);
    assert.equal(ctx.staged.size, 0);
    assert.equal(readFileSync(join(scratch, 'secret.txt'), 'utf8'), 'outside the project\n');
  });

  it('accepts a symbolic link that stays inside the project', async () => {
    symlinkSync(join(project, 'notes'), join(project, 'notes-alias'));
    const resolved = await resolveProjectPath(project, 'notes-alias/bread.md');
    assert.equal(resolved.ok, true);
  });

  it('lists and searches project files, never following links out nor entering .git', async () => {
    const listed = await runWorkspaceTool('list_files', {}, ctx);
    assert.deepEqual(listed.text.split('\n'), ['notes/bread.md', 'scripts/check.js']);
    const found = await runWorkspaceTool('search_workspace', { query: 'SOURDOUGH' }, ctx);
    assert.equal(found.text, 'notes/bread.md:3: Sourdough needs time.');
    const none = await runWorkspaceTool('search_workspace', { query: 'outside the project' }, ctx);
    assert.match(none.text, /^no line contains/);
  });

  it('stages an edit inside the write scope (written later), replacing one occurrence of old_text', async () => {
    const edit = await runWorkspaceTool(
      'apply_edit',
      { path: 'notes/bread.md', old_text: 'needs time', new_text: 'needs a night' },
      ctx,
    );
    assert.equal(edit.ok, true, edit.text);
    assert.equal(ctx.staged.get('notes/bread.md'), '# Bread\n\nSourdough needs a night.\n');
    assert.equal(readFileSync(join(project, 'notes', 'bread.md'), 'utf8'), '# Bread\n\nSourdough needs time.\n');
    const reread = await runWorkspaceTool('read_file', { path: './notes/bread.md' }, ctx);
    assert.match(reread.text, /a night/);
    const created = await runWorkspaceTool('apply_edit', { path: 'notes/new.md', new_text: '# New\n' }, ctx);
    assert.equal(created.ok, true);
    assert.match((await runWorkspaceTool('list_files', { folder: 'notes' }, ctx)).text, /notes\/new\.md/);
    assert.equal(existsSync(join(project, 'notes', 'new.md')), false);
  });

  it('refuses an edit outside the write scope, in an untrusted workspace, or with old_text not found once', async () => {
    const outside = await runWorkspaceTool('apply_edit', { path: 'scripts/check.js', new_text: 'x' }, ctx);
    assert.equal(outside.text, "Refused: scripts/check.js is outside the goal's write scope (notes/**)");
    const missing = await runWorkspaceTool(
      'apply_edit',
      { path: 'notes/bread.md', old_text: 'rye', new_text: 'x' },
      ctx,
    );
    assert.match(missing.text, /old_text does not occur in notes\/bread\.md/);
    const untrusted = await runWorkspaceTool(
      'apply_edit',
      { path: 'notes/bread.md', new_text: 'x' },
      { ...ctx, trusted: false },
    );
    assert.match(untrusted.text, /not trusted/);
    const noScope = await runWorkspaceTool(
      'apply_edit',
      { path: 'notes/bread.md', new_text: 'x' },
      { ...ctx, writeScope: [] },
    );
    assert.match(noScope.text, /none is set/);
    assert.equal(ctx.staged.size, 0);
  });

  it('answers an unknown tool or a bad input with a refusal, never a throw', async () => {
    assert.match((await runWorkspaceTool('run_shell', { cmd: 'rm -rf /' }, ctx)).text, /there is no tool "run_shell"/);
    assert.match((await runWorkspaceTool('read_file', { path: 42 }, ctx)).text, /^Refused: read_file: path:/);
    assert.match((await runWorkspaceTool('apply_edit', null, ctx)).text, /^Refused: apply_edit: /);
  });
});
