import * as vscode from 'vscode';
import { chatCommands, paletteCommandId, type CommandSpec } from '../core/commands/catalog';
import { CHAT_PARTICIPANT_ID } from '../core/commands/manifest';
import { agentTurnSetup } from '../core/ops/host';
import { globalGates, globalMarkdown, globalRisks, globalSummary, globalTodos } from '../core/ops/global';
import { quotaShouldRun } from '../core/ops/quota';
import { runOperation } from '../core/ops/run';
import { status, statusForLanguageModel, statusMarkdown } from '../core/ops/status';
import { turnRunOnce } from '../core/ops/turn';
import type { GoalSummary } from '../core/ops/goalRows';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { commandTitle } from '../commands/commandTitles';
import { editorEnvironment } from '../commands/operationRunner';
import { draftGoal } from '../commands/startGoal';
import { draftPriority, renderDraftDocument } from '../lm/goalDraft';
import { languageModelUnavailable } from '../lm/languageModelExecutor';
import { editorErrorText } from '../common/errorWording';
import { chatRequestModel } from './requestModel';

/**
 * `@loopx` in the chat view. Its slash commands are the catalog's `chat` forms (the same rows as the
 * palette and the `/loopx` slash prompts); each answer is rendered from an operation's result, with
 * buttons that run palette commands and anchors that open the state files. Commands that write are
 * refused in an untrusted workspace; `/run` never runs by itself: its button opens the palette's
 * confirmation. Free text is answered by a language model with the status read model as context.
 */

/** What the handler writes to; `vscode.ChatResponseStream` in the chat view, a recorder in tests. */
export type ChatAnswer = Pick<vscode.ChatResponseStream, 'markdown' | 'button' | 'anchor' | 'progress'>;

export interface ChatQuestion {
  /** The slash command without its slash, or undefined for free text. */
  command: string | undefined;
  prompt: string;
  /** The model the chat view selected, when there is one. */
  model?: vscode.LanguageModelChat | undefined;
}

export interface ChatAnswerResult extends vscode.ChatResult {
  metadata: { command: string | null; refused?: 'untrusted' | 'no_model' | 'no_goal' | 'malformed_draft' };
}

/** The follow-ups offered after each slash command (their labels in the display language, asked for when offered). */
function followUpsOf(command: string): vscode.ChatFollowup[] {
  const next = { prompt: '', command: 'next', label: vscode.l10n.t('What should run next?') };
  const status = { prompt: '', command: 'status', label: vscode.l10n.t('Show the status') };
  switch (command) {
    case 'status':
      return [next, { prompt: '', command: 'gates', label: vscode.l10n.t('Which gates are open?') }];
    case 'next':
      return [{ prompt: '', command: 'run', label: vscode.l10n.t('Run one turn') }];
    case 'gates':
      return [{ prompt: '', command: 'todos', label: vscode.l10n.t('Show the todos') }];
    case 'todos':
      return [next];
    case 'summary':
      return [{ prompt: '', command: 'risks', label: vscode.l10n.t('Any risks?') }];
    case 'run':
    case 'risks':
    case 'goal':
      return [status];
    default:
      return [];
  }
}

function specOf(command: string): (CommandSpec & { chat: string }) | undefined {
  return chatCommands().find((spec) => spec.chat === command);
}

/** The goal the prompt names (by id), else the only goal, else undefined. */
function goalOf(model: WorkspaceModel, prompt: string): GoalSummary | undefined {
  const words = new Set(prompt.split(/\s+/).filter((w) => w !== ''));
  return model.goals.find((g) => words.has(g.goalId)) ?? (model.goals.length === 1 ? model.goals[0] : undefined);
}

function registries(model: WorkspaceModel): string[] {
  return model.snapshots.filter((s) => s.ok).map((s) => s.registryPath);
}

function stateFileAnchors(model: WorkspaceModel, answer: ChatAnswer): void {
  for (const goal of model.goals)
    if (goal.stateFile !== null)
      answer.anchor(vscode.Uri.file(goal.stateFile), vscode.l10n.t('{0} state file', goal.goalId));
}

