import * as l10n from '@vscode/l10n';

/**
 * DOM helpers of the webview scripts. Text always goes in as text nodes (`textContent`), never as
 * markup, so goal texts holding HTML or `<script>` show as typed and run nothing.
 */

export interface VsCodeApi<State> {
  postMessage(message: unknown): void;
  getState(): State | undefined;
  setState(state: State): void;
}

declare function acquireVsCodeApi<State>(): VsCodeApi<State>;

export function vscodeApi<State>(): VsCodeApi<State> {
  return acquireVsCodeApi<State>();
}

type Attrs = Record<string, string>;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Node | string | null)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  for (const child of children) {
    if (child === null) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

export function formatTime(iso: string | null): string {
  if (iso === null) return l10n.t('unknown time');
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** Arrow keys move focus between the elements matching `selector` (cards, rows). */
export function arrowNavigation(root: HTMLElement, selector: string): void {
  root.addEventListener('keydown', (event) => {
    if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
    const items = Array.from(root.querySelectorAll<HTMLElement>(selector));
    const current = items.findIndex((item) => item === document.activeElement || item.contains(document.activeElement));
    if (items.length === 0) return;
    const next = event.key === 'ArrowDown' ? Math.min(items.length - 1, current + 1) : Math.max(0, current - 1);
    items[next]?.focus();
    event.preventDefault();
  });
}
