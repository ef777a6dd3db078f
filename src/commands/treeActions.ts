import * as vscode from 'vscode';
import { editorRefusalText } from '../common/errorWording';
import { todoStatusWord } from '../common/words';
import { archiveRuntime, type ArchiveRuntimeOutput } from '../core/ops/archiveRuntime';
import { runOperation } from '../core/ops/run';
import { todoClaim, todoComplete, todoDefer, todoList, todoSupersede, todoUpdate } from '../core/ops/todo';
import type { GoalSummary } from '../core/ops/goalRows';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { editorEnvironment, previewThenApply } from './operationRunner';
import { argumentField, askText, Cancelled, confirm, isTrue, pickGoal } from './pickers';

/**
 * The actions a person takes from the Goals tree on gates, todos and goals. Each one calls an
 * operation (the same the CLI runs) and reloads the model, so the tree shows the change at once.
 * Run from a tree node, each acts on that node; run from the palette, it asks for the goal and
 * the todo; run from code or a test, `{ goalId, todoId, … }` answers the questions (`confirmed:
 * true` skips confirmations).
 */

const PRIORITY_CHOICES = ['P0', 'P1', 'P2', 'P3', 'P4'] as const;

const isString = (value: unknown): value is string => typeof value === 'string';

interface TodoTarget {
  goal: GoalSummary;
  todoId: string;
  title: string;
  /** Agent todo or user todo (a gate is a user todo). */
  role: 'agent' | 'user' | null;
  claimedBy: string | null;
}

/** The todo (or gate) an action applies to: the tree node, `{ goalId, todoId }`, or the user's pick. */
async function todoTarget(
  model: WorkspaceModel,
  arg: unknown,
  kind: 'todo' | 'gate',
  title: string,
): Promise<TodoTarget> {
  const node = arg as
    | {
        kind?: unknown;
        goal?: GoalSummary;
        todo?: { todo_id: string; title: string; claimed_by: string | null };
        role?: unknown;
        gate?: { todo_id: string; title: string };
      }
    | undefined;
  if (node?.kind === 'todo' && node.goal && node.todo)
    return {
      goal: node.goal,
      todoId: node.todo.todo_id,
      title: node.todo.title,
      role: node.role === 'agent' || node.role === 'user' ? node.role : null,
      claimedBy: node.todo.claimed_by,
    };
  if (node?.kind === 'gate' && node.goal && node.gate)
    return { goal: node.goal, todoId: node.gate.todo_id, title: node.gate.title, role: 'user', claimedBy: null };
  const goal = await pickGoal(model, arg, title);
  const listed = await runOperation(todoList, { goalId: goal.goalId }, editorEnvironment(goal.registryPath));
  const candidates = listed.todos.filter((t) => (kind === 'gate') === (t.task_class === 'user_gate'));
  const given = argumentField(arg, 'todoId', isString);
  if (given !== undefined) {
    const found = listed.todos.find((t) => t.todo_id === given);
    if (!found) throw new Error(vscode.l10n.t('Goal "{0}" has no open todo "{1}".', goal.goalId, given));
    return { goal, todoId: found.todo_id, title: found.title, role: found.role, claimedBy: found.claimed_by };
  }
  if (candidates.length === 0)
    throw new Error(
      kind === 'gate'
        ? vscode.l10n.t('Goal "{0}" has no open gates.', goal.goalId)
        : vscode.l10n.t('Goal "{0}" has no open todos.', goal.goalId),
    );
  const picked = await vscode.window.showQuickPick(
    candidates.map((t) => ({
      label: t.title,
      description: [t.priority, todoStatusWord(t.status)].filter(Boolean).join(' · '),
      detail: t.todo_id,
      t,
    })),
    { title, matchOnDetail: true },
  );
  if (!picked) throw new Cancelled();
  return { goal, todoId: picked.t.todo_id, title: picked.t.title, role: picked.t.role, claimedBy: picked.t.claimed_by };
}

async function textArgument(arg: unknown, field: string, options: vscode.InputBoxOptions): Promise<string> {
  return argumentField(arg, field, isString) ?? (await askText(options));
}

/** An input box's check: `message` (already in the display language) while the value is empty. */
const notEmpty = (message: string) => (value: string) => (value.trim() === '' ? message : undefined);

function done(model: WorkspaceModel, message: string): Promise<void> {
  void vscode.window.showInformationMessage(`LoopX: ${message}`);
  return model.reload();
}

