import * as vscode from 'vscode';
import { showCommands } from '../core/ops/commands';
import { hostClock } from '../core/ops/hostSetup';
import { runOperation } from '../core/ops/run';
import { commandTitle } from './commandTitles';
import { HOME_DIR } from './pickers';

/** A quick pick over the whole catalog (the `commands` operation): palette commands run, CLI-only ones copy their CLI line. */
export async function showAllCommands(): Promise<void> {
  const { commands } = await runOperation(
    showCommands,
    {},
    {
      cwd: process.cwd(),
      env: process.env,
      // The catalog reads no clock: the system clock (an env without LOOPX_NOW), so a bad LOOPX_NOW cannot fail the listing.
      clock: hostClock({}),
      homeDir: HOME_DIR,
    },
  );
  const items = commands.map((entry) => ({
    label: entry.palette ? commandTitle(entry.palette.command, entry.palette.title) : (entry.cli ?? ''),
    description: [entry.cli, entry.slash].filter(Boolean).join('  ·  '),
    detail: `${entry.intent} (${entry.mutation_policy.replace(/_/g, ' ')})`,
    entry,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('LoopX commands'),
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!picked) return;
  if (picked.entry.palette) {
    await vscode.commands.executeCommand(picked.entry.palette.command);
  } else if (picked.entry.cli) {
    await vscode.env.clipboard.writeText(picked.entry.cli);
    void vscode.window.showInformationMessage(vscode.l10n.t('Copied "{0}" to the clipboard.', picked.entry.cli));
  }
}
