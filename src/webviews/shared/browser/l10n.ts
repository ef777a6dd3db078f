import * as l10n from '@vscode/l10n';

/**
 * A webview script has no `vscode.l10n`: the host sends the display language's bundle (the contents of
 * l10n/bundle.l10n.<language>.json) with its render message, and the script's `l10n.t` reads it from then on.
 * English sends none: `l10n.t` returns the English message.
 */
let configured = false;

export function useL10nBundle(bundle: Record<string, string> | undefined): void {
  if (bundle === undefined || configured) return;
  l10n.config({ contents: bundle });
  configured = true;
}
