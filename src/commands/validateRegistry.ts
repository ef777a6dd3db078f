import * as vscode from 'vscode';
import { validateRegistry } from '../core/ops/registry';
import { runOperation } from '../core/ops/run';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { editorEnvironment } from './operationRunner';

/** "LoopX: Validate Registry" — `loopx registry` for each registry; problems go to the Problems panel. */
export async function validateRegistries(
  model: WorkspaceModel,
  diagnostics: vscode.DiagnosticCollection,
  log: vscode.LogOutputChannel,
): Promise<void> {
  const paths = model.registryPaths();
  if (paths.length === 0) throw new Error(vscode.l10n.t('Open a folder first: there is no registry to validate.'));
  let problems = 0;
  let checked = 0;
  diagnostics.clear();
  for (const registryPath of paths) {
    const uri = vscode.Uri.file(registryPath);
    let result;
    try {
      result = await runOperation(validateRegistry, {}, editorEnvironment(registryPath));
    } catch (error) {
      problems += 1;
      diagnostics.set(uri, [errorDiagnostic((error as Error).message, 'registry_invalid')]);
      continue;
    }
    if (!('problem_diagnostics' in result)) continue; // no registry in this folder
    checked += 1;
    problems += result.problem_diagnostics.length;
    diagnostics.set(
      uri,
      result.problem_diagnostics.map((d) => errorDiagnostic(d.message, d.code)),
    );
    log.info(
      `${registryPath}: ${result.ok ? 'ok' : `${result.problem_diagnostics.length} problem(s)`} (${result.goal_count} goal(s))`,
    );
  }
  if (checked === 0 && problems === 0) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t('LoopX: no registry in this workspace yet. Create a goal to make one.'),
    );
  } else if (problems === 0) {
    void vscode.window.showInformationMessage(
      checked === 1
        ? vscode.l10n.t('LoopX: 1 registry is valid.')
        : vscode.l10n.t('LoopX: {0} registries are valid.', checked),
    );
  } else {
    const showProblems = vscode.l10n.t('Show Problems');
    const choice = await vscode.window.showWarningMessage(
      vscode.l10n.t('LoopX: {0} registry problem(s). See the Problems panel.', problems),
      showProblems,
    );
    if (choice === showProblems) await vscode.commands.executeCommand('workbench.actions.view.problems');
  }
}

function errorDiagnostic(message: string, code: string): vscode.Diagnostic {
  const diagnostic = new vscode.Diagnostic(new vscode.Range(0, 0, 0, 1), message, vscode.DiagnosticSeverity.Error);
  diagnostic.source = 'LoopX';
  diagnostic.code = code;
  return diagnostic;
}
