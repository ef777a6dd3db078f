import * as l10n from '@vscode/l10n';
import uPlot from 'uplot';
import { el, formatTime, arrowNavigation, vscodeApi } from '../../shared/browser/dom';
import { useL10nBundle } from '../../shared/browser/l10n';
import { quotaStateWord } from '../../../common/words';
import { cumulativeSpend, hostToDetailSchema, type DetailState, type GoalDetail } from '../protocol';

/** The goal-detail webview: spend over the quota window (uPlot), the todo frontier, the latest runs and the event timeline. */

const vscode = vscodeApi<DetailState>();
const root = document.getElementById('root') as HTMLElement;
const charts: uPlot[] = [];

function themeColor(name: string, fallbackVar: string): string {
  const style = getComputedStyle(document.body);
  return (style.getPropertyValue(name) || style.getPropertyValue(fallbackVar)).trim() || 'currentColor';
}

function chart(title: string, x: number[], used: number[], limit: number, unit: string): HTMLElement {
  const box = el('div', { class: 'chart', role: 'img' });
  box.setAttribute(
    'aria-label',
    l10n.t('{0}: {1} of {2} {3} used in the window', title, used[used.length - 1] ?? 0, limit, unit),
  );
  const fg = themeColor('--vscode-foreground', '--vscode-editor-foreground');
  const grid = themeColor('--vscode-widget-border', '--vscode-panel-border');
  const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
  const opts: uPlot.Options = {
    title,
    width: Math.max(320, Math.min(900, root.clientWidth - 24)),
    height: 200,
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(limit, max) * 1.1 || 1] } },
    axes: [axis, { ...axis, label: unit }],
    series: [
      {},
      {
        label: l10n.t('used'),
        stroke: themeColor('--vscode-charts-blue', '--vscode-foreground'),
        width: 2,
        paths: uPlot.paths.stepped?.({ align: 1 }),
      },
      {
        label: l10n.t('limit'),
        stroke: themeColor('--vscode-charts-red', '--vscode-errorForeground'),
        width: 1,
        dash: [6, 4],
      },
    ],
  };
  charts.push(new uPlot(opts, [x, used, x.map(() => limit)], box));
  return box;
}

function frontierNode(detail: GoalDetail): HTMLElement {
  const parts = [
    ['open', detail.frontier.open, l10n.t('open')],
    ['claimed', detail.frontier.claimed, l10n.t('claimed')],
    ['blocked', detail.frontier.blocked, l10n.t('blocked')],
    ['done', detail.frontier.done, l10n.t('done')],
  ] as const;
  const total = parts.reduce((sum, [, n]) => sum + n, 0);
  const bar = el('div', { class: 'frontier', role: 'img' });
  bar.setAttribute('aria-label', parts.map(([, n, word]) => `${n} ${word}`).join(', '));
  const legend = el('div', { class: 'legend' });
  for (const [name, n, word] of parts) {
    const span = el('span', { class: name });
    // CSSOM, not a style attribute: allowed by the webview's CSP.
    span.style.width = total === 0 ? '0' : `${(100 * n) / total}%`;
    bar.append(span);
    legend.append(el('span', {}, el('span', { class: `swatch ${name}` }), `${word} ${n}`));
  }
  const wrap = el('section', {}, el('h2', {}, l10n.t('Todo frontier')), bar, legend);
  return wrap;
}

function runsNode(detail: GoalDetail): HTMLElement {
  const list = el('ol', { class: 'timeline' });
  for (const run of detail.runs) {
    const item = el(
      'li',
      { tabindex: '0' },
      el('strong', {}, run.classification ?? l10n.t('run')),
      ` · ${formatTime(run.generated_at)}`,
      run.agent_id === null ? null : ` · ${run.agent_id}`,
      run.recommended_action === null ? null : el('div', { class: 'muted' }, run.recommended_action),
    );
    list.append(item);
  }
  return el(
    'section',
    {},
    el('h2', {}, l10n.t('Latest runs')),
    detail.runs.length === 0 ? el('p', { class: 'muted' }, l10n.t('No runs recorded yet.')) : list,
  );
}

