import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser/lib/esm/main.js';
import { installMcpServer, McpInstallResultSchema, type McpInstallRequest } from '../../../src/core/mcpInstall/install';
import { mcpServerLaunch, type McpTarget } from '../../../src/core/mcpInstall/targets';
import { runLoopx } from '../cli/run';

// smol-toml ships CommonJS beside its ES module (see src/core/mcpInstall/configEdit.ts).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const smolToml = require('smol-toml') as { parse: (text: string) => Record<string, unknown> };
/** As plain JSON values (smol-toml's tables have no prototype). */
const parseToml = (text: string): Record<string, unknown> =>
  JSON.parse(JSON.stringify(smolToml.parse(text))) as Record<string, unknown>;

/**
 * `mcp install` writes LoopX's MCP server into each agent's config: merged into what is there (other
 * servers, settings, comments and formatting kept), idempotent, previewed by default, atomic, and a
 * config that does not parse is refused and left byte for byte as it was.
 */

function project(): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-mcp-install-')));
}

const NODE = '/opt/node/bin/node';
const CLI = '/opt/loopx/out/cli.js';

function request(root: string, target: McpTarget, overrides: Partial<McpInstallRequest> = {}): McpInstallRequest {
  return {
    target,
    scope: 'project',
    projectRoot: root,
    homeDir: path.join(root, 'home'),
    env: {},
    launch: mcpServerLaunch({ command: NODE, cliScript: CLI, projectRoot: root, electronRunAsNode: false }),
    dryRun: false,
    ...overrides,
  };
}

const ARGS = (root: string) => [CLI, 'mcp', '--project-root', root];

function read(file: string): string {
  return fs.readFileSync(file, 'utf8');
}

