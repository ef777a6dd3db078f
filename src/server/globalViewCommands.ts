import * as vscode from 'vscode';
import type { GlobalCommand } from '../core/status/globalSchemas';
import { globalGates, globalMarkdown, globalRisks, globalSummary, globalTodos } from '../core/ops/global';
import { runOperation } from '../core/ops/run';
import { editorEnvironment } from '../commands/operationRunner';
import type { WorkspaceModel } from '../workspace/workspaceModel';

const GLOBAL_OPERATIONS = {
  'global-summary': globalSummary,
  'global-gates': globalGates,
  'global-todos': globalTodos,
  'global-risks': globalRisks,
} as const;

/**
 * "LoopX: Global Summary / Gates / Todos / Risks": the global read model of every registry of the
 * workspace (what `loopx global-*` prints), as a Markdown preview. Read-only.
 */
export async function showGlobalView(model: WorkspaceModel, command: GlobalCommand): Promise<void> {
  const registries = model.snapshots
    .filter((snapshot) => snapshot.ok && snapshot.exists)
    .map((snapshot) => snapshot.registryPath);
  if (registries.length === 0)
    throw new Error(vscode.l10n.t('No LoopX registry in this workspace. Run "LoopX: Create Goal…" first.'));
  const operation = GLOBAL_OPERATIONS[command];
  const parts: string[] = [];
  for (const registryPath of registries) {
    parts.push(globalMarkdown(await runOperation(operation, {}, editorEnvironment(registryPath))));
  }
  const document = await vscode.workspace.openTextDocument({
    language: 'markdown',
    content: parts.join('\n\n---\n\n'),
  });
  await vscode.commands.executeCommand('markdown.showPreview', document.uri);
}
