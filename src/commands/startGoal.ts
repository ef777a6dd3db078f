import * as vscode from 'vscode';
import { editorErrorText } from '../common/errorWording';
import { createGoal as createGoalOperation } from '../core/ops/createGoal';
import { runOperation } from '../core/ops/run';
import {
  draftPrompt,
  readDraftDocument,
  readModelDraft,
  renderDraftDocument,
  templateDraft,
  type GoalDraft,
} from '../lm/goalDraft';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { folderEnvironment } from './operationRunner';
import { argumentField, askText, Cancelled, isTrue, pickProjectFolder } from './pickers';

const isString = (value: unknown): value is string => typeof value === 'string';

/**
 * "LoopX: Start a Goal…" (and `@loopx /goal <sentence>`): a language model drafts the objective, the
 * first todos in priority order and the human gates (a template when no model is available); the
 * draft opens as a Markdown document the user edits; "Create Goal" reads the edited document and
 * creates the goal, its state file and exactly those todos in one create-goal operation (its `todo`
 * and `gate` plan, written in the same state file write). A malformed draft, a refused todo or an
 * existing state file is a clear error and writes nothing: there is never a half-created goal.
 *
 * Arguments from code: `{ sentence }` drafts and opens the review document; `{ draftText }` opens a
 * given draft for review; `{ draft: <document uri>, confirmed? }` creates from the reviewed document.
 */

/** The button that creates the reviewed goal, in the display language. */
export const createGoalButton = (): string => vscode.l10n.t('Create Goal');

export interface DraftOpened {
  step: 'review';
  draftUri: string;
  source: 'model' | 'template';
  draft: GoalDraft;
}

export interface GoalStarted {
  step: 'created';
  goal_id: string;
  state_file: string;
  todos: string[];
  gates: string[];
}

/** Drafts a goal from a sentence with `model` (or the template without one). */
export async function draftGoal(
  sentence: string,
  model: vscode.LanguageModelChat | undefined,
  token?: vscode.CancellationToken,
): Promise<{ draft: GoalDraft; source: 'model' | 'template' }> {
  if (model === undefined) return { draft: templateDraft(sentence), source: 'template' };
  const response = await model.sendRequest(
    [vscode.LanguageModelChatMessage.User(draftPrompt(sentence))],
    {
      justification: vscode.l10n.t(
        'LoopX drafts a goal (objective, todos, gates) from your sentence; you review it before anything is written.',
      ),
    },
    token,
  );
  let text = '';
  for await (const piece of response.text) text += piece;
  const reading = readModelDraft(text);
  if (!reading.ok) throw new Error(`${model.name}: ${reading.message}`);
  return { draft: reading.draft, source: 'model' };
}

async function openForReview(
  draft: GoalDraft,
  source: 'model' | 'template',
  model: WorkspaceModel,
  log: vscode.LogOutputChannel,
): Promise<DraftOpened> {
  const document = await vscode.workspace.openTextDocument({
    language: 'markdown',
    content: renderDraftDocument(
      draft,
      source === 'model' ? 'drafted by a language model' : 'a template: no language model is available',
    ),
  });
  await vscode.window.showTextDocument(document, { preview: false });
  const draftUri = document.uri.toString();
  void vscode.window
    .showInformationMessage(
      source === 'model'
        ? vscode.l10n.t('LoopX: review and edit the goal draft, then create it.')
        : vscode.l10n.t(
            'LoopX: no language model is available, so a template draft is open: edit it, then create the goal.',
          ),
      createGoalButton(),
    )
    .then(async (choice) => {
      if (choice !== createGoalButton()) return;
      try {
        await createFromDraft(model, log, draftUri, false);
      } catch (error) {
        if (error instanceof Cancelled) return;
        void vscode.window.showErrorMessage(`LoopX: ${editorErrorText(error)}`);
      }
    });
  return { step: 'review', draftUri, source, draft };
}

async function createFromDraft(
  model: WorkspaceModel,
  log: vscode.LogOutputChannel,
  draftUri: string,
  confirmed: boolean,
): Promise<GoalStarted> {
  const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === draftUri);
  if (document === undefined)
    throw new Error(vscode.l10n.t('The goal draft is no longer open; start again with "Start a Goal…".'));
  const reading = readDraftDocument(document.getText());
  if (!reading.ok)
    throw new Error(
      vscode.l10n.t('{0}. Fix the draft and choose "Create Goal" again; nothing was written.', reading.message),
    );
  const draft = reading.draft;
  if (!confirmed) {
    const choice = await vscode.window.showInformationMessage(
      vscode.l10n.t(
        'Create the goal "{0}" with {1} todo(s) and {2} gate(s)?',
        draft.goal_id,
        draft.todos.length,
        draft.gates.length,
      ),
      { modal: true, detail: draft.objective },
      createGoalButton(),
    );
    if (choice !== createGoalButton()) throw new Cancelled();
  }
  const folder = await pickProjectFolder(vscode.l10n.t('Folder for the new goal'));
  const env = folderEnvironment(folder);
  // One create-goal with the plan: the goal, its state file and exactly the reviewed todos and gates
  // are written together, or (a refused todo, an existing state file) nothing is.
  const created = await runOperation(
    createGoalOperation,
    {
      project: folder.uri.fsPath,
      goalId: draft.goal_id,
      objective: draft.objective,
      todo: draft.todos,
      gate: draft.gates,
    },
    env,
  );
  log.info(`started goal ${draft.goal_id}: ${draft.todos.length} todo(s), ${draft.gates.length} gate(s)`);
  await model.reload();
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(created.state_file_abs), {
    preview: false,
  });
  return {
    step: 'created',
    goal_id: draft.goal_id,
    state_file: created.state_file_abs,
    todos: draft.todos,
    gates: draft.gates,
  };
}

export async function startGoalCommand(
  model: WorkspaceModel,
  log: vscode.LogOutputChannel,
  arg: unknown,
): Promise<DraftOpened | GoalStarted> {
  const draftUri = argumentField(arg, 'draft', isString);
  if (draftUri !== undefined)
    return createFromDraft(model, log, draftUri, argumentField(arg, 'confirmed', isTrue) === true);
  const draftText = argumentField(arg, 'draftText', isString);
  if (draftText !== undefined) {
    const reading = readDraftDocument(draftText);
    if (!reading.ok) throw new Error(reading.message);
    return openForReview(reading.draft, 'model', model, log);
  }
  const sentence =
    argumentField(arg, 'sentence', isString) ??
    (await askText({
      title: vscode.l10n.t('Start a Goal'),
      prompt: vscode.l10n.t('What do you want done? One sentence; a draft goal is written for you to review.'),
      placeHolder: vscode.l10n.t('e.g. Tidy the notes folder and publish an index'),
      validateInput: (v) => (v.trim() === '' ? vscode.l10n.t('Say what you want done.') : undefined),
    }));
  const languageModel = (await vscode.lm.selectChatModels())[0];
  const { draft, source } = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: vscode.l10n.t('LoopX: drafting the goal…'),
      cancellable: true,
    },
    (_progress, token) => draftGoal(sentence, languageModel, token),
  );
  return openForReview(draft, source, model, log);
}
