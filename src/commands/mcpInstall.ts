import * as path from 'node:path';
import * as vscode from 'vscode';
import { MCP_TARGETS, mcpInstall, type McpInstallResult, type McpTarget } from '../core/ops/mcpInstall';
import { runOperation } from '../core/ops/run';
import { slashCommands } from '../core/ops/slashCommands';
import { folderEnvironment, previewThenApply } from './operationRunner';
import { argumentField, Cancelled, isTrue, pickProjectFolder } from './pickers';

/**
 * "LoopX: Connect an Agent over MCP…": the agent (quick pick), the folder, then `mcp install`'s
 * preview (the config file's diff) in a modal dialog, applied on confirm. The server is this
 * extension's own CLI, started by the extension host's Node (Electron with ELECTRON_RUN_AS_NODE on the
 * desktop). For VS Code, Copilot's `/loopx-*` prompt files are installed beside `.vscode/mcp.json`.
 * From code: `{ target, confirmed: true }`.
 */

function targetLabel(target: McpTarget): string {
  switch (target) {
    case 'claude-code':
      return 'Claude Code';
    case 'codex':
      return 'Codex';
    case 'opencode':
      return 'opencode';
    case 'vscode':
      return vscode.l10n.t('VS Code (Copilot agent mode)');
  }
}

function targetDetail(target: McpTarget): string {
  switch (target) {
    case 'claude-code':
      return vscode.l10n.t('writes .mcp.json (project scope)');
    case 'codex':
      return vscode.l10n.t('writes .codex/config.toml (Codex reads it in trusted projects)');
    case 'opencode':
      return vscode.l10n.t('writes opencode.json');
    case 'vscode':
      return vscode.l10n.t('writes .vscode/mcp.json and the /loopx prompt files in .github/prompts');
  }
}

async function pickTarget(arg: unknown): Promise<McpTarget> {
  const given = argumentField(arg, 'target', (v): v is McpTarget => (MCP_TARGETS as readonly unknown[]).includes(v));
  if (given !== undefined) return given;
  const picked = await vscode.window.showQuickPick(
    MCP_TARGETS.map((target) => ({ label: targetLabel(target), detail: targetDetail(target), target })),
    { title: vscode.l10n.t('Connect which agent to LoopX over MCP?'), ignoreFocusOut: true },
  );
  if (picked === undefined) throw new Cancelled();
  return picked.target;
}

export async function connectAgentOverMcpCommand(extensionPath: string, arg: unknown): Promise<McpInstallResult> {
  const target = await pickTarget(arg);
  const folder = await pickProjectFolder(vscode.l10n.t('Connect the agent in which folder?'));
  const env = folderEnvironment(folder);
  const input = {
    target,
    project: folder.uri.fsPath,
    command: process.execPath,
    cli: path.join(extensionPath, 'out', 'cli.js'),
    electronRunAsNode: process.versions['electron'] !== undefined,
  };
  const outcome = await previewThenApply(mcpInstall, input, env, {
    question: vscode.l10n.t('Connect {0} to LoopX over MCP?', targetLabel(target)),
    describe: (preview) => preview.diff,
    action: vscode.l10n.t('Write'),
    confirmed: argumentField(arg, 'confirmed', isTrue) === true,
    nothingToApply: (preview) => preview.status === 'unchanged',
  });
  if (target === 'vscode')
    await runOperation(slashCommands, { install: true, surface: ['copilot'], project: folder.uri.fsPath }, env);
  const result = outcome.outcome === 'applied' ? outcome.result : outcome.preview;
  const file = vscode.Uri.file(result.config_file);
  const open = vscode.l10n.t('Open {0}', path.basename(result.config_file));
  void vscode.window
    .showInformationMessage(
      result.status === 'unchanged'
        ? vscode.l10n.t('{0} is already connected to LoopX over MCP.', targetLabel(target))
        : vscode.l10n.t('{0} is connected to LoopX over MCP.', targetLabel(target)),
      open,
    )
    .then((choice) => {
      if (choice === open) void vscode.window.showTextDocument(file);
    });
  return result;
}
