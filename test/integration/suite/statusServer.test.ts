import assert from 'node:assert/strict';
import * as net from 'node:net';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';

/** A port that is free right now on 127.0.0.1. */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function healthz(port: number): Promise<number | 'refused'> {
  try {
    const answer = await fetch(`http://127.0.0.1:${port}/healthz`);
    return answer.status;
  } catch {
    return 'refused';
  }
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`timed out waiting until ${what}`);
}

describe('status server in the real VS Code host', function () {
  this.timeout(60_000);
  const config = () => vscode.workspace.getConfiguration('loopx');

  before(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)?.activate();
  });

  after(async () => {
    await config().update('statusServer.enabled', undefined, vscode.ConfigurationTarget.Workspace);
    await config().update('statusServer.port', undefined, vscode.ConfigurationTarget.Workspace);
  });

  it('starts when loopx.statusServer.enabled is turned on, answers /healthz, and closes its port when turned off', async () => {
    const port = await freePort();
    assert.equal(await healthz(port), 'refused');
    await config().update('statusServer.port', port, vscode.ConfigurationTarget.Workspace);
    await config().update('statusServer.enabled', true, vscode.ConfigurationTarget.Workspace);
    await until(async () => (await healthz(port)) === 200, `http://127.0.0.1:${port}/healthz answers 200`);
    const status = await fetch(`http://127.0.0.1:${port}/status.json`);
    assert.equal(status.status, 401, 'the status needs the token');
    await vscode.commands.executeCommand('loopx.copyStatusServerUrl');
    const url = await vscode.env.clipboard.readText();
    assert.match(url, new RegExp(`^http://127\\.0\\.0\\.1:${port}/status\\.json\\?token=[A-Za-z0-9_-]{20,}$`));
    const withToken = await fetch(url);
    assert.equal(withToken.status, 200);
    assert.equal(((await withToken.json()) as { ok: boolean }).ok, true);
    await config().update('statusServer.enabled', false, vscode.ConfigurationTarget.Workspace);
    await until(async () => (await healthz(port)) === 'refused', `port ${port} is closed`);
  });
});
