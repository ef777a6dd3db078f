import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
import { REPO_ROOT } from '../../support/demoWorkspace';
import { request, seededWorkspace } from './helpers';

const MAIN = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');

interface Started {
  child: ChildProcess;
  stderr: () => string;
  stdout: () => string;
  exit: Promise<number | null>;
}

/** Runs the CLI from the repository (where tsx resolves) against the workspace's registry. */
function startCli(args: string[], workspace: string, env: NodeJS.ProcessEnv = {}): Started {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', MAIN, '--registry', path.join(workspace, '.loopx', 'registry.json'), ...args],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, LOOPX_NOW: '2026-11-28T09:30:00Z', LOOPX_STATUS_TOKEN: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  let stdout = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stderr: () => stderr, stdout: () => stdout, exit };
}

async function waitFor(started: Started, pattern: RegExp): Promise<RegExpExecArray> {
  for (let i = 0; i < 300; i++) {
    const match = pattern.exec(started.stderr());
    if (match) return match;
    if (started.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no ${String(pattern)} in stderr: ${started.stderr()}`);
}

describe('loopx serve-status (a real process)', function () {
  this.timeout(60_000);

  it('prints the URL and its token once, serves until SIGTERM, then prints one JSON result', async () => {
    const ws = seededWorkspace();
    const started = startCli(['serve-status', '--port', '0', '--format', 'json'], ws.dir);
    try {
      const [, port, token] = await waitFor(
        started,
        /listening on http:\/\/127\.0\.0\.1:(\d+)\n {2}status: http:\/\/127\.0\.0\.1:\d+\/status\.json\?token=(\S+)\n/,
      );
      assert.equal(
        started.stderr().split(token ?? '').length - 1,
        2,
        'the token appears in the URL and once on its own line, nowhere else',
      );
      assert.equal((await request(Number(port), '/healthz')).status, 200);
      assert.equal((await request(Number(port), '/status.json')).status, 401);
      const status = await request(Number(port), `/status.json?token=${token ?? ''}`);
      assert.equal(status.status, 200);
      assert.equal(status.json()['goal_count'], 1);
      started.child.kill('SIGTERM');
      assert.equal(await started.exit, 0);
      const result = JSON.parse(started.stdout()) as Record<string, unknown>;
      assert.deepEqual([result['ok'], result['stopped_by'], result['port']], [true, 'SIGTERM', Number(port)]);
      assert.equal(started.stdout().includes(token ?? ''), false);
    } finally {
      started.child.kill('SIGKILL');
    }
  });

  it('takes the token from LOOPX_STATUS_TOKEN without printing it; --no-token warns and serves without one', async () => {
    const ws = seededWorkspace();
    const secret = 'env-token-abcdefghijklmnop';
    const fromEnv = startCli(['serve-status', '--port', '0'], ws.dir, { LOOPX_STATUS_TOKEN: secret });
    try {
      const [, port] = await waitFor(fromEnv, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
      assert.equal(fromEnv.stderr().includes(secret), false);
      assert.match(fromEnv.stderr(), /\?token=<LOOPX_STATUS_TOKEN>/);
      assert.equal(
        (await request(Number(port), '/quota', { headers: { Authorization: `Bearer ${secret}` } })).status,
        200,
      );
    } finally {
      fromEnv.child.kill('SIGTERM');
      await fromEnv.exit;
    }
    const open = startCli(['serve-status', '--port', '0', '--no-token'], ws.dir);
    try {
      const [, port] = await waitFor(open, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
      assert.match(open.stderr(), /warning: no token/);
      assert.equal((await request(Number(port), '/status.json')).status, 200);
    } finally {
      open.child.kill('SIGTERM');
      await open.exit;
    }
  });

  it('a port in use exits 1 with a message that suggests --port 0; a non-loopback --host exits 2', async () => {
    const ws = seededWorkspace();
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const busy = startCli(['serve-status', '--port', String(port)], ws.dir);
      assert.equal(await busy.exit, 1);
      assert.match(busy.stderr(), new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use.*--port 0`));
      const remote = startCli(['serve-status', '--host', '0.0.0.0'], ws.dir);
      assert.equal(await remote.exit, 2);
      assert.match(remote.stderr(), /binds only a loopback address/);
    } finally {
      blocker.close();
    }
  });
});
