import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { materializeDemoWorkspace, REPO_ROOT } from '../../support/demoWorkspace';
import { TSX_LOADER } from './helpers';

/**
 * Every other command stays as fast as before: the MCP SDK is loaded by `loopx mcp` only (the
 * command's module imports the server lazily; the bundle keeps that `import()` lazy as it does for
 * every command module, docs/architecture.md).
 */

const RECORDER = path.join(__dirname, 'fixtures', 'recordSdkLoads.cjs');

function sdkLoads(cwd: string, argv: string[]): { loads: number; status: number | null } {
  const run = spawnSync(
    process.execPath,
    ['--require', RECORDER, '--import', TSX_LOADER, path.join(REPO_ROOT, 'src/cli/main.ts'), ...argv],
    { cwd, encoding: 'utf8', input: '', env: { PATH: process.env['PATH'] ?? '', HOME: cwd } },
  );
  const match = /MCP_SDK_LOADS=(\d+)/.exec(run.stderr);
  assert.ok(match, run.stderr);
  return { loads: Number(match[1]), status: run.status };
}

describe('the MCP SDK is loaded by loopx mcp only', function () {
  this.timeout(60_000);
  let dir = '';
  before(() => {
    dir = materializeDemoWorkspace(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-mcp-lazy-')), 'ws'));
  });
  after(() => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));

  it('loopx status and loopx quota should-run load none of it', () => {
    assert.deepEqual(sdkLoads(dir, ['status', '--format', 'json']), { loads: 0, status: 0 });
    assert.deepEqual(sdkLoads(dir, ['quota', 'should-run', '--goal-id', 'tidy-notes', '--format', 'json']), {
      loads: 0,
      status: 0,
    });
  });

  it('loopx mcp loads it (and ends when its client closes stdin)', () => {
    const run = sdkLoads(dir, ['mcp']);
    assert.ok(run.loads > 0);
    assert.equal(run.status, 0);
  });
});
