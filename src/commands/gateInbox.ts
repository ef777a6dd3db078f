import * as vscode from 'vscode';
import { gateSetDue, todoUpdate } from '../core/ops/todo';
import { runOperation } from '../core/ops/run';
import type { GoalSummary } from '../core/ops/goalRows';
import { inboxDescription, type GateInboxView, type InboxNode } from '../views/gateInboxView';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { editorEnvironment } from './operationRunner';
import { argumentField, askText, Cancelled } from './pickers';
import { decideGateCommand, openInStateFileCommand } from './treeActions';

/**
 * "Gate Inbox…" (a quick pick of every open gate, longest blocked first, then what to do with the
 * chosen one, all from the keyboard) and "Set Gate Due Time…". Deferring a gate here keeps it open:
 * it writes a note and a later due time (`todo update`), because `todo defer` would close the gate
 * and release the work it holds without a decision.
 */

const isString = (value: unknown): value is string => typeof value === 'string';

type GateAction = 'approve' | 'reject' | 'defer' | 'due' | 'open';

interface GateRef {
  goal: GoalSummary;
  todoId: string;
  title: string;
}

function refOf(arg: unknown, model: WorkspaceModel): GateRef | undefined {
  const node = arg as Partial<InboxNode> | undefined;
  if (node?.kind === 'gate' && node.goal && node.gate)
    return { goal: node.goal, todoId: node.gate.todo_id, title: node.gate.title };
  const goalId = argumentField(arg, 'goalId', isString);
  const todoId = argumentField(arg, 'todoId', isString);
  if (goalId === undefined || todoId === undefined) return undefined;
  const goal = model.findGoal(goalId, argumentField(arg, 'registryPath', isString));
  if (goal === undefined) throw new Error(vscode.l10n.t('No goal "{0}" in this workspace.', goalId));
  return { goal, todoId, title: todoId };
}

function nodeOf(ref: GateRef): { kind: 'gate'; goal: GoalSummary; gate: { todo_id: string; title: string } } {
  return { kind: 'gate', goal: ref.goal, gate: { todo_id: ref.todoId, title: ref.title } };
}

/** The due-time choices: a duration from now, a typed instant, or none. */
async function askDue(title: string): Promise<{ dueIn: string } | { dueAt: string } | { clear: true }> {
  const choices = [
    { label: vscode.l10n.t('In 1 hour'), due: { dueIn: '1h' } },
    { label: vscode.l10n.t('In 4 hours'), due: { dueIn: '4h' } },
    { label: vscode.l10n.t('In 1 day'), due: { dueIn: '1d' } },
    { label: vscode.l10n.t('In 1 week'), due: { dueIn: '1w' } },
    { label: vscode.l10n.t('At a time…'), due: 'ask' as const },
    { label: vscode.l10n.t('No due time'), due: { clear: true as const } },
  ];
  const picked = await vscode.window.showQuickPick(choices, { title, placeHolder: vscode.l10n.t('When is it due?') });
  if (!picked) throw new Cancelled();
  if (picked.due !== 'ask') return picked.due;
  const dueAt = await askText({
    title,
    prompt: vscode.l10n.t('An ISO-8601 instant, e.g. 2026-01-31T12:00:00Z'),
    validateInput: (value) => (value.trim() === '' ? vscode.l10n.t('The due time must not be empty.') : undefined),
  });
  return { dueAt };
}

/** "Set Gate Due Time…": on a gate node, `{ goalId, todoId, dueAt | dueIn | clear }`, or a pick from the inbox. */
export async function setGateDueCommand(model: WorkspaceModel, inbox: GateInboxView, arg: unknown): Promise<void> {
  const ref = refOf(arg, model) ?? (await pickGate(inbox, vscode.l10n.t('Set the due time of which gate?')));
  const given = {
    dueAt: argumentField(arg, 'dueAt', isString),
    dueIn: argumentField(arg, 'dueIn', isString),
    clear: argumentField(arg, 'clear', (v): v is boolean => v === true),
  };
  const due =
    given.dueAt !== undefined
      ? { dueAt: given.dueAt }
      : given.dueIn !== undefined
        ? { dueIn: given.dueIn }
        : given.clear === true
          ? { clear: true as const }
          : await askDue(vscode.l10n.t('Due time of "{0}"', ref.title));
  const result = await runOperation(
    gateSetDue,
    { goalId: ref.goal.goalId, todoId: ref.todoId, ...due },
    editorEnvironment(ref.goal.registryPath),
  );
  const dueAt = result.todo_item.metadata['next_due_at'];
  void vscode.window.showInformationMessage(
    dueAt === undefined
      ? vscode.l10n.t('LoopX: "{0}" has no due time now.', ref.title)
      : vscode.l10n.t('LoopX: "{0}" is due at {1}.', ref.title, dueAt),
  );
  await model.reload();
}

