import * as vscode from 'vscode';
import { startActivationProfile } from './common/activationProfile';
import { createLogger } from './common/logger';
import { LoopxApp } from './app';

/** Composition root: build the app, hand its disposables to VS Code, return the public API. */
export async function activate(context: vscode.ExtensionContext): Promise<LoopxApp['api'] | undefined> {
  const startedAt = performance.now();
  const stopProfile = startActivationProfile();
  const log = createLogger();
  context.subscriptions.push(log);
  try {
    const app = new LoopxApp(context, log, startedAt, stopProfile);
    context.subscriptions.push(app);
    await app.start();
    return app.api;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log.error(`activation failed: ${message}`);
    void vscode.window.showErrorMessage(`LoopX could not start: ${message}`, 'Show Log').then((choice) => {
      if (choice === 'Show Log') log.show();
    });
    return undefined;
  }
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
