import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';

describe('LoopX installed from its .vsix', () => {
  it('is installed from the extensions folder, not from the working tree', () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not installed`);
    const expectedDir = process.env['LOOPX_EXPECTED_EXTENSIONS_DIR'];
    assert.ok(expectedDir, 'LOOPX_EXPECTED_EXTENSIONS_DIR not set by the driver');
    assert.ok(
      extension.extensionUri.path.startsWith(expectedDir),
      `${extension.extensionUri.path} is not under ${expectedDir}`,
    );
  });

  it('activates from there and exposes its API to other extensions', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    const api = (await extension.activate()) as { apiVersion: number; version: string };
    assert.equal(extension.isActive, true);
    assert.equal(api.apiVersion, 1);
    assert.equal(api.version, (extension.packageJSON as { version: string }).version);
  });

  it('registers its commands when installed', async () => {
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('loopx.refresh'));
    assert.ok(commands.includes('loopx.showLog'));
  });
});