/** "Approve Gate…" / "Reject Gate…": resolves a user gate with a decision note. */
export async function decideGateCommand(
  model: WorkspaceModel,
  arg: unknown,
  outcome: 'approve' | 'reject',
): Promise<void> {
  const target = await todoTarget(
    model,
    arg,
    'gate',
    outcome === 'approve' ? vscode.l10n.t('Approve which gate?') : vscode.l10n.t('Reject which gate?'),
  );
  const note = await textArgument(arg, 'note', {
    title:
      outcome === 'approve'
        ? vscode.l10n.t('Approve "{0}"', target.title)
        : vscode.l10n.t('Reject "{0}"', target.title),
    prompt: vscode.l10n.t("A short decision note (kept as the gate's evidence)"),
    validateInput: notEmpty(vscode.l10n.t('The decision note must not be empty.')),
  });
  const result = await runOperation(
    todoComplete,
    { goalId: target.goal.goalId, todoId: target.todoId, evidence: note, decisionOutcome: outcome },
    editorEnvironment(target.goal.registryPath),
  );
  const released = result.released_todo_ids.length;
  await done(
    model,
    outcome === 'approve'
      ? released === 0
        ? vscode.l10n.t('approved "{0}".', target.title)
        : released === 1
          ? vscode.l10n.t('approved "{0}"; 1 todo is runnable now.', target.title)
          : vscode.l10n.t('approved "{0}"; {1} todos are runnable now.', target.title, released)
      : vscode.l10n.t('rejected "{0}"; the todos it holds stay blocked.', target.title),
  );
}

/**
 * A todo under a hard lease completes (or is superseded) only with the holder's key and version
 * (docs/leases.md). The editor is not the holder and does not borrow its key from the lease file:
 * it refuses before asking anything, and says how to free the todo. (User todos are never leased.)
 */
function refuseLeased(model: WorkspaceModel, target: TodoTarget, verb: 'complete' | 'supersede'): void {
  const lease = model.leasesOf(target.goal).get(target.todoId);
  if (lease === undefined || target.role === 'user') return;
  throw new Error(
    vscode.l10n.t(
      '"{0}" is leased to {1} until {2} (version {3}): only that agent, with its lease key, may {4} it. Release or transfer the lease first (Release Lease… / Transfer Lease… on the todo), or let it expire.',
      target.title,
      lease.owner,
      lease.expires_at,
      lease.version,
      verb === 'complete' ? vscode.l10n.t('complete') : vscode.l10n.t('supersede'),
    ),
  );
}

/** "Complete Todo…": evidence, then a follow-up todo or none. */
export async function completeTodoCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const target = await todoTarget(model, arg, 'todo', vscode.l10n.t('Complete which todo?'));
  refuseLeased(model, target, 'complete');
  const evidence = await textArgument(arg, 'evidence', {
    title: vscode.l10n.t('Complete "{0}" (1/2)', target.title),
    prompt: vscode.l10n.t('What shows it is done (a test run, a commit, a link)?'),
    validateInput: notEmpty(vscode.l10n.t('The evidence must not be empty.')),
  });
  const successor =
    argumentField(arg, 'successorText', isString) ??
    (argumentField(arg, 'noFollowUp', isTrue)
      ? ''
      : await askText({
          title: vscode.l10n.t('Complete "{0}" (2/2)', target.title),
          prompt: vscode.l10n.t('The follow-up todo, if any (leave empty when this is final)'),
        }));
  const result = await runOperation(
    todoComplete,
    {
      goalId: target.goal.goalId,
      todoId: target.todoId,
      evidence,
      ...(successor === '' ? { noFollowUp: true } : { successorText: successor }),
    },
    editorEnvironment(target.goal.registryPath),
  );
  await done(
    model,
    result.added_todos.length > 0
      ? vscode.l10n.t('completed "{0}", added {1}.', target.title, result.added_todos[0]?.todo_id ?? '')
      : vscode.l10n.t('completed "{0}".', target.title),
  );
}

