import { arrowNavigation, el, formatTime, vscodeApi } from '../../shared/browser/dom';
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
  const heading = el('h1', {}, 'Projection warnings');
  const summary = el(
    'p',
    { class: 'summary' },
    state.cards.length === 0
      ? `No warnings${goalCount === null ? '' : ` across ${goalCount} goal${goalCount === 1 ? '' : 's'}`}: the durable Next Action, the runs and the todos agree.`
      : `${state.cards.length} warning${state.cards.length === 1 ? '' : 's'}${goalCount === null ? '' : ` across ${goalCount} goal${goalCount === 1 ? '' : 's'}`}. Use ↑/↓ to move between cards.`,
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

function cardNode(card: WarningCard): HTMLElement {
  const node = el('article', { class: `card severity-${card.severity}`, tabindex: '0', role: 'listitem' });
  node.dataset['key'] = card.key;
  node.setAttribute('aria-label', `${card.severity}: ${card.title} — ${card.goal_name}`);
  node.addEventListener('focus', () => {
    state = { ...state, focused: card.key };
    vscode.setState(state);
  });
  node.append(
    el(
      'header',
      {},
      el('span', { class: `badge badge-${card.severity}` }, card.severity),
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
          el('blockquote', {}, text.value ?? '(none)'),
          el('p', { class: 'when' }, text.written_at === null ? '' : `written ${formatTime(text.written_at)}`),
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
