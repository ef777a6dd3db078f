import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { CRASH_AT_PHASE_ENV } from '../../../src/core/turn/crashHook';

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

  it('ships no test hook: no installed file names the crash hook variable', () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    const root = extension.extensionUri.fsPath;
    const files = readdirSync(root, { recursive: true })
      .map(String)
      .filter((file) => statSync(join(root, file)).isFile());
    assert.ok(
      files.includes(join('out', 'extension.js')) && files.includes(join('out', 'cli-main.js')),
      files.join(', '),
    );
    const carriers = files.filter((file) => readFileSync(join(root, file)).includes(CRASH_AT_PHASE_ENV));
    assert.deepEqual(carriers, [], `${CRASH_AT_PHASE_ENV} ships in the .vsix`);
  });

  it('holds every built file the package list names (webview scripts and styles too), and no other under out/', async () => {
    // An ES module (scripts/), from this CommonJS suite: import() (esbuild bundles it in).
    const { builtFiles } = await import('../../../scripts/runtime-files.mjs');
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    const root = extension.extensionUri.fsPath;
    const installed = readdirSync(join(root, 'out'), { recursive: true })
      .map(String)
      .filter((file) => statSync(join(root, 'out', file)).isFile())
      .map((file) => `out/${file.split('\\').join('/')}`)
      .sort();
    assert.deepEqual(installed, builtFiles());
  });
});
