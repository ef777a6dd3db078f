import * as l10n from '@vscode/l10n';
import * as vscode from 'vscode';

/**
 * Hands the display language's bundle (l10n/bundle.l10n.<language>.json, loaded by VS Code) to `@vscode/l10n`, which
 * the modules without `vscode` use (view models, status words). In English VS Code loads no bundle: `l10n.t` then
 * returns the English message.
 */
export function configureL10n(): void {
  const bundle = vscode.l10n.bundle;
  if (bundle !== undefined) l10n.config({ contents: bundle });
}

/** The bundle a webview script needs to show the display language (undefined in English). */
export function webviewL10nBundle(): Record<string, string> | undefined {
  return vscode.l10n.bundle;
}
