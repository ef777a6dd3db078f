import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

/**
 * The HTML shell of every LoopX webview: a strict Content-Security-Policy with a fresh nonce per
 * render, one bundled script and stylesheets from the extension's own folders, and no data in the
 * markup (the script receives everything by message and builds the DOM with text nodes).
 */

export interface WebviewShell {
  title: string;
  /** Bundled scripts under out/webviews/. */
  script: string;
  /** Stylesheets: `media/<name>` or `out/webviews/<name>`. */
  styles: string[];
}

export function newNonce(): string {
  return randomBytes(18).toString('base64url');
}

/** Where a webview may load files from: the stylesheets in media/ and the bundles in out/webviews/. */
export function webviewRoots(extensionUri: vscode.Uri): vscode.Uri[] {
  return [vscode.Uri.joinPath(extensionUri, 'media'), vscode.Uri.joinPath(extensionUri, 'out', 'webviews')];
}

export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return { enableScripts: true, localResourceRoots: webviewRoots(extensionUri) };
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `img-src ${cspSource}`,
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
}

export function shellHtml(webview: vscode.Webview, extensionUri: vscode.Uri, shell: WebviewShell): string {
  const nonce = newNonce();
  const asset = (path: string) =>
    webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, ...path.split('/'))).toString();
  const styles = shell.styles.map((s) => `<link rel="stylesheet" href="${attr(asset(s))}">`).join('\n    ');
  return `<!DOCTYPE html>
<html lang="${attr(vscode.env.language)}">
  <head>
    <meta charset="UTF-8">
    <meta http-equiv="Content-Security-Policy" content="${attr(contentSecurityPolicy(webview.cspSource, nonce))}">
    <meta name="viewport" content="width=device-width, initial-scale=1.0">
    ${styles}
    <title>${attr(shell.title)}</title>
  </head>
  <body>
    <main id="root" aria-live="polite"></main>
    <script nonce="${nonce}" src="${attr(asset(`out/webviews/${shell.script}`))}"></script>
  </body>
</html>`;
}

/** Escapes text for an HTML attribute or text node (the shell puts only our own strings there). */
export function attr(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
