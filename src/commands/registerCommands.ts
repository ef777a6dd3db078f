import * as vscode from 'vscode';
import { paletteCommandId, paletteCommands, type PaletteCommandKey } from '../core/commands/catalog';

export type PaletteHandlers = Record<PaletteCommandKey, (...args: unknown[]) => unknown>;

/**
 * Registers one VS Code command per palette entry of the catalog. The handler map is typed by the
 * catalog, so a catalog entry without a handler (or a handler without an entry) fails to compile.
 */
export function registerPaletteCommands(handlers: PaletteHandlers, log: vscode.LogOutputChannel): vscode.Disposable[] {
  return paletteCommands().map((spec) => {
    const handler = handlers[spec.key as PaletteCommandKey];
    return vscode.commands.registerCommand(paletteCommandId(spec), async (...args: unknown[]) => {
      log.trace(`command ${paletteCommandId(spec)}`);
      try {
        return await handler(...args);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        log.error(`${paletteCommandId(spec)} failed: ${message}`);
        const choice = await vscode.window.showErrorMessage(`LoopX: ${message}`, 'Show Log');
        if (choice === 'Show Log') log.show();
        return undefined;
      }
    });
  });
}