/** Defers the decision: a note and a later due time; the gate stays open and keeps holding its work. */
async function deferGate(model: WorkspaceModel, ref: GateRef, arg: unknown): Promise<void> {
  const note =
    argumentField(arg, 'note', isString) ??
    (await askText({
      title: vscode.l10n.t('Defer "{0}"', ref.title),
      prompt: vscode.l10n.t('A note: why the decision waits (the gate stays open)'),
      validateInput: (value) => (value.trim() === '' ? vscode.l10n.t('The note must not be empty.') : undefined),
    }));
  const dueIn = argumentField(arg, 'dueIn', isString);
  const due = dueIn !== undefined ? { dueIn } : await askDue(vscode.l10n.t('Decide "{0}" by…', ref.title));
  if ('clear' in due) {
    await runOperation(
      todoUpdate,
      { goalId: ref.goal.goalId, todoId: ref.todoId, note },
      editorEnvironment(ref.goal.registryPath),
    );
    await runOperation(
      gateSetDue,
      { goalId: ref.goal.goalId, todoId: ref.todoId, clear: true },
      editorEnvironment(ref.goal.registryPath),
    );
  } else
    await runOperation(
      todoUpdate,
      { goalId: ref.goal.goalId, todoId: ref.todoId, note, ...due },
      editorEnvironment(ref.goal.registryPath),
    );
  void vscode.window.showInformationMessage(vscode.l10n.t('LoopX: deferred "{0}"; it stays open.', ref.title));
  await model.reload();
}

async function pickGate(inbox: GateInboxView, title: string): Promise<GateRef> {
  const entries = await inbox.entries();
  if (entries.length === 0) throw new Error(vscode.l10n.t('No open gate waits for you.'));
  const picked = await vscode.window.showQuickPick(
    entries.map((entry) => ({
      label: `${entry.row.overdue ? '$(bell-dot)' : '$(shield)'} ${entry.row.title}`,
      description: inboxDescription(entry.row, true),
      detail: entry.row.text === entry.row.title ? undefined : entry.row.text,
      entry,
    })),
    { title, matchOnDescription: true, matchOnDetail: true, placeHolder: vscode.l10n.t('Longest blocked first') },
  );
  if (!picked) throw new Cancelled();
  return { goal: picked.entry.goal, todoId: picked.entry.row.todo_id, title: picked.entry.row.title };
}

/**
 * "Gate Inbox…": pick a gate (longest blocked first), then Approve, Reject, Defer, Set Due Time or
 * Open. From code or a test: `{ goalId, todoId, action, note, dueIn }` answers the questions.
 */
export async function gateInboxCommand(model: WorkspaceModel, inbox: GateInboxView, arg: unknown): Promise<void> {
  await model.settled();
  const ref = refOf(arg, model) ?? (await pickGate(inbox, vscode.l10n.t('LoopX: Gate Inbox')));
  let action = argumentField(arg, 'action', (v): v is GateAction =>
    ['approve', 'reject', 'defer', 'due', 'open'].includes(String(v)),
  );
  if (action === undefined) {
    const actions: { label: string; action: GateAction }[] = [
      { label: `$(check) ${vscode.l10n.t('Approve…')}`, action: 'approve' },
      { label: `$(close) ${vscode.l10n.t('Reject…')}`, action: 'reject' },
      { label: `$(clock) ${vscode.l10n.t('Defer with a note…')}`, action: 'defer' },
      { label: `$(calendar) ${vscode.l10n.t('Set Due Time…')}`, action: 'due' },
      { label: `$(go-to-file) ${vscode.l10n.t('Open in State File')}`, action: 'open' },
    ];
    const picked = await vscode.window.showQuickPick(actions, { title: ref.title });
    if (!picked) throw new Cancelled();
    action = picked.action;
  }
  const node = nodeOf(ref);
  const note = argumentField(arg, 'note', isString);
  switch (action) {
    case 'approve':
    case 'reject':
      return decideGateCommand(model, note === undefined ? node : { ...node, note }, action);
    case 'defer':
      return deferGate(model, ref, arg);
    case 'due':
      return setGateDueCommand(model, inbox, node);
    case 'open':
      await openInStateFileCommand(model, node);
      return;
  }
}
