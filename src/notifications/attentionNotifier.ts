import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import { paletteCommandId } from '../core/commands/catalog';
import { SETTINGS } from '../core/commands/ids';
import {
  attentionEvents,
  coalesceEvents,
  DEFAULT_LEASE_WARNING_MS,
  withoutOwnActions,
  type AttentionEvent,
  type AttentionKind,
  type AttentionNotice,
  type AttentionSnapshot,
  type OwnActionMark,
} from '../core/ops/gate';
import { hostClock } from '../core/ops/hostSetup';
import { observeOperations, type OperationRan } from '../core/ops/run';
import { attentionSnapshot } from '../workspace/attention';
import type { WorkspaceModel } from '../workspace/workspaceModel';

/**
 * Notifications for what happened outside this window and needs the person: a gate opened or passed
 * its due time, a quota reached, a replan due, a goal stopped or a turn failed, a lease about to
 * expire. Each model change (and a clock tick, for due times and leases) is compared with the
 * previous snapshot (`attentionEvents`); what this window itself just did is dropped (every
 * operation it runs leaves a mark); a burst is shown as one notification per kind. Each kind has
 * its setting (`loopx.notifications.<kind>`).
 */

/** A burst: events are held until none came for this long (at most `MAX_HOLD_MS` after the first). */
const BURST_QUIET_MS = 800;
const MAX_HOLD_MS = 4_000;
const TICK_MS = 30_000;
/** How long an operation of this window covers the events of what it touched. */
const OWN_ACTION_MS = 60_000;

const SETTING_OF_KIND: Record<AttentionKind, string> = {
  gate_opened: SETTINGS.notifyGateOpened,
  gate_overdue: SETTINGS.notifyGateOverdue,
  quota_reached: SETTINGS.notifyQuotaReached,
  replan_due: SETTINGS.notifyReplanDue,
  loop_stopped: SETTINGS.notifyLoopStopped,
  lease_expiring: SETTINGS.notifyLeaseExpiring,
};

/** Which events an operation of this window makes: its marks (todo ids it touched, or the whole goal for some kinds). */
function marksOf(ran: OperationRan, nowMs: number): OwnActionMark[] {
  const goalId = typeof ran.args['goalId'] === 'string' ? ran.args['goalId'] : undefined;
  if (goalId === undefined || ran.registryPath === undefined) return [];
  const goalKey = `${ran.registryPath}#${goalId}`;
  const untilMs = nowMs + OWN_ACTION_MS;
  const result = ran.result as { todo_id?: unknown; added_todos?: { todo_id?: unknown }[] };
  const todoIds = new Set<string>();
  if (typeof ran.args['todoId'] === 'string') todoIds.add(ran.args['todoId']);
  if (typeof result.todo_id === 'string') todoIds.add(result.todo_id);
  for (const added of result.added_todos ?? []) if (typeof added.todo_id === 'string') todoIds.add(added.todo_id);
  const marks: OwnActionMark[] = [...todoIds].map((subject) => ({ goalKey, subject, untilMs }));
  if (ran.key === 'pauseGoal' || ran.key === 'resumeGoal' || ran.key === 'setStopFlag')
    marks.push({ goalKey, kinds: ['loop_stopped'], untilMs });
  if (ran.key === 'configureGoal') marks.push({ goalKey, kinds: ['quota_reached'], untilMs });
  // A turn or loop run here shows its own outcome (stop reason, failure, quota) when it ends.
  if (ran.key === 'turnRunOnce' || ran.key === 'turnLoop')
    marks.push({ goalKey, kinds: ['quota_reached', 'loop_stopped', 'replan_due'], untilMs });
  return marks;
}

export interface ShownNotification {
  kind: AttentionKind;
  message: string;
  buttons: string[];
}

export class AttentionNotifier extends Disposable {
  private previous: AttentionSnapshot | null = null;
  private marks: OwnActionMark[] = [];
  private held: AttentionEvent[] = [];
  private heldSince: number | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private shown: ShownNotification[] = [];

