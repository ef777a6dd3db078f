import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import type { LaneState } from '../workspace/laneState';

/**
 * Where agents are working, in the editor (docs/lanes.md#in-the-editor): files an unmerged lane
 * changes carry a decoration (badge `L`, two lanes changing the same file in the warning colour), and
 * the first edit a person makes to such a file shows a warning with "Pause that agent" (which pauses
 * the agent's goal, so its next turn does not start) and "Show Lanes".
 */
export class LaneDecorations extends Disposable implements vscode.FileDecorationProvider {
  private readonly changed = this.register(new vscode.EventEmitter<vscode.Uri[] | undefined>());
  readonly onDidChangeFileDecorations = this.changed.event;
  private readonly warned = new Set<string>();
  /** What the banner offered, newest last (read by the integration tests). */
  readonly bannersShown: { file: string; agents: string[] }[] = [];

  constructor(private readonly lanes: LaneState) {
    super();
    this.register(vscode.window.registerFileDecorationProvider(this));
    this.register(lanes.onDidChange(() => this.changed.fire(undefined)));
    this.register(vscode.workspace.onDidChangeTextDocument((e) => this.onEdit(e)));
  }

  provideFileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
    if (uri.scheme !== 'file') return undefined;
    const info = this.lanes.fileInfo(uri.fsPath);
    if (info === undefined) return undefined;
    const overlap = info.agents.length > 1;
    return {
      badge: 'L',
      tooltip: overlap
        ? vscode.l10n.t('Changed by the unmerged lanes of {0}', info.agents.join(', '))
        : vscode.l10n.t('Changed by the unmerged lane of {0}', info.agents.join(', ')),
      color: new vscode.ThemeColor(overlap ? 'list.warningForeground' : 'gitDecoration.modifiedResourceForeground'),
      propagate: false,
    };
  }

  private onEdit(event: vscode.TextDocumentChangeEvent): void {
    if (event.contentChanges.length === 0 || event.document.uri.scheme !== 'file') return;
    const info = this.lanes.fileInfo(event.document.uri.fsPath);
    if (info === undefined || this.warned.has(info.file)) return;
    this.warned.add(info.file);
    this.bannersShown.push({ file: info.file, agents: [...info.agents] });
    const pause = vscode.l10n.t('Pause that agent');
    const show = vscode.l10n.t('Show Lanes');
    void vscode.window
      .showWarningMessage(
        vscode.l10n.t(
          'An agent is changing this file in its lane ({0}); your edit may conflict when the lane is merged.',
          info.agents.join(', '),
        ),
        pause,
        show,
      )
      .then((choice) => {
        if (choice === pause)
          void vscode.commands.executeCommand('loopx.pauseGoal', {
            goalId: info.goalId,
            registryPath: info.registryPath,
          });
        else if (choice === show)
          void vscode.commands.executeCommand('loopx.laneList', {
            goalId: info.goalId,
            registryPath: info.registryPath,
          });
      });
  }
}
