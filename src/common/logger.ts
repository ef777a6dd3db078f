import * as vscode from 'vscode';

/** The LoopX log: a LogOutputChannel, so users get levels and "Set Log Level…" for free. */
export function createLogger(): vscode.LogOutputChannel {
  return vscode.window.createOutputChannel('LoopX', { log: true });
}
