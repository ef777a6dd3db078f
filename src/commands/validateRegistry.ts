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
  if (paths.length === 0) throw new Error('Open a folder first: there is no registry to validate.');
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
    void vscode.window.showInformationMessage('LoopX: no registry in this workspace yet. Create a goal to make one.');
  } else if (problems === 0) {
    void vscode.window.showInformationMessage(`LoopX: ${checked} registr${checked === 1 ? 'y is' : 'ies are'} valid.`);
  } else {
    const choice = await vscode.window.showWarningMessage(
      `LoopX: ${problems} registry problem(s). See the Problems panel.`,
      'Show Problems',
    );
    if (choice === 'Show Problems') await vscode.commands.executeCommand('workbench.actions.view.problems');
  }
}

function errorDiagnostic(message: string, code: string): vscode.Diagnostic {
  const diagnostic = new vscode.Diagnostic(new vscode.Range(0, 0, 0, 1), message, vscode.DiagnosticSeverity.Error);
  diagnostic.source = 'LoopX';
  diagnostic.code = code;
  return diagnostic;
}
