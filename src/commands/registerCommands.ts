import * as vscode from 'vscode';
import { paletteCommandId, paletteCommands, type CommandSpec, type PaletteCommandKey } from '../core/commands/catalog';
import { editorErrorText } from '../common/errorWording';
import { commandTitle } from './commandTitles';
import { Cancelled } from './pickers';

export type PaletteHandlers = Record<PaletteCommandKey, (...args: unknown[]) => unknown>;

/** A palette command that did not do its work: it failed, or it was refused in an untrusted workspace. */
export interface CommandFailure {
  command: string;
  kind: 'failed' | 'refused_untrusted';
  message: string;
}

/**
 * The command failures since activation, newest last (at most 50). The wrapper below shows them to
 * people as notifications and resolves with undefined; this record makes them observable to tests
 * and tools through the hidden command `_loopx.takeCommandFailures` (which returns and clears it).
 */
export class CommandFailures {
  private items: CommandFailure[] = [];

  record(failure: CommandFailure): void {
    this.items.push(failure);
    if (this.items.length > 50) this.items.shift();
  }

  take(): CommandFailure[] {
    const taken = this.items;
    this.items = [];
    return taken;
  }
}

/**
 * Registers one VS Code command per palette entry of the catalog. The handler map is typed by the
 * catalog, so a catalog entry without a handler (or a handler without an entry) fails to compile.
 * The catalog's mutation policy also drives workspace trust: only read-only commands run in an
 * untrusted workspace.
 */
export function registerPaletteCommands(
  handlers: PaletteHandlers,
  log: vscode.LogOutputChannel,
  failures: CommandFailures = new CommandFailures(),
): vscode.Disposable[] {
  return paletteCommands().map((spec) => {
    const handler = handlers[spec.key as PaletteCommandKey];
    const id = paletteCommandId(spec);
    return vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      log.trace(`command ${id}`);
      if (needsTrust(spec) && !vscode.workspace.isTrusted) {
        const message = vscode.l10n.t(
          '"{0}" changes files, and this workspace is not trusted. Trust the workspace to use it.',
          commandTitle(id, spec.title ?? spec.key),
        );
        failures.record({ command: id, kind: 'refused_untrusted', message });
        log.warn(`${id} refused: ${message}`);
        // Not awaited: the command resolves at once, whether or not anyone answers the notification.
        void vscode.window
          .showWarningMessage(`LoopX: ${message}`, vscode.l10n.t('Manage Workspace Trust'))
          .then((choice) => {
            if (choice) void vscode.commands.executeCommand('workbench.trust.manage');
          });
        return undefined;
      }
      try {
        return await handler(...args);
      } catch (error) {
        if (error instanceof Cancelled) return undefined;
        // The log keeps the core's own message; the notification says it in the editor's words.
        log.error(`${id} failed: ${error instanceof Error ? error.message : String(error)}`);
        const message = editorErrorText(error);
        failures.record({ command: id, kind: 'failed', message });
        const showLog = vscode.l10n.t('Show Log');
        void vscode.window.showErrorMessage(`LoopX: ${message}`, showLog).then((choice) => {
          if (choice === showLog) log.show();
        });
        return undefined;
      }
    });
  });
}

export function needsTrust(spec: Pick<CommandSpec, 'mutation'>): boolean {
  return spec.mutation !== 'read_only';
}