  constructor(
    private readonly model: WorkspaceModel,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this.register(observeOperations((ran) => this.marks.push(...marksOf(ran, this.now()))));
    this.register(model.onDidChange(() => this.evaluate()));
    const tick = setInterval(() => this.evaluate(), TICK_MS);
    this.register({ dispose: () => (clearInterval(tick), clearTimeout(this.flushTimer)) });
    // Hidden command for the tests: the notifications shown since the last call.
    this.register(
      vscode.commands.registerCommand('_loopx.takeNotifications', () => {
        const taken = this.shown;
        this.shown = [];
        return taken;
      }),
    );
  }

  private now(): number {
    return hostClock(process.env).now().getTime();
  }

  /** Compares the model with the previous snapshot; the first snapshot (startup) is only the baseline. */
  private evaluate(): void {
    // Loops of this window: their goals' stops and quota are the loop's own outcome.
    for (const goal of this.model.goals)
      if (this.model.isLoopRunning(goal))
        this.marks.push({
          goalKey: `${goal.registryPath}#${goal.goalId}`,
          kinds: ['quota_reached', 'loop_stopped', 'replan_due'],
          untilMs: this.now() + OWN_ACTION_MS,
        });
    const now = this.now();
    const next = attentionSnapshot(this.model, now);
    const events = attentionEvents(this.previous, next, { leaseWarningMs: DEFAULT_LEASE_WARNING_MS });
    // Goals still being read keep their previous facts, so their gates are not news when their status arrives.
    const kept = new Map(next.goals);
    for (const [key, facts] of this.previous?.goals ?? []) if (!kept.has(key)) kept.set(key, facts);
    this.previous = { atMs: now, goals: kept };
    this.marks = this.marks.filter((mark) => mark.untilMs >= now);
    const news = withoutOwnActions(events, this.marks, now).filter((event) => this.enabled(event.kind));
    if (events.length > 0)
      this.log.trace(`attention: ${events.length} event(s), ${news.length} to show after own actions and settings`);
    if (news.length === 0) return;
    this.held.push(...news);
    this.heldSince ??= now;
    clearTimeout(this.flushTimer);
    const wait = Math.max(0, Math.min(BURST_QUIET_MS, this.heldSince + MAX_HOLD_MS - now));
    this.flushTimer = setTimeout(() => this.flush(), wait);
  }

  private enabled(kind: AttentionKind): boolean {
    return vscode.workspace.getConfiguration(SETTINGS.section).get<boolean>(SETTING_OF_KIND[kind], true);
  }

  private flush(): void {
    const events = this.held;
    this.held = [];
    this.heldSince = undefined;
    for (const notice of coalesceEvents(events)) void this.show(notice);
  }

  private async show(notice: AttentionNotice): Promise<void> {
    const { message, buttons, warning } = this.present(notice);
    this.shown.push({ kind: notice.kind, message, buttons: buttons.map((b) => b.label) });
    this.log.info(`notification (${notice.kind}): ${message}`);
    const show = warning ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    const choice = await show(`LoopX: ${message}`, ...buttons.map((b) => b.label));
    const button = buttons.find((b) => b.label === choice);
    if (button !== undefined) await button.run();
  }

  private goalOf(event: AttentionEvent) {
    return this.model.findGoal(event.goalId, event.registryPath);
  }

  private command(key: string, arg?: unknown): () => Thenable<unknown> {
    return () => vscode.commands.executeCommand(paletteCommandId({ key }), arg);
  }