describe('mcp install', () => {
  it('claude-code: previews a diff and writes nothing, then creates .mcp.json; a second install is unchanged and writes nothing', async () => {
    const root = project();
    const file = path.join(root, '.mcp.json');
    const preview = await installMcpServer(request(root, 'claude-code', { dryRun: true }));
    McpInstallResultSchema.parse(preview);
    assert.equal(preview.status, 'created');
    assert.equal(preview.written, false);
    assert.match(preview.diff, /\+\s+"mcpServers"/);
    assert.equal(fs.existsSync(file), false);

    const first = await installMcpServer(request(root, 'claude-code'));
    assert.deepEqual([first.status, first.written], ['created', true]);
    assert.deepEqual(JSON.parse(read(file)), { mcpServers: { loopx: { command: NODE, args: ARGS(root) } } });
    const stat = fs.statSync(file);

    const second = await installMcpServer(request(root, 'claude-code'));
    assert.deepEqual([second.status, second.written, second.diff], ['unchanged', false, '']);
    const again = fs.statSync(file);
    assert.deepEqual([again.ino, again.mtimeMs], [stat.ino, stat.mtimeMs], 'the unchanged file was not rewritten');
  });

  it('claude-code: merges into .mcp.json, keeping the other servers and keys; an update goes through a rename (atomic)', async () => {
    const root = project();
    const file = path.join(root, '.mcp.json');
    const before = {
      mcpServers: { other: { command: 'other-server', args: ['--x'] } },
      extra: { keep: true },
    };
    fs.writeFileSync(file, `${JSON.stringify(before, null, 4)}\n`);
    const inode = fs.statSync(file).ino;
    const result = await installMcpServer(
      request(root, 'claude-code', {
        launch: mcpServerLaunch({ command: NODE, cliScript: CLI, projectRoot: root, electronRunAsNode: true }),
      }),
    );
    assert.equal(result.status, 'updated');
    const after = JSON.parse(read(file)) as Record<string, Record<string, unknown>>;
    assert.deepEqual(after['extra'], { keep: true });
    assert.deepEqual(after['mcpServers']?.['other'], before.mcpServers.other);
    assert.deepEqual(after['mcpServers']?.['loopx'], {
      command: NODE,
      args: ARGS(root),
      env: { ELECTRON_RUN_AS_NODE: '1' },
    });
    assert.match(read(file), /\n {4}"mcpServers"/, 'the file keeps its 4-space indent');
    // Written to a temporary file and renamed over: a new inode, and no temporary file left behind.
    assert.notEqual(fs.statSync(file).ino, inode);
    assert.deepEqual(fs.readdirSync(root).sort(), ['.mcp.json']);
  });

  it('vscode: .vscode/mcp.json keeps its comments; the entry is a stdio server under "servers"', async () => {
    const root = project();
    const file = path.join(root, '.vscode', 'mcp.json');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(
      file,
      '{\n  // my servers\n  "servers": {\n    "mine": { "type": "stdio", "command": "mine" },\n  },\n}\n',
    );
    const result = await installMcpServer(request(root, 'vscode'));
    assert.equal(result.status, 'updated');
    const text = read(file);
    assert.match(text, /\/\/ my servers/);
    const parsed = parseJsonc(text) as { servers: Record<string, unknown> };
    assert.deepEqual(parsed.servers['mine'], { type: 'stdio', command: 'mine' });
    assert.deepEqual(parsed.servers['loopx'], { type: 'stdio', command: NODE, args: ARGS(root) });
    assert.equal((await installMcpServer(request(root, 'vscode'))).status, 'unchanged');
  });

  it('opencode: a new opencode.json has the schema and mcp.loopx; a config in the mcp.servers layout gets it there', async () => {
    const fresh = project();
    await installMcpServer(request(fresh, 'opencode'));
    assert.deepEqual(JSON.parse(read(path.join(fresh, 'opencode.json'))), {
      $schema: 'https://opencode.ai/config.json',
      mcp: { loopx: { type: 'local', command: [NODE, ...ARGS(fresh)], enabled: true } },
    });

    const nested = project();
    fs.writeFileSync(
      path.join(nested, 'opencode.jsonc'),
      '{\n  "model": "x/y", // mine\n  "mcp": { "servers": { "a": { "type": "remote", "url": "http://127.0.0.1:1" } } }\n}\n',
    );
    const result = await installMcpServer(request(nested, 'opencode'));
    assert.equal(result.config_file, path.join(nested, 'opencode.jsonc'), 'an existing opencode.jsonc is the config');
    const parsed = parseJsonc(read(result.config_file)) as { model: string; mcp: { servers: Record<string, unknown> } };
    assert.equal(parsed.model, 'x/y');
    assert.deepEqual(Object.keys(parsed.mcp.servers), ['a', 'loopx']);
    assert.equal(fs.existsSync(path.join(nested, 'opencode.json')), false);
  });

  it('codex: appends [mcp_servers.loopx] to .codex/config.toml, keeping the rest; a changed launch replaces only our table', async () => {
    const root = project();
    const file = path.join(root, '.codex', 'config.toml');
    fs.mkdirSync(path.dirname(file));
    const original = [
      '# my codex settings',
      'model = "gpt-x"',
      '',
      '[mcp_servers.docs]',
      'command = "docs-server"',
      'args = ["--port", "0"] # inline comment',
      '',
    ].join('\n');
    fs.writeFileSync(file, original);
    const first = await installMcpServer(request(root, 'codex'));
    assert.equal(first.status, 'updated');
    const text = read(file);
    assert.ok(text.startsWith(original), 'the user text is kept as it was, ours appended');
    const parsed = parseToml(text) as { model: string; mcp_servers: Record<string, unknown> };
    assert.equal(parsed.model, 'gpt-x');
    assert.deepEqual(parsed.mcp_servers['docs'], { command: 'docs-server', args: ['--port', '0'] });
    // required: Codex waits for LoopX's server before the model's first request (configEdit.ts says why).
    assert.deepEqual(parsed.mcp_servers['loopx'], { command: NODE, args: ARGS(root), required: true });
    assert.equal((await installMcpServer(request(root, 'codex'))).status, 'unchanged');

    // A table after ours, then a new launch: only our table changes.
    fs.appendFileSync(file, '\n# profiles follow\n[profiles.fast]\nmodel = "gpt-y"\n');
    const moved = await installMcpServer(
      request(root, 'codex', {
        launch: mcpServerLaunch({ command: '/other/node', cliScript: CLI, projectRoot: root, electronRunAsNode: true }),
      }),
    );
    assert.equal(moved.status, 'updated');
    const updated = read(file);
    assert.match(updated, /# profiles follow\n\[profiles\.fast\]/);
    const reparsed = parseToml(updated) as { mcp_servers: Record<string, unknown>; profiles: unknown };
    assert.deepEqual(reparsed.mcp_servers['loopx'], {
      command: '/other/node',
      args: ARGS(root),
      env: { ELECTRON_RUN_AS_NODE: '1' },
      required: true,
    });
    assert.deepEqual(reparsed.profiles, { fast: { model: 'gpt-y' } });
    assert.equal(updated.match(/\[mcp_servers\.loopx\]/g)?.length, 1);
  });

  it('codex --scope user: ~/.codex/config.toml, or $CODEX_HOME/config.toml', async () => {
    const root = project();
    const home = await installMcpServer(request(root, 'codex', { scope: 'user' }));
    assert.equal(home.config_file, path.join(root, 'home', '.codex', 'config.toml'));
    const codexHome = path.join(root, 'codex-home');
    const custom = await installMcpServer(request(root, 'codex', { scope: 'user', env: { CODEX_HOME: codexHome } }));
    assert.equal(custom.config_file, path.join(codexHome, 'config.toml'));
    assert.ok(fs.existsSync(custom.config_file));
  });

  it('refuses a config that does not parse, or cannot take the entry, and leaves it byte for byte', async () => {
    const cases: { target: McpTarget; relative: string; text: string; match: RegExp }[] = [
      {
        target: 'claude-code',
        relative: '.mcp.json',
        text: '{ "mcpServers": { "a": ',
        match: /does not parse as JSON/,
      },
      { target: 'claude-code', relative: '.mcp.json', text: '[1, 2]\n', match: /is not a JSON object/ },
      {
        target: 'vscode',
        relative: '.vscode/mcp.json',
        text: '{ "servers": [] }\n',
        match: /"servers" is not an object/,
      },
      { target: 'opencode', relative: 'opencode.json', text: '{ "mcp": 1 }\n', match: /"mcp" is not an object/ },
      {
        target: 'codex',
        relative: '.codex/config.toml',
        text: 'model = \n[x\n',
        match: /does not parse as TOML \(line 1/,
      },
      {
        target: 'codex',
        relative: '.codex/config.toml',
        text: 'mcp_servers = { loopx = { command = "old" } }\n',
        match: /without its own \[mcp_servers\.loopx\] table/,
      },
      {
        target: 'codex',
        relative: '.codex/config.toml',
        // Our table's env sub-table apart from it, after another table: replacing ours would clash with it.
        text: '[mcp_servers.loopx]\ncommand = "old"\n\n[other]\nx = 1\n\n[mcp_servers.loopx.env]\nA = "1"\n',
        match: /cannot be replaced without changing other settings/,
      },
    ];
    for (const { target, relative, text, match } of cases) {
      const root = project();
      const file = path.join(root, ...relative.split('/'));
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
      await assert.rejects(
        installMcpServer(
          request(root, target, {
            launch: mcpServerLaunch({ command: NODE, cliScript: CLI, projectRoot: root, electronRunAsNode: true }),
          }),
        ),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, 'mcp_config_unparseable', `${relative}: ${error.message}`);
          assert.match(error.message, match);
          assert.ok(error.message.includes(file), 'the message names the file');
          return true;
        },
        relative,
      );
      assert.equal(read(file), text, `${relative} is untouched`);
      assert.deepEqual(fs.readdirSync(path.dirname(file)), [path.basename(file)], 'no temporary file is left');
    }
  });

  it('loopx mcp install from the CLI: preview, --execute, idempotent; a bad config exits 1, a bad scope 2', async () => {
    const root = project();
    const preview = await runLoopx(['mcp', 'install', '--target', 'claude-code', '--format', 'json'], { cwd: root });
    assert.equal(preview.code, 0, preview.stderr);
    const json = preview.json();
    assert.equal(json['dry_run'], true);
    assert.equal(json['status'], 'created');
    const server = json['server'] as { command: string; args: string[] };
    assert.equal(server.command, process.execPath, 'the server runs on the Node running this CLI');
    assert.deepEqual(server.args.slice(1), ['mcp', '--project-root', root]);
    assert.equal(fs.existsSync(path.join(root, '.mcp.json')), false);

    const write = await runLoopx(['mcp', 'install', '--target', 'claude-code', '--execute'], { cwd: root });
    assert.equal(write.code, 0, write.stderr);
    assert.match(write.stdout, /\.mcp\.json`: created/);
    assert.match(write.stdout, /```diff/);
    const again = await runLoopx(['mcp', 'install', '--target', 'claude-code', '--execute'], { cwd: root });
    assert.match(again.stdout, /unchanged \(already connected\)/);

    fs.writeFileSync(path.join(root, 'opencode.json'), '{ nope');
    const bad = await runLoopx(['mcp', 'install', '--target', 'opencode', '--execute', '--format', 'json'], {
      cwd: root,
    });
    assert.equal(bad.code, 1);
    assert.equal(bad.error().code, 'mcp_config_unparseable');
    assert.equal(read(path.join(root, 'opencode.json')), '{ nope');

    for (const args of [['--target', 'vscode', '--scope', 'user'], ['--target', 'cursor'], []])
      assert.equal((await runLoopx(['mcp', 'install', ...args], { cwd: root })).code, 2, args.join(' '));
  });
});
