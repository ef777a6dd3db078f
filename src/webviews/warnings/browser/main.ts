import * as l10n from '@vscode/l10n';
import { arrowNavigation, el, formatTime, vscodeApi } from '../../shared/browser/dom';
import { useL10nBundle } from '../../shared/browser/l10n';
import {
  hostToWarningsSchema,
  warningsStateSchema,
  type WarningCard,
  type WarningsState,
  type WarningsToHost,
} from '../protocol';

/** The projection-warnings webview: cards built from validated messages, text nodes only. */

const vscode = vscodeApi<WarningsState>();
const root = document.getElementById('root') as HTMLElement;
const restored = warningsStateSchema.safeParse(vscode.getState() ?? {});
let state: WarningsState = restored.success ? restored.data : { cards: [], focused: null };
let goalCount: number | null = null;
const results = new Map<string, { ok: boolean; message: string }>();

function send(message: WarningsToHost): void {
  vscode.postMessage(message);
}

function render(): void {
  root.replaceChildren();
  const heading = el('h1', {}, l10n.t('Projection warnings'));
  const across =
    goalCount === null ? '' : goalCount === 1 ? l10n.t(' across 1 goal') : l10n.t(' across {0} goals', goalCount);
  const summary = el(
    'p',
    { class: 'summary' },
    state.cards.length === 0
      ? l10n.t('No warnings{0}: the durable Next Action, the runs and the todos agree.', across)
      : state.cards.length === 1
        ? l10n.t('1 warning{0}. Use ↑/↓ to move between cards.', across)
        : l10n.t('{0} warnings{1}. Use ↑/↓ to move between cards.', state.cards.length, across),
  );
  const list = el('div', { class: 'cards', role: 'list' });
  for (const card of state.cards) list.append(cardNode(card));
  root.append(heading, summary, list);
  if (state.focused !== null) {
    const focused = Array.from(list.querySelectorAll<HTMLElement>('.card')).find(
      (c) => c.dataset['key'] === state.focused,
    );
    focused?.focus();
  }
}

function severityWord(severity: WarningCard['severity']): string {
  switch (severity) {
    case 'error':
      return l10n.t('error');
    case 'warning':
      return l10n.t('warning');
    case 'info':
      return l10n.t('info');
  }
}

function cardNode(card: WarningCard): HTMLElement {
  const node = el('article', { class: `card severity-${card.severity}`, tabindex: '0', role: 'listitem' });
  node.dataset['key'] = card.key;
  node.setAttribute('aria-label', `${severityWord(card.severity)}: ${card.title} — ${card.goal_name}`);
  node.addEventListener('focus', () => {
    state = { ...state, focused: card.key };
    vscode.setState(state);
  });
  node.append(
    el(
      'header',
      {},
      el('span', { class: `badge badge-${card.severity}` }, severityWord(card.severity)),
      el(
        'span',
        { class: 'goal' },
        card.goal_name === card.goal_id ? card.goal_id : `${card.goal_name} (${card.goal_id})`,
      ),
    ),
    el('h2', {}, card.title),
    el('p', { class: 'message' }, card.message),
  );
  if (card.compared.length > 0) {
    const grid = el('div', { class: 'compared' });
    for (const text of card.compared) {
      grid.append(
        el(
          'section',
          { class: 'text' },
          el('h3', {}, text.label),
          el('blockquote', {}, text.value ?? l10n.t('(none)')),
          el(
            'p',
            { class: 'when' },
            text.written_at === null ? '' : l10n.t('written {0}', formatTime(text.written_at)),
          ),
        ),
      );
    }
    node.append(grid);
  }
  const actions = el('div', { class: 'actions' });
  for (const action of card.actions) {
    const button = el('button', { type: 'button', class: `action action-${action.kind}` }, action.label);
    if (action.detail !== null) button.title = action.detail;
    button.dataset['action'] = action.kind;
    button.addEventListener('click', () => send({ type: 'act', key: card.key, action: action.kind }));
    actions.append(button);
  }
  node.append(actions);
  const result = results.get(card.key);
  if (result)
    node.append(el('p', { class: result.ok ? 'result ok' : 'result failed', role: 'status' }, result.message));
  return node;
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const parsed = hostToWarningsSchema.safeParse(event.data);
  if (!parsed.success) return; // not ours, or malformed: ignored
  const message = parsed.data;
  if (message.type === 'render') {
    useL10nBundle(message.l10n);
    state = { ...state, cards: message.cards };
    vscode.setState(state);
    goalCount = message.goal_count;
    render();
  } else {
    results.set(message.key, { ok: message.ok, message: message.message });
    render();
  }
});

arrowNavigation(root, '.card');
render();
send({ type: 'ready' });
