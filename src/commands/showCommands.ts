import * as vscode from 'vscode';
import { COMMANDS, paletteCommandId } from '../core/commands/catalog';

/** A quick pick over the whole catalog: palette commands run, CLI-only ones copy their CLI line. */
export async function showAllCommands(): Promise<void> {
  const items = COMMANDS.map((spec) => ({
    label: spec.title ? `LoopX: ${spec.title}` : `loopx ${spec.cli ?? ''}`,
    description: [spec.cli ? `loopx ${spec.cli}` : null, spec.slash].filter(Boolean).join('  ·  '),
    detail: `${spec.intent} (${spec.mutation.replace(/_/g, ' ')})`,
    spec,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: 'LoopX commands',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!picked) return;
  if (picked.spec.title) {
    await vscode.commands.executeCommand(paletteCommandId(picked.spec));
  } else if (picked.spec.cli) {
    await vscode.env.clipboard.writeText(`loopx ${picked.spec.cli}`);
    void vscode.window.showInformationMessage(`Copied "loopx ${picked.spec.cli}" to the clipboard.`);
  }
}
