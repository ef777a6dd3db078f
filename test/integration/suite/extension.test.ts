import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { paletteCommandId, paletteCommands } from '../../../src/core/commands/catalog';
import { EXTENSION_ID, VIEW_IDS } from '../../../src/core/commands/ids';

describe('LoopX extension in a real VS Code host', () => {
  let extension: vscode.Extension<unknown>;

  before(async () => {
    const found = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(found, `${EXTENSION_ID} is not installed in this host`);
    extension = found;
    await extension.activate();
  });

  it('activates and returns a versioned API', () => {
    assert.equal(extension.isActive, true);
    const api = extension.exports as { apiVersion: number; version: string };
    assert.equal(api.apiVersion, 1);
    assert.equal(api.version, (extension.packageJSON as { version: string }).version);
  });

  it('registers the agent tools where the host has their APIs, and activates without them (VS Code 1.90)', async () => {
    const lm = vscode.lm as unknown as { registerTool?: unknown; registerMcpServerDefinitionProvider?: unknown };
    const support = await vscode.commands.executeCommand<{ languageModelTools: boolean; mcpProvider: boolean }>(
      '_loopx.agentToolSupport',
    );
    assert.deepEqual(support, {
      languageModelTools: typeof lm.registerTool === 'function',
      mcpProvider: typeof lm.registerMcpServerDefinitionProvider === 'function',
    });
    const [major = 0, minor = 0] = vscode.version.split('.').map(Number);
    if (major === 1 && minor < 95) assert.equal(support?.languageModelTools, false, vscode.version);
    if (major > 1 || minor >= 101) assert.deepEqual(support, { languageModelTools: true, mcpProvider: true });
    // The server definitions do not depend on the host: the demo folder has a LoopX project.
    const servers = await vscode.commands.executeCommand<{ args: string[] }[]>('_loopx.mcpServerDefinitions');
    assert.deepEqual(
      servers?.map((server) => server.args.slice(1, 3)),
      [['mcp', '--project-root']],
    );
  });

  it('registers every palette command of the catalog', async () => {
    const registered = new Set(await vscode.commands.getCommands(true));
    const missing = paletteCommands()
      .map(paletteCommandId)
      .filter((id) => !registered.has(id));
    assert.deepEqual(missing, []);
  });

  it('contributes the Goals, Gate Inbox, Agents, Review and Projection Warnings views, which can be focused', async () => {
    for (const viewId of Object.values(VIEW_IDS)) {
      await vscode.commands.executeCommand(`${viewId}.focus`);
    }
    const views =
      (extension.packageJSON as { contributes: { views: Record<string, { id: string }[]> } }).contributes.views[
        'loopx'
      ] ?? [];
    assert.deepEqual(
      views.map((v) => v.id),
      [VIEW_IDS.goals, VIEW_IDS.gateInbox, VIEW_IDS.agents, VIEW_IDS.review, VIEW_IDS.warnings, VIEW_IDS.restricted],
    );
  });

  it('runs its commands: Refresh reloads the registry from disk before it resolves, and records no failure', async () => {
    const api = extension.exports as { getGoals(): { goalId: string; displayName: string }[] };
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder);
    const registryPath = join(folder.uri.fsPath, '.loopx', 'registry.json');
    const original = readFileSync(registryPath, 'utf8');
    assert.ok(original.includes('"Tidy the notes folder"'));
    try {
      writeFileSync(registryPath, original.replace('"Tidy the notes folder"', '"Tidied by Refresh"'));
      // Straight after the write: the file watcher's reload is debounced, so only Refresh can have loaded it.
      await vscode.commands.executeCommand('loopx.refresh');
      assert.equal(api.getGoals().find((g) => g.goalId === 'tidy-notes')?.displayName, 'Tidied by Refresh');
    } finally {
      writeFileSync(registryPath, original);
      await vscode.commands.executeCommand('loopx.refresh');
    }
    assert.equal(api.getGoals().find((g) => g.goalId === 'tidy-notes')?.displayName, 'Tidy the notes folder');
    assert.deepEqual(await vscode.commands.executeCommand('_loopx.takeCommandFailures'), []);
  });

  it('runs in the workspace the driver opened (the demo workspace)', () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'no workspace folder is open');
    assert.ok(folder.uri.path.endsWith('/workspace'), folder.uri.path);
  });
});