const GLOBAL_VIEWS = { summary: globalSummary, gates: globalGates, todos: globalTodos, risks: globalRisks } as const;

export async function answerChat(
  model: WorkspaceModel,
  question: ChatQuestion,
  answer: ChatAnswer,
  token: vscode.CancellationToken,
): Promise<ChatAnswerResult> {
  const command = question.command ?? null;
  if (command === null) return answerFreeText(model, question, answer, token);
  const spec = specOf(command);
  if (spec === undefined) {
    answer.markdown(vscode.l10n.t('Unknown command `/{0}`. Try `/status`.', command));
    return { metadata: { command } };
  }
  if (spec.mutation !== 'read_only' && !vscode.workspace.isTrusted) {
    answer.markdown(
      vscode.l10n.t(
        '`/{0}` changes files, and this workspace is not trusted. Trust the workspace to use it; read-only commands such as `/status` still work.',
        command,
      ),
    );
    answer.button({ command: 'workbench.trust.manage', title: vscode.l10n.t('Manage Workspace Trust') });
    return { metadata: { command, refused: 'untrusted' } };
  }
  if (registries(model).length === 0 && command !== 'goal') {
    answer.markdown(
      vscode.l10n.t('No LoopX registry in this workspace yet. Start with `@loopx /goal <what you want done>`.'),
    );
    return { metadata: { command, refused: 'no_goal' } };
  }
  switch (command) {
    case 'status':
      for (const registryPath of registries(model))
        answer.markdown(statusMarkdown(await runOperation(status, {}, editorEnvironment(registryPath))));
      stateFileAnchors(model, answer);
      answer.button({ command: paletteCommandId({ key: 'status' }), title: vscode.l10n.t('Open Status') });
      break;
    case 'summary':
    case 'gates':
    case 'todos':
    case 'risks':
      for (const registryPath of registries(model))
        answer.markdown(globalMarkdown(await runOperation(GLOBAL_VIEWS[command], {}, editorEnvironment(registryPath))));
      answer.button({
        command: paletteCommandId(spec),
        title: vscode.l10n.t('Open {0}', commandTitle(paletteCommandId(spec), spec.title ?? command)),
      });
      break;
    case 'next':
      await answerNext(model, answer);
      break;
    case 'run':
      return answerRun(model, question, answer);
    case 'goal':
      return answerGoal(question, answer, token);
  }
  return { metadata: { command } };
}

async function answerNext(model: WorkspaceModel, answer: ChatAnswer): Promise<void> {
  const lines = [`## ${vscode.l10n.t('What should run next')}`, ''];
  for (const goal of model.goals) {
    for (const agentId of goal.agents.length > 0 ? goal.agents : [undefined]) {
      const decision = await runOperation(
        quotaShouldRun,
        { goalId: goal.goalId, ...(agentId !== undefined ? { agentId } : {}) },
        editorEnvironment(goal.registryPath),
      );
      const selected = 'selected_todo' in decision ? decision.selected_todo : null;
      const verdict = !decision.should_run
        ? vscode.l10n.t('skip')
        : selected === null
          ? vscode.l10n.t('run')
          : vscode.l10n.t('run on {0}', `\`${selected.todo_id}\``);
      lines.push(`- **${goal.goalId}** / ${agentId ?? vscode.l10n.t('(any agent)')}: ${verdict} — ${decision.reason}`);
    }
  }
  answer.markdown(lines.join('\n'));
}

