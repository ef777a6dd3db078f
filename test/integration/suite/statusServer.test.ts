import assert from 'node:assert/strict';
import * as net from 'node:net';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { listeningAddresses } from '../../support/listeningAddresses';
import { waitUntil } from '../../support/waitFor';

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
    await waitUntil(async () => (await healthz(port)) === 200, `http://127.0.0.1:${port}/healthz answers 200`);
    assert.deepEqual(listeningAddresses(port), ['127.0.0.1'], 'the editor binds the status server to loopback only');
    const status = await fetch(`http://127.0.0.1:${port}/status.json`);
    assert.equal(status.status, 401, 'the status needs the token');
    await vscode.commands.executeCommand('loopx.copyStatusServerUrl');
    const url = await vscode.env.clipboard.readText();
    if (vscode.env.uiKind === vscode.UIKind.Web) {
      // code-server: the browser is not on the host's loopback; asExternalUri maps the URL to code-server's own
      // /proxy/<port>/, which the copied URL must go through (and answer with the status, token and all).
      assert.doesNotMatch(url, new RegExp(`^http://127\\.0\\.0\\.1:${port}/`), 'not the host-only loopback URL');
      assert.match(url, new RegExp(`^https?://[^/]+/proxy/${port}/status\\.json\\?token=[A-Za-z0-9_-]{20,}$`));
    } else {
      assert.match(url, new RegExp(`^http://127\\.0\\.0\\.1:${port}/status\\.json\\?token=[A-Za-z0-9_-]{20,}$`));
    }
    const withToken = await fetch(url);
    assert.equal(withToken.status, 200, await withToken.clone().text());
    const body = (await withToken.json()) as { ok: boolean; attention_queue?: { items: { goal_id: string }[] } };
    assert.equal(body.ok, true);
    assert.deepEqual(
      body.attention_queue?.items.map((item) => item.goal_id),
      ['tidy-notes'],
      'the demo goal, served through the URL a user copies',
    );
    await config().update('statusServer.enabled', false, vscode.ConfigurationTarget.Workspace);
    await waitUntil(async () => (await healthz(port)) === 'refused', `port ${port} is closed`);
  });

  it('a busy port (another window holds it) is replaced by a free one, which Copy Status Server URL names', async () => {
    const port = await freePort();
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    try {
      await config().update('statusServer.port', port, vscode.ConfigurationTarget.Workspace);
      await config().update('statusServer.enabled', true, vscode.ConfigurationTarget.Workspace);
      let served: { origin: string; url: string }[] = [];
      await waitUntil(async () => {
        served =
          (await vscode.commands.executeCommand<{ origin: string; url: string }[]>('_loopx.statusServers')) ?? [];
        return served.length === 1;
      }, 'the status server runs');
      const actual = Number(new URL(served[0]?.origin ?? '').port);
      assert.notEqual(actual, port, 'not the busy port');
      assert.equal(await healthz(actual), 200);
      await vscode.commands.executeCommand('loopx.copyStatusServerUrl');
      const url = await vscode.env.clipboard.readText();
      assert.ok(url.includes(String(actual)), `the copied URL names the real port ${actual}: ${url}`);
      assert.equal((await fetch(url)).status, 200);
    } finally {
      await config().update('statusServer.enabled', false, vscode.ConfigurationTarget.Workspace);
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });
});
