import * as vscode from 'vscode';
import { EXTENSION_ID } from '../core/commands/ids';

let titles: Map<string, string> | undefined;

/**
 * A palette command's title in the display language. The catalog holds the English title; VS Code hands the extension
 * its manifest with the `%key%` strings of package.nls.<language>.json already put in, so the palette's translated
 * titles are read from there (English when no translation is loaded).
 */
export function commandTitle(commandId: string, english: string): string {
  if (titles === undefined) {
    const manifest = vscode.extensions.getExtension(EXTENSION_ID)?.packageJSON as
      { contributes?: { commands?: { command: string; title: string }[] } } | undefined;
    titles = new Map((manifest?.contributes?.commands ?? []).map((c) => [c.command, c.title]));
  }
  const title = titles.get(commandId);
  return title === undefined || /^%.*%$/.test(title) ? english : title;
}
