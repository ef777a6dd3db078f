import * as vscode from 'vscode';
import { paletteCommandId, paletteCommands, type CommandSpec, type PaletteCommandKey } from '../core/commands/catalog';
import { Cancelled } from './pickers';

export type PaletteHandlers = Record<PaletteCommandKey, (...args: unknown[]) => unknown>;

/**
 * Registers one VS Code command per palette entry of the catalog. The handler map is typed by the
 * catalog, so a catalog entry without a handler (or a handler without an entry) fails to compile.
 * The catalog's mutation policy also drives workspace trust: only read-only commands run in an
 * untrusted workspace.
 */
export function registerPaletteCommands(handlers: PaletteHandlers, log: vscode.LogOutputChannel): vscode.Disposable[] {
  return paletteCommands().map((spec) => {
    const handler = handlers[spec.key as PaletteCommandKey];
    const id = paletteCommandId(spec);
    return vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      log.trace(`command ${id}`);
      if (needsTrust(spec) && !vscode.workspace.isTrusted) {
        const choice = await vscode.window.showWarningMessage(
          `LoopX: "${spec.title}" changes files, and this workspace is not trusted. Trust the workspace to use it.`,
          'Manage Workspace Trust',
        );
        if (choice) await vscode.commands.executeCommand('workbench.trust.manage');
        return undefined;
      }
      try {
        return await handler(...args);
      } catch (error) {
        if (error instanceof Cancelled) return undefined;
        const message = error instanceof Error ? error.message : String(error);
        log.error(`${id} failed: ${message}`);
        void vscode.window.showErrorMessage(`LoopX: ${message}`, 'Show Log').then((choice) => {
          if (choice === 'Show Log') log.show();
        });
        return undefined;
      }
    });
  });
}

export function needsTrust(spec: Pick<CommandSpec, 'mutation'>): boolean {
  return spec.mutation !== 'read_only';
}
