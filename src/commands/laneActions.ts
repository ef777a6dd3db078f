import * as path from 'node:path';
import * as vscode from 'vscode';
import { SETTINGS } from '../core/commands/ids';
import {
  laneList,
  laneMerge,
  laneReject,
  laneRemove,
  MERGE_STRATEGIES,
  mergeGateLaneOf,
  type LaneMergeResult,
  type MergeStrategy,
} from '../core/ops/lanes';
import { runOperation } from '../core/ops/run';
import type { GoalSummary } from '../core/ops/goalRows';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { agentIdOf, goalForAgentCommand } from './agentSetup';
import { editorEnvironment, previewThenApply } from './operationRunner';
import { argumentField, askText, Cancelled, isTrue } from './pickers';

/**
 * The lane commands (docs/lanes.md): Show Lanes, Merge Lane (the merge gate's approval, with the
 * combined diff shown first), Send Lane Back (the reviewer's note becomes the agent's todo) and
 * Remove Lane. They run the `lane*` operations; the merge is the person's decision, taken here.
 */

const isString = (value: unknown): value is string => typeof value === 'string';

interface LaneTarget {
  goal: GoalSummary;
  agentId: string;
}

/** From a merge gate node, an agent node, `{ goalId, agentId }` from code, or picks. */
async function laneTarget(model: WorkspaceModel, arg: unknown, title: string): Promise<LaneTarget> {
  const node = arg as { kind?: unknown; goal?: GoalSummary; gate?: { title: string } } | undefined;
  if (node?.kind === 'gate' && node.goal && node.gate) {
    const lane = mergeGateLaneOf(node.gate.title);
    if (lane !== null) return { goal: node.goal, agentId: lane.agentId };
  }
  const goal = await goalForAgentCommand(model, arg, title);
  const given = agentIdOf(arg);
  if (given !== undefined) return { goal, agentId: given };
  const lanes = await runOperation(laneList, { goalId: goal.goalId }, editorEnvironment(goal.registryPath));
  const picked = await vscode.window.showQuickPick(
    lanes.lanes.map((lane) => ({
      label: lane.agent_id,
      description: vscode.l10n.t('{0} ahead, {1} behind', lane.ahead, lane.behind),
      detail: lane.branch,
      agentId: lane.agent_id,
    })),
    { title },
  );
  if (!picked) throw new Cancelled();
  return { goal, agentId: picked.agentId };
}

function strategy(goal: GoalSummary): MergeStrategy {
  const configured = vscode.workspace
    .getConfiguration(SETTINGS.section, vscode.Uri.file(goal.projectRoot))
    .get<string>(SETTINGS.lanesMergeStrategy, 'ff');
  return (MERGE_STRATEGIES as readonly string[]).includes(configured) ? (configured as MergeStrategy) : 'ff';
}

/** "Show Lanes": each lane's branch, ahead/behind, last turn, pending merge and overlaps, as a document. */
export async function showLanesCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const goal = await goalForAgentCommand(model, arg, vscode.l10n.t('Show the lanes of which goal?'));
  const result = await runOperation(laneList, { goalId: goal.goalId }, editorEnvironment(goal.registryPath));
  const lines = [`# ${goal.goalId}`, ''];
  for (const lane of result.lanes)
    lines.push(
      `- ${lane.agent_id} · ${lane.branch} · +${lane.ahead}/-${lane.behind}` +
        `${lane.last_turn ? ` · ${lane.last_turn}` : ''}` +
        `${lane.merge_gate_todo_id ? ` · merge gate ${lane.merge_gate_todo_id}` : ''}` +
        `${lane.overlaps_with.length > 0 ? ` · overlaps ${lane.overlaps_with.join(', ')}` : ''}`,
    );
  const document = await vscode.workspace.openTextDocument({ language: 'markdown', content: lines.join('\n') });
  await vscode.window.showTextDocument(document, { preview: true });
}

/** Opens the lane's combined diff beside the dialog, so the reviewer sees what the merge brings. */
async function showDiff(preview: LaneMergeResult): Promise<void> {
  if (preview.diff === '') return;
  const document = await vscode.workspace.openTextDocument({ language: 'diff', content: preview.diff });
  await vscode.window.showTextDocument(document, { preview: true, preserveFocus: true });
}

/**
 * "Merge Lane…": previews the lane's commits, combined diff, conflicts and overlaps, then merges on
 * confirmation. A conflict is never resolved here: the person hands it to the lane's agent or opens
 * VS Code's merge editor.
 */