/** "Claim Todo for Agent…": a registered agent takes an agent todo (taking it over after a confirmation). */
export async function claimTodoCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const target = await todoTarget(model, arg, 'todo', vscode.l10n.t('Claim which todo?'));
  let agentId = argumentField(arg, 'agentId', isString);
  if (agentId === undefined) {
    if (target.goal.agents.length === 0)
      throw new Error(
        vscode.l10n.t('Goal "{0}" has no registered agents. Run "LoopX: Register Agent…" first.', target.goal.goalId),
      );
    const picked = await vscode.window.showQuickPick(
      target.goal.agents.map((id) => ({
        label: id,
        description: id === target.claimedBy ? vscode.l10n.t('holds it now') : undefined,
      })),
      { title: vscode.l10n.t('Claim "{0}" for which agent?', target.title) },
    );
    if (!picked) throw new Cancelled();
    agentId = picked.label;
  }
  const lease = model.leasesOf(target.goal).get(target.todoId);
  if (lease !== undefined && lease.owner !== agentId && !argumentField(arg, 'confirmed', isTrue))
    await confirm(
      vscode.l10n.t(
        '"{0}" is leased to {1} until {2}. Claim it for {3}?',
        target.title,
        lease.owner,
        lease.expires_at,
        agentId,
      ),
      vscode.l10n.t(
        "In hard_lease mode the claim is refused while {0}'s lease is in force (release or transfer it first); otherwise the claim takes the todo and {0}'s lease stops counting.",
        lease.owner,
      ),
      vscode.l10n.t('Claim'),
    );
  const takeover = target.claimedBy !== null && target.claimedBy !== agentId;
  if (takeover && !argumentField(arg, 'confirmed', isTrue))
    await confirm(
      vscode.l10n.t('"{0}" is claimed by {1}. Give it to {2}?', target.title, target.claimedBy ?? '', agentId),
      vscode.l10n.t('The other agent loses its claim; a turn it runs now may find the todo taken.'),
      vscode.l10n.t('Take Over'),
    );
  await runOperation(
    todoClaim,
    { goalId: target.goal.goalId, todoId: target.todoId, agentId, takeover },
    editorEnvironment(target.goal.registryPath),
  );
  await done(model, vscode.l10n.t('"{0}" is claimed by {1}.', target.title, agentId));
}

/** "Defer Todo…": set aside with a reason (and an optional resume condition from code). */
export async function deferTodoCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const target = await todoTarget(model, arg, 'todo', vscode.l10n.t('Defer which todo?'));
  const reason = await textArgument(arg, 'reason', {
    title: vscode.l10n.t('Defer "{0}"', target.title),
    prompt: vscode.l10n.t('Why does it wait?'),
    validateInput: notEmpty(vscode.l10n.t('The reason must not be empty.')),
  });
  const resumeWhen = argumentField(arg, 'resumeWhen', isString);
  await runOperation(
    todoDefer,
    { goalId: target.goal.goalId, todoId: target.todoId, reason, ...(resumeWhen === undefined ? {} : { resumeWhen }) },
    editorEnvironment(target.goal.registryPath),
  );
  await done(model, vscode.l10n.t('deferred "{0}".', target.title));
}

/** "Supersede Todo…": close it as replaced by a new todo. */
export async function supersedeTodoCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const target = await todoTarget(model, arg, 'todo', vscode.l10n.t('Supersede which todo?'));
  refuseLeased(model, target, 'supersede');
  const replacement = await textArgument(arg, 'successorText', {
    title: vscode.l10n.t('Supersede "{0}"', target.title),
    prompt: vscode.l10n.t('The todo that replaces it'),
    validateInput: notEmpty(vscode.l10n.t('The replacement must not be empty.')),
  });
  const reason = argumentField(arg, 'reason', isString);
  const result = await runOperation(
    todoSupersede,
    {
      goalId: target.goal.goalId,
      todoId: target.todoId,
      successorText: replacement,
      ...(reason === undefined ? {} : { reason }),
    },
    editorEnvironment(target.goal.registryPath),
  );
  await done(
    model,
    vscode.l10n.t(
      'superseded "{0}" by {1}.',
      target.title,
      result.added_todos[0]?.todo_id ?? vscode.l10n.t('its replacement'),
    ),
  );
}

/** "Change Todo Priority…". */
export async function changePriorityCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const target = await todoTarget(model, arg, 'todo', vscode.l10n.t('Change the priority of which todo?'));
  let priority = argumentField(arg, 'priority', isString);
  if (priority === undefined) {
    const picked = await vscode.window.showQuickPick(
      PRIORITY_CHOICES.map((p) => ({
        label: p,
        description: p === 'P0' ? 'most urgent' : p === 'P4' ? 'least urgent' : undefined,
      })),
      { title: vscode.l10n.t('Priority of "{0}"', target.title) },
    );
    if (!picked) throw new Cancelled();
    priority = picked.label;
  }
  await runOperation(
    todoUpdate,
    { goalId: target.goal.goalId, todoId: target.todoId, priority },
    editorEnvironment(target.goal.registryPath),
  );
  await done(model, vscode.l10n.t('"{0}" is {1} now.', target.title, priority));
}