async function answerRun(model: WorkspaceModel, question: ChatQuestion, answer: ChatAnswer): Promise<ChatAnswerResult> {
  const goal = goalOf(model, question.prompt);
  if (goal === undefined) {
    answer.markdown(
      vscode.l10n.t(
        'Which goal? Name it: {0}.',
        model.goals.map((g) => `\`/run ${g.goalId}\``).join(', ') || vscode.l10n.t('(no goals yet)'),
      ),
    );
    return { metadata: { command: 'run', refused: 'no_goal' } };
  }
  const words = new Set(question.prompt.split(/\s+/));
  const agentId = goal.agents.find((a) => words.has(a)) ?? goal.agents[0];
  if (agentId === undefined) {
    answer.markdown(vscode.l10n.t('Goal {0} has no registered agent. Register one first.', `**${goal.goalId}**`));
    answer.button({
      command: paletteCommandId({ key: 'registerAgent' }),
      title: commandTitle(paletteCommandId({ key: 'registerAgent' }), 'Register Agent…'),
    });
    return { metadata: { command: 'run', refused: 'no_goal' } };
  }
  // A language-model agent with no model stops here, before anything is reserved: a status, not a failure.
  const setup = await agentTurnSetup(editorEnvironment(goal.registryPath), goal.goalId, agentId);
  const unavailable = await languageModelUnavailable(setup.executor, agentId);
  if (unavailable !== undefined) {
    answer.markdown(`## ${vscode.l10n.t('No turn for {0} by {1}', goal.goalId, agentId)}\n\n${unavailable.message}`);
    return { metadata: { command: 'run', refused: 'no_model' } };
  }
  const preview = await runOperation(
    turnRunOnce,
    { goalId: goal.goalId, agentId },
    editorEnvironment(goal.registryPath),
    'preview',
  );
  answer.markdown(
    [
      `## ${vscode.l10n.t('One turn of {0} by {1}', goal.goalId, agentId)}`,
      '',
      preview.message,
      '',
      vscode.l10n.t(
        'Nothing runs until you confirm: the button asks first, then runs the turn with progress you can cancel.',
      ),
    ].join('\n'),
  );
  answer.button({
    command: paletteCommandId({ key: 'turnRunOnce' }),
    title: commandTitle(paletteCommandId({ key: 'turnRunOnce' }), 'Run One Turn…'),
    arguments: [{ goalId: goal.goalId, agentIds: [agentId] }],
  });
  return { metadata: { command: 'run' } };
}

/**
 * A goal drafted from a sentence by the chat's model (a template without one); nothing is written:
 * "Review and Create…" opens the draft as a document to edit, and only its "Create Goal" writes.
 */