export async function mergeLaneCommand(model: WorkspaceModel, arg: unknown): Promise<LaneMergeResult> {
  const target = await laneTarget(model, arg, vscode.l10n.t('Merge which lane?'));
  const env = editorEnvironment(target.goal.registryPath);
  const base = { goalId: target.goal.goalId, agentId: target.agentId, strategy: strategy(target.goal) };
  const preview = await runOperation(laneMerge, base, env);
  if (preview.ahead === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('LoopX: lane {0} has nothing main lacks.', preview.branch));
    return preview;
  }
  await showDiff(preview);
  const confirmed = argumentField(arg, 'confirmed', isTrue) === true;
  if (preview.conflicts.length > 0) {
    const handOver = vscode.l10n.t("Hand to the lane's agent");
    const mergeEditor = vscode.l10n.t('Open in Merge Editor');
    const given = argumentField(arg, 'onConflict', isString);
    const choice =
      given === 'handToAgent'
        ? handOver
        : given === 'mergeEditor'
          ? mergeEditor
          : await vscode.window.showWarningMessage(
              vscode.l10n.t('Lane {0} conflicts with main.', preview.branch),
              {
                modal: true,
                detail: vscode.l10n.t(
                  'Conflicting files: {0}. LoopX never resolves a conflict by itself.',
                  preview.conflicts.join(', '),
                ),
              },
              handOver,
              mergeEditor,
            );
    if (choice === undefined) throw new Cancelled();
    const handToAgent = choice === handOver;
    const result = await runOperation(
      laneMerge,
      { ...base, handToAgent, resolveInEditor: !handToAgent, execute: true },
      env,
    );
    await model.reload();
    if (!handToAgent && result.conflicts[0] !== undefined) {
      const uri = vscode.Uri.file(path.join(target.goal.projectRoot, result.conflicts[0]));
      await vscode.commands
        .executeCommand('git.openMergeEditor', uri)
        .then(undefined, () => vscode.commands.executeCommand('vscode.open', uri));
    }
    return result;
  }
  const outcome = await previewThenApply(laneMerge, base, env, {
    question: vscode.l10n.t('Merge {0} commit(s) of lane {1} into main?', preview.ahead, preview.branch),
    describe: (p) =>
      [
        p.diff_stat,
        Object.keys(p.overlaps).length > 0
          ? vscode.l10n.t('Other lanes change these files too: {0}', Object.keys(p.overlaps).join(', '))
          : null,
      ]
        .filter(Boolean)
        .join('\n\n'),
    action: vscode.l10n.t('Merge'),
    confirmed,
  });
  if (outcome.outcome !== 'applied') return outcome.preview;
  await model.reload();
  const { result } = outcome;
  if (result.status === 'merged')
    void vscode.window.showInformationMessage(vscode.l10n.t('LoopX: merged lane {0}.', result.branch));
  else
    void vscode.window.showWarningMessage(
      vscode.l10n.t('LoopX: lane {0} not merged: {1}', result.branch, result.message),
    );
  return result;
}

/** "Send Lane Back…": rejects the merge gate; the note becomes a todo for the lane's agent. */
export async function rejectLaneCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const target = await laneTarget(model, arg, vscode.l10n.t('Send which lane back?'));
  const note =
    argumentField(arg, 'note', isString) ??
    (await askText({
      title: vscode.l10n.t('What should {0} change?', target.agentId),
      prompt: vscode.l10n.t("The reviewer's note becomes a todo for the lane's agent."),
      validateInput: (v) => (v.trim() === '' ? vscode.l10n.t('The note must not be empty.') : undefined),
    }));
  await runOperation(
    laneReject,
    { goalId: target.goal.goalId, agentId: target.agentId, note },
    editorEnvironment(target.goal.registryPath),
  );
  await model.reload();
}

/** "Remove Lane…": prunes the lane's worktree; keeping or deleting its branch is the person's choice. */
export async function removeLaneCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const target = await laneTarget(model, arg, vscode.l10n.t('Remove which lane?'));
  const given = argumentField(arg, 'deleteBranch', (v): v is boolean => typeof v === 'boolean');
  let deleteBranch = given;
  if (deleteBranch === undefined) {
    const keep = vscode.l10n.t('Keep the branch');
    const drop = vscode.l10n.t('Delete the branch');
    const picked = await vscode.window.showQuickPick([keep, drop], {
      title: vscode.l10n.t('Remove the worktree of lane {0}', target.agentId),
    });
    if (picked === undefined) throw new Cancelled();
    deleteBranch = picked === drop;
  }
  const outcome = await previewThenApply(
    laneRemove,
    { goalId: target.goal.goalId, agentId: target.agentId, deleteBranch },
    editorEnvironment(target.goal.registryPath),
    {
      question: vscode.l10n.t('Remove the lane of {0}?', target.agentId),
      describe: (p) => p.message,
      action: vscode.l10n.t('Remove'),
      confirmed: argumentField(arg, 'confirmed', isTrue) === true,
    },
  );
  if (outcome.outcome === 'refused') throw new Error(outcome.preview.message);
  await model.reload();
}