  private present(notice: AttentionNotice): {
    message: string;
    warning: boolean;
    buttons: { label: string; run: () => Thenable<unknown> }[];
  } {
    const [first] = notice.events;
    const count = notice.events.length;
    const inbox = { label: vscode.l10n.t('Open Gate Inbox'), run: this.command('gateInbox') };
    if (first === undefined) return { message: '', warning: false, buttons: [] };
    const goal = this.goalOf(first);
    const gateNode =
      goal === undefined ? undefined : { kind: 'gate', goal, gate: { todo_id: first.subject, title: first.title } };
    const gateButtons =
      gateNode === undefined
        ? [inbox]
        : [
            { label: vscode.l10n.t('Approve'), run: this.command('gateApprove', gateNode) },
            { label: vscode.l10n.t('Reject'), run: this.command('gateReject', gateNode) },
            { label: vscode.l10n.t('Open'), run: this.command('openInStateFile', gateNode) },
          ];
    switch (notice.kind) {
      case 'gate_opened':
        return count === 1
          ? {
              message: vscode.l10n.t('"{0}" needs your decision ({1}).', first.title, first.goalId),
              warning: false,
              buttons: gateButtons,
            }
          : { message: vscode.l10n.t('{0} gates opened.', count), warning: false, buttons: [inbox] };
      case 'gate_overdue':
        return count === 1
          ? {
              message: vscode.l10n.t('"{0}" is past its due time {1} ({2}).', first.title, first.detail, first.goalId),
              warning: true,
              buttons: gateButtons,
            }
          : { message: vscode.l10n.t('{0} gates are past their due time.', count), warning: true, buttons: [inbox] };
      case 'quota_reached': {
        const buttons = [
          { label: vscode.l10n.t('Open Quota'), run: this.command('quotaStatus', { goalId: first.goalId }) },
          { label: vscode.l10n.t('Configure'), run: this.command('configureGoal', { goalId: first.goalId }) },
        ];
        return count === 1
          ? { message: vscode.l10n.t('{0} reached its quota: {1}', first.goalId, first.detail), warning: true, buttons }
          : {
              message: vscode.l10n.t('{0} goals reached their quota.', count),
              warning: true,
              buttons: [{ label: vscode.l10n.t('Open Quota'), run: this.command('quotaOverview') }],
            };
      }
      case 'replan_due': {
        const buttons = [
          { label: vscode.l10n.t('Open Goal'), run: this.command('showGoalDetail', { goalId: first.goalId }) },
        ];
        return count === 1
          ? {
              message:
                first.subject === ''
                  ? vscode.l10n.t('A replan is due on {0}.', first.goalId)
                  : vscode.l10n.t('A replan is due on {0} for {1}.', first.goalId, first.subject),
              warning: false,
              buttons,
            }
          : { message: vscode.l10n.t('{0} replans are due.', count), warning: false, buttons };
      }
      case 'loop_stopped': {
        const buttons = [{ label: vscode.l10n.t('Show Log'), run: async () => this.log.show() }];
        if (count > 1)
          return { message: vscode.l10n.t('{0} goals stopped or failed a turn.', count), warning: true, buttons };
        return {
          message:
            first.subject === 'stopped'
              ? vscode.l10n.t('{0} was stopped.', first.goalId)
              : first.detail === ''
                ? vscode.l10n.t('A turn on {0} failed: {1}.', first.goalId, first.title)
                : vscode.l10n.t('A turn of {0} on {1} failed: {2}.', first.detail, first.goalId, first.title),
          warning: true,
          buttons,
        };
      }
      case 'lease_expiring': {
        const buttons =
          goal === undefined
            ? []
            : [
                {
                  label: vscode.l10n.t('Renew Lease'),
                  run: this.command('taskLeaseRenew', { goal, todoId: first.subject }),
                },
              ];
        return count === 1
          ? {
              message: vscode.l10n.t(
                'The lease of {0} on {1} expires at {2}.',
                first.title,
                first.subject,
                first.detail,
              ),
              warning: false,
              buttons,
            }
          : { message: vscode.l10n.t('{0} task leases are about to expire.', count), warning: false, buttons: [] };
      }
    }
  }
}