async function answerGoal(
  question: ChatQuestion,
  answer: ChatAnswer,
  token: vscode.CancellationToken,
): Promise<ChatAnswerResult> {
  const sentence = question.prompt.trim();
  if (sentence === '') {
    answer.markdown(
      vscode.l10n.t('Say what you want done: `@loopx /goal tidy the notes folder and publish an index`.'),
    );
    return { metadata: { command: 'goal' } };
  }
  const chosen = question.model ?? (await vscode.lm.selectChatModels())[0];
  if (chosen !== undefined) answer.progress(vscode.l10n.t('Drafting with {0}…', chosen.name));
  let drafted: Awaited<ReturnType<typeof draftGoal>>;
  try {
    drafted = await draftGoal(sentence, chosen, token);
  } catch (error) {
    answer.markdown(vscode.l10n.t('Could not draft the goal: {0}', escapeMarkdown(editorErrorText(error))));
    return { metadata: { command: 'goal', refused: 'malformed_draft' } };
  }
  const { draft, source } = drafted;
  answer.markdown(
    [
      `## ${
        source === 'template'
          ? vscode.l10n.t('Draft goal {0} (template: no language model is available)', `\`${draft.goal_id}\``)
          : vscode.l10n.t('Draft goal {0}', `\`${draft.goal_id}\``)
      }`,
      '',
      `**${vscode.l10n.t('Objective:')}** ${escapeMarkdown(draft.objective)}`,
      '',
      `**${vscode.l10n.t('First todos')}**${vscode.l10n.t(', highest priority first:')}`,
      ...draft.todos.map((t, i) => `${i + 1}. ${draftPriority(i)} — ${escapeMarkdown(t)}`),
      '',
      draft.gates.length === 0
        ? `**${vscode.l10n.t('Gates:')}** ${vscode.l10n.t('none')}`
        : `**${vscode.l10n.t('Gates')}** ${vscode.l10n.t('(a person decides):')}`,
      ...draft.gates.map((g) => `- ${escapeMarkdown(g)}`),
      '',
      vscode.l10n.t(
        'Nothing is written yet: "Review and Create…" opens the draft to edit; only its "Create Goal" writes the goal, its state file and exactly the todos you keep.',
      ),
    ].join('\n'),
  );
  answer.button({
    command: paletteCommandId({ key: 'startGoal' }),
    title: vscode.l10n.t('Review and Create…'),
    arguments: [{ draftText: renderDraftDocument(draft, source === 'model' ? 'drafted in chat' : 'a template') }],
  });
  return { metadata: { command: 'goal' } };
}

function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_[\]<>#|]/g, '\\$&');
}

async function answerFreeText(
  model: WorkspaceModel,
  question: ChatQuestion,
  answer: ChatAnswer,
  token: vscode.CancellationToken,
): Promise<ChatAnswerResult> {
  const chosen = question.model ?? (await vscode.lm.selectChatModels())[0];
  if (chosen === undefined) {
    answer.markdown(
      vscode.l10n.t(
        'No language model is available in this VS Code, so I cannot answer free questions. The slash commands work without one: `/status`, `/next`, `/gates`, `/todos`, `/risks`, `/summary`.',
      ),
    );
    return { metadata: { command: null, refused: 'no_model' } };
  }
  // The model is told workspace-relative paths only (`<project>/…`), never the machine's absolute ones.
  const context: unknown[] = [];
  const workspaceFolders = (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
  for (const registryPath of registries(model)) {
    const environment = editorEnvironment(registryPath);
    const payload = await runOperation(status, {}, environment);
    context.push(statusForLanguageModel(payload, { workspaceFolders, homeDir: environment.homeDir }));
  }
  const messages = [
    vscode.LanguageModelChatMessage.User(
      'You answer questions about LoopX goals. Use only this status read model (JSON); say when it does not tell.\n' +
        JSON.stringify(context).slice(0, 60_000),
    ),
    vscode.LanguageModelChatMessage.User(question.prompt),
  ];
  answer.progress(vscode.l10n.t('Asking {0}…', chosen.name));
  const response = await chosen.sendRequest(messages, {}, token);
  for await (const piece of response.text) answer.markdown(piece);
  return { metadata: { command: null } };
}

/** Registers `@loopx`; returns its disposable. */
export function registerChatParticipant(model: WorkspaceModel, extensionUri: vscode.Uri): vscode.Disposable {
  const participant = vscode.chat.createChatParticipant(CHAT_PARTICIPANT_ID, (request, _context, stream, token) =>
    answerChat(
      model,
      { command: request.command, prompt: request.prompt, model: chatRequestModel(request) },
      stream,
      token,
    ),
  );
  participant.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'loopx.svg');
  participant.followupProvider = {
    provideFollowups: (result: ChatAnswerResult) => followUpsOf(result.metadata.command ?? ''),
  };
  return participant;
}

/** A recorder standing in for the chat view's stream (the hidden test command uses it). */
export class RecordedAnswer implements ChatAnswer {
  readonly parts: { kind: 'markdown' | 'button' | 'anchor' | 'progress'; value: string; command?: string }[] = [];
  markdown(value: string | vscode.MarkdownString): void {
    this.parts.push({ kind: 'markdown', value: typeof value === 'string' ? value : value.value });
  }
  button(command: vscode.Command): void {
    this.parts.push({ kind: 'button', value: command.title, command: command.command });
  }
  anchor(value: vscode.Uri | vscode.Location, title?: string): void {
    const uri = value instanceof vscode.Uri ? value : value.uri;
    this.parts.push({ kind: 'anchor', value: title ?? uri.toString(), command: uri.toString() });
  }
  progress(value: string): void {
    this.parts.push({ kind: 'progress', value });
  }
}
