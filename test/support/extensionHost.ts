/**
 * Helpers for the integration suites, which run inside a real extension host (test/integration/*): the open
 * workspace folder and the CLI the extension ships, run in another process. Only those suites import this file
 * (it needs `vscode`).
 */
import * as assert from 'node:assert/strict';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../src/core/commands/ids';
import { builtCliJson, runBuiltCli, type BuiltCliRun } from './builtCli';

/** The first workspace folder the host opened (the test workspace). */
export function workspaceDir(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'no workspace folder is open');
  return folder.uri.fsPath;
}

/** `out/cli.js` of the extension under test: the CLI it ships. */
export function extensionCliJs(): string {
  const extension = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(extension, `extension ${EXTENSION_ID} is not installed`);
  return join(extension.extensionPath, 'out', 'cli.js');
}

/** `loopx <args>` in another process, in the workspace folder unless `cwd` says otherwise. */
export function loopx(args: readonly string[], cwd: string = workspaceDir()): BuiltCliRun {
  return runBuiltCli(extensionCliJs(), args, { cwd });
}

/** `loopx <args> --format json` in another process: asserts it exits 0 and returns the parsed output. */
export function loopxJson(args: readonly string[], cwd: string = workspaceDir()): Record<string, unknown> {
  return builtCliJson(extensionCliJs(), args, { cwd });
}