/** The rollout event log by turn: each turn a group, its events in order (text nodes only). */
function eventsNode(detail: GoalDetail): HTMLElement {
  const { timeline } = detail;
  const section = el('section', { class: 'events' }, el('h2', {}, l10n.t('Event timeline')));
  if (timeline.error !== null) {
    section.append(
      el('p', { class: 'result failed', role: 'alert' }, l10n.t('The event log cannot be read: {0}', timeline.error)),
    );
    return section;
  }
  if (timeline.turns.length === 0) {
    section.append(
      el(
        'p',
        { class: 'muted' },
        timeline.log_exists
          ? l10n.t('The event log has no events.')
          : l10n.t('No events yet: the event log is written by should-run, refresh-state, spends and todo changes.'),
      ),
    );
    return section;
  }
  section.append(
    el(
      'p',
      { class: 'muted' },
      timeline.total_events === 1
        ? l10n.t('1 event in the log; the latest by turn, newest first.')
        : l10n.t('{0} events in the log; the latest by turn, newest first.', timeline.total_events),
    ),
  );
  for (const turn of timeline.turns) {
    const heading =
      turn.turn_instance_id === null ? l10n.t('Outside a turn') : l10n.t('Turn {0}', turn.turn_instance_id);
    const list = el('ol', { class: 'timeline' });
    for (const event of turn.events)
      list.append(
        el(
          'li',
          { tabindex: '0', class: `event event-${event.kind.replace(/[^a-z0-9_]/gi, '')}` },
          el('strong', {}, event.kind),
          ` · ${formatTime(event.at)}`,
          event.todo_id === null ? null : ` · ${event.todo_id}`,
          el('div', { class: 'muted' }, event.text),
        ),
      );
    section.append(
      el(
        'div',
        { class: 'turn' },
        el('h3', {}, heading),
        el(
          'p',
          { class: 'muted' },
          [
            turn.agent_id,
            turn.event_count === 1 ? l10n.t('1 event') : l10n.t('{0} events', turn.event_count),
            turn.first_at === null ? null : `${formatTime(turn.first_at)} – ${formatTime(turn.last_at)}`,
          ]
            .filter(Boolean)
            .join(' · '),
        ),
        list,
      ),
    );
  }
  return section;
}

function render(detail: GoalDetail): void {
  for (const c of charts.splice(0)) c.destroy();
  root.replaceChildren();
  const q = detail.quota;
  const series = cumulativeSpend(detail);
  root.append(
    el('h1', {}, detail.goal_name === detail.goal_id ? detail.goal_id : `${detail.goal_name} (${detail.goal_id})`),
    el(
      'p',
      { class: 'summary' },
      `${l10n.t('Quota {0}: {1} of {2} slots in the last {3} h', quotaStateWord(q.state), q.spent_slots, q.allowed_slots, q.window_hours)}${q.exceeded ? l10n.t(' — limit reached') : q.warn ? l10n.t(' — near the limit') : ''}. ${q.reason}`,
    ),
    el('h2', {}, l10n.t('Spend over the quota window')),
    chart(l10n.t('Slots'), series.x, series.slots, q.allowed_slots, l10n.t('slots')),
  );
  if (q.cost !== null) root.append(chart(l10n.t('Cost'), series.x, series.cost, q.cost.limit, 'USD'));
  if (q.tokens !== null)
    root.append(chart(l10n.t('Tokens'), series.x, series.tokens, q.tokens.limit, l10n.t('tokens')));
  root.append(frontierNode(detail), runsNode(detail), eventsNode(detail));
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const parsed = hostToDetailSchema.safeParse(event.data);
  if (!parsed.success) return;
  if (parsed.data.type === 'render') {
    useL10nBundle(parsed.data.l10n);
    vscode.setState(parsed.data.ref);
    render(parsed.data.detail);
  } else root.replaceChildren(el('p', { class: 'result failed', role: 'alert' }, parsed.data.message));
});

arrowNavigation(root, '.timeline li');
vscode.postMessage({ type: 'ready' });
