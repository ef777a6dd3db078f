import { homedir } from 'node:os';
import * as vscode from 'vscode';
import { clockFromEnv } from '../core/clock';
import { errorMessage } from '../core/errors';
import { globalMarkdown } from '../core/global/markdown';
import type { GlobalCommand } from '../core/global/schemas';
import { loadGlobalSnapshot } from '../core/global/snapshot';
import { globalUnavailable, globalView } from '../core/global/views';
import { registryProjectRoot } from '../core/registry/locate';
import type { WorkspaceModel } from '../workspace/workspaceModel';

/**
 * "LoopX: Global Summary / Gates / Todos / Risks": the global read model of every registry of the
 * workspace (what `loopx global-*` prints), as a Markdown preview. Read-only.
 */
export async function showGlobalView(model: WorkspaceModel, command: GlobalCommand): Promise<void> {
  const registries = model.snapshots
    .filter((snapshot) => snapshot.ok && snapshot.exists)
    .map((snapshot) => snapshot.registryPath);
  if (registries.length === 0) throw new Error('No LoopX registry in this workspace. Run "LoopX: Create Goal…" first.');
  const clock = clockFromEnv();
  const homeDir = homedir();
  const parts: string[] = [];
  for (const registryPath of registries) {
    let response;
    try {
      response = globalView(command, await loadGlobalSnapshot({ registryPath, homeDir, clock }));
    } catch (error) {
      response = globalUnavailable(command, errorMessage(error), {
        projectRoots: [registryProjectRoot(registryPath)],
        homeDir,
        now: clock.now(),
        registryPath,
      });
    }
    parts.push(globalMarkdown(response));
  }
  const document = await vscode.workspace.openTextDocument({
    language: 'markdown',
    content: parts.join('\n\n---\n\n'),
  });
  await vscode.commands.executeCommand('markdown.showPreview', document.uri);
}
