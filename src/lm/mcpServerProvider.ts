import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { projectRegistryPath } from '../core/ops/goalHandle';
import { LOOPX_VERSION } from '../core/version';
import { mcpProviderApi, type McpStdioServerDefinitionLike } from './hostApi';

/**
 * `contributes.mcpServerDefinitionProviders` (`loopx.mcpServers`): one stdio server per workspace folder
 * with a LoopX project (`.loopx/registry.json`), so Copilot's agent mode lists LoopX's MCP tools with no
 * setup. The server is this extension's own CLI, `out/cli.js mcp --project-root <folder>`, started by
 * the Node that runs the extension host (the desktop's Electron with ELECTRON_RUN_AS_NODE=1). None in
 * an untrusted workspace (the server writes); the list changes when folders, trust or registries do.
 */

export const MCP_PROVIDER_ID = 'loopx.mcpServers';

export interface McpServerDefinitionView {
  label: string;
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The definitions for the folders now open (plain values; the provider wraps them in the host's class). */
export function mcpServerDefinitions(extensionPath: string): McpServerDefinitionView[] {
  if (!vscode.workspace.isTrusted) return [];
  const cli = path.join(extensionPath, 'out', 'cli.js');
  const env: Record<string, string> = process.versions['electron'] !== undefined ? { ELECTRON_RUN_AS_NODE: '1' } : {};
  return (vscode.workspace.workspaceFolders ?? [])
    .filter((folder) => folder.uri.scheme === 'file' && existsSync(projectRegistryPath(folder.uri.fsPath)))
    .map((folder) => ({
      label: `LoopX (${folder.name})`,
      command: process.execPath,
      args: [cli, 'mcp', '--project-root', folder.uri.fsPath],
      env,
    }));
}

export function registerMcpServerProvider(
  extensionPath: string,
  onDidChangeRegistries: vscode.Event<unknown>,
): vscode.Disposable {
  const api = mcpProviderApi();
  if (api === undefined) return new vscode.Disposable(() => undefined);
  const changed = new vscode.EventEmitter<void>();
  const fire = (): void => changed.fire();
  const subscriptions = [
    changed,
    vscode.workspace.onDidChangeWorkspaceFolders(fire),
    vscode.workspace.onDidGrantWorkspaceTrust(fire),
    onDidChangeRegistries(fire),
    api.registerProvider(MCP_PROVIDER_ID, {
      onDidChangeMcpServerDefinitions: changed.event,
      provideMcpServerDefinitions: (): McpStdioServerDefinitionLike[] =>
        mcpServerDefinitions(extensionPath).map((definition) => {
          const server = new api.stdioServer(
            definition.label,
            definition.command,
            definition.args,
            definition.env,
            LOOPX_VERSION,
          );
          server.cwd = vscode.Uri.file(definition.args[3] ?? extensionPath);
          return server;
        }),
    }),
  ];
  return vscode.Disposable.from(...subscriptions);
}