/** "Open in State File": the goal's ACTIVE_GOAL_STATE.md at the todo's or gate's line. */
export async function openInStateFileCommand(model: WorkspaceModel, arg: unknown): Promise<vscode.TextEditor> {
  const target = await todoTarget(model, arg, 'todo', vscode.l10n.t('Open which todo?'));
  const listed = await runOperation(
    todoList,
    { goalId: target.goal.goalId, includeTerminal: true },
    editorEnvironment(target.goal.registryPath),
  );
  const line = Math.max(0, (listed.todos.find((t) => t.todo_id === target.todoId)?.line ?? 1) - 1);
  return vscode.window.showTextDocument(vscode.Uri.file(listed.state_file), {
    selection: new vscode.Range(line, 0, line, 0),
  });
}

function describeArchive(preview: ArchiveRuntimeOutput): string {
  if (!preview.ok) return editorRefusalText(preview.error_code, preview.error, { goal_id: preview.goal_id });
  return [
    vscode.l10n.t('From: {0}', preview.source),
    vscode.l10n.t('To: {0}', preview.archive_path),
    vscode.l10n.t('Checks: {0}', preview.checks.join(', ')),
  ].join('\n');
}

/**
 * "Archive Runtime…": previews the move of the goal's runtime folder; a registered goal is refused
 * by the operation's safety check, and archiving it anyway takes a second, explicit confirmation.
 */
export async function archiveRuntimeCommand(model: WorkspaceModel, arg: unknown): Promise<ArchiveRuntimeOutput> {
  const goal = await pickGoal(model, arg, vscode.l10n.t('Archive the runtime of which goal?'));
  const env = editorEnvironment(goal.registryPath);
  const confirmed = argumentField(arg, 'confirmed', isTrue) ?? false;
  let allowRegistered = argumentField(arg, 'allowRegistered', isTrue) ?? false;
  const dialog = {
    question: vscode.l10n.t('Archive the runtime (runs, journals) of "{0}"?', goal.goalId),
    describe: describeArchive,
    action: vscode.l10n.t('Archive'),
    confirmed,
  };
  let outcome = await previewThenApply(archiveRuntime, { goalId: goal.goalId, allowRegistered }, env, dialog);
  if (
    outcome.outcome === 'refused' &&
    !outcome.preview.ok &&
    outcome.preview.error_code === 'goal_registered' &&
    !allowRegistered &&
    !confirmed
  ) {
    const archiveAnyway = vscode.l10n.t('Archive Anyway…');
    const choice = await vscode.window.showWarningMessage(
      vscode.l10n.t('"{0}" is still registered, so LoopX refuses to archive its runtime.', goal.goalId),
      {
        modal: true,
        // The editor's own words: the core's refusal names the CLI's override option.
        detail: vscode.l10n.t(
          'Its runs and journals would move to the archive while the registry still lists the goal. Archive anyway only if the goal is obsolete.',
        ),
      },
      archiveAnyway,
    );
    if (choice !== archiveAnyway) throw new Cancelled();
    allowRegistered = true;
    outcome = await previewThenApply(archiveRuntime, { goalId: goal.goalId, allowRegistered }, env, dialog);
  }
  if (outcome.outcome === 'refused') throw new Error(describeArchive(outcome.preview));
  if (outcome.outcome === 'applied' && outcome.result.ok)
    await done(model, vscode.l10n.t('archived the runtime of "{0}" to {1}.', goal.goalId, outcome.result.archive_path));
  return outcome.outcome === 'applied' ? outcome.result : outcome.preview;
}

/** "Stop Loop": the goal's loop in this window stops after its current phase. */
export function stopLoopCommand(model: WorkspaceModel, arg: unknown): Promise<boolean> | boolean {
  const fromNode = (arg as { goal?: GoalSummary } | undefined)?.goal;
  const goalId = argumentField(arg, 'goalId', isString);
  const goal =
    fromNode ?? (goalId === undefined ? model.goals.find((g) => model.isLoopRunning(g)) : model.findGoal(goalId));
  if (goal === undefined || !model.stopLoop(goal)) {
    void vscode.window.showInformationMessage(vscode.l10n.t('LoopX: no loop is running in this window.'));
    return false;
  }
  void vscode.window.showInformationMessage(
    vscode.l10n.t('LoopX: the loop on "{0}" stops after its current phase.', goal.goalId),
  );
  return true;
}

/** "Open Run Evidence": the run's Markdown record, from a Recent runs node. */
export async function openRunEvidenceCommand(arg: unknown): Promise<void> {
  const file = (arg as { run?: { markdown_file?: unknown } } | undefined)?.run?.markdown_file;
  if (typeof file !== 'string')
    throw new Error(
      vscode.l10n.t("This run has no Markdown record inside the goal's project or runtime folder to open."),
    );
  await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(file));
}
