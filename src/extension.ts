import * as vscode from 'vscode';
import { startActivationProfile } from './common/activationProfile';
import { configureL10n } from './common/l10n';
import { createLogger } from './common/logger';
import { LoopxApp } from './app';

/** Composition root: build the app, hand its disposables to VS Code, return the public API. */
export async function activate(context: vscode.ExtensionContext): Promise<LoopxApp['api'] | undefined> {
  const startedAt = performance.now();
  const stopProfile = startActivationProfile();
  configureL10n();
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
    const showLog = vscode.l10n.t('Show Log');
    void vscode.window
      .showErrorMessage(vscode.l10n.t('LoopX could not start: {0}', message), showLog)
      .then((choice) => {
        if (choice === showLog) log.show();
      });
    return undefined;
  }
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
