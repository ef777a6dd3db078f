import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type * as vscode from 'vscode';

/**
 * Puts the `loopx` CLI on the PATH of the editor's integrated terminals, so `loopx …` and the
 * slash prompts installed for terminal agents (Claude Code, Codex) work in VS Code's terminal.
 * The CLI is the extension's own `out/cli.js`, started by the extension host's Node (with
 * `ELECTRON_RUN_AS_NODE`, which the desktop's Electron needs and plain Node ignores) through a
 * small launcher in the extension's global storage, rewritten only when it differs. Returns the
 * launcher's folder, or undefined when it could not be written (logged; the extension goes on).
 */
export function putCliOnTerminalPath(
  context: vscode.ExtensionContext,
  log: vscode.LogOutputChannel,
): string | undefined {
  try {
    const binDir = join(context.globalStorageUri.fsPath, 'bin');
    const cli = join(context.extensionUri.fsPath, 'out', 'cli.js');
    const files =
      process.platform === 'win32'
        ? { 'loopx.cmd': `@echo off\r\nset ELECTRON_RUN_AS_NODE=1\r\n"${process.execPath}" "${cli}" %*\r\n` }
        : {
            loopx: `#!/bin/sh\nELECTRON_RUN_AS_NODE=1 exec '${shellQuoted(process.execPath)}' '${shellQuoted(cli)}' "$@"\n`,
          };
    mkdirSync(binDir, { recursive: true });
    for (const [name, text] of Object.entries(files)) {
      const file = join(binDir, name);
      if (existsSync(file) && readFileSync(file, 'utf8') === text) continue;
      writeFileSync(file, text, { mode: 0o755 });
    }
    const collection = context.environmentVariableCollection;
    collection.description = 'Puts the `loopx` CLI on the PATH of integrated terminals.';
    collection.prepend('PATH', `${binDir}${delimiter}`);
    return binDir;
  } catch (error) {
    log.warn(`could not put loopx on the terminal PATH: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/** A path inside single quotes for sh: a quote in it becomes '\''. */
function shellQuoted(value: string): string {
  return value.replace(/'/g, `'\\''`);
}
