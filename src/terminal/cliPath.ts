import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import { SETTINGS } from '../core/commands/ids';
import {
  cliOnPathMode,
  findOtherLoopx,
  launcherFileName,
  LOOPX_CLI_VARIABLE,
  terminalCliPlan,
  type CliOnPathMode,
} from './cliOnPath';

/** What the integrated terminals get now (read by the hidden `_loopx.terminalCliPath`). */
export interface TerminalCliState {
  /** The launcher's folder, or undefined when it could not be written. */
  binDir: string | undefined;
  /** The launcher (`LOOPX_CLI`'s value). */
  launcher: string | undefined;
  mode: CliOnPathMode;
  /** The other `loopx` found on the extension host's PATH when the collection was last applied. */
  otherLoopx: string | undefined;
  /** Whether our folder is prepended to PATH. */
  prependPath: boolean;
}

/**
 * Gives the editor's integrated terminals LoopX for VS Code's CLI, so `loopx …` and the slash prompts
 * installed for terminal agents (Claude Code, Codex) work in VS Code's terminal. The CLI is the
 * extension's own `out/cli.js`, started by the extension host's Node (with `ELECTRON_RUN_AS_NODE`,
 * which the desktop's Electron needs and plain Node ignores) through a small launcher in the
 * extension's global storage, rewritten only when it differs. Every terminal gets `LOOPX_CLI` (the
 * launcher); the launcher's folder goes first on PATH as `loopx.terminal.cliOnPath` says (by default
 * only when no other `loopx`, such as the Python LoopX, is on the PATH). Re-applied when the setting
 * changes. A launcher that cannot be written is logged and the extension goes on.
 */
export class TerminalCli extends Disposable {
  private current: TerminalCliState;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    const binDir = writeLauncher(context, log);
    this.current = {
      binDir,
      launcher: binDir === undefined ? undefined : join(binDir, launcherFileName(process.platform)),
      mode: 'whenMissing',
      otherLoopx: undefined,
      prependPath: false,
    };
    this.apply();
    this.register(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(`${SETTINGS.section}.${SETTINGS.terminalCliOnPath}`)) this.apply();
      }),
    );
  }

  get state(): TerminalCliState {
    return { ...this.current };
  }

  /** Sets the terminals' environment from the setting and the PATH as they are now. */
  private apply(): void {
    const { binDir, launcher } = this.current;
    const collection = this.context.environmentVariableCollection;
    collection.clear();
    if (binDir === undefined || launcher === undefined) return;
    const mode = cliOnPathMode(
      vscode.workspace.getConfiguration(SETTINGS.section).get<string>(SETTINGS.terminalCliOnPath),
    );
    // The lookup runs only when its answer matters (a few stat calls per PATH folder otherwise).
    const otherLoopx =
      mode === 'whenMissing'
        ? findOtherLoopx({
            path: process.env['PATH'],
            exclude: [binDir],
            platform: process.platform,
            pathext: process.env['PATHEXT'],
          })
        : undefined;
    const plan = terminalCliPlan(mode, otherLoopx);
    collection.replace(LOOPX_CLI_VARIABLE, launcher);
    if (plan.prependPath) collection.prepend('PATH', `${binDir}${delimiter}`);
    collection.description = plan.prependPath
      ? vscode.l10n.t("Puts LoopX for VS Code's `loopx` first on the PATH and sets `LOOPX_CLI` to it.")
      : vscode.l10n.t(
          "Sets `LOOPX_CLI` to LoopX for VS Code's CLI; `loopx` stays the one on your PATH ({0}).",
          plan.reason,
        );
    this.current = { binDir, launcher, mode, otherLoopx, prependPath: plan.prependPath };
    this.log.info(
      `terminals: LOOPX_CLI=${launcher}; ${plan.prependPath ? 'loopx on PATH' : 'PATH unchanged'} (${plan.reason})`,
    );
  }
}

/** Writes the launcher into the extension's global storage; its folder, or undefined on failure (logged). */
function writeLauncher(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): string | undefined {
  try {
    const binDir = join(context.globalStorageUri.fsPath, 'bin');
    const cli = join(context.extensionUri.fsPath, 'out', 'cli.js');
    const text =
      process.platform === 'win32'
        ? `@echo off\r\nset ELECTRON_RUN_AS_NODE=1\r\n"${process.execPath}" "${cli}" %*\r\n`
        : `#!/bin/sh\nELECTRON_RUN_AS_NODE=1 exec '${shellQuoted(process.execPath)}' '${shellQuoted(cli)}' "$@"\n`;
    mkdirSync(binDir, { recursive: true });
    const file = join(binDir, launcherFileName(process.platform));
    if (!existsSync(file) || readFileSync(file, 'utf8') !== text) writeFileSync(file, text, { mode: 0o755 });
    return binDir;
  } catch (error) {
    log.warn(
      `could not write the loopx launcher for terminals: ${error instanceof Error ? error.message : String(error)}`,
    );
    return undefined;
  }
}

/** A path inside single quotes for sh: a quote in it becomes '\''. */
function shellQuoted(value: string): string {
  return value.replace(/'/g, `'\\''`);
}
