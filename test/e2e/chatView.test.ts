/**
 * UI end-to-end: `@loopx` answering in the real chat view of the VS Code workbench (code-server in
 * Debian's Chromium). The chat view needs a language model in the workbench, so the test language
 * model extension of the lm integration tier (test/integration/lm-provider) is packaged and
 * installed, as a user would install an extension; the extension under development is LoopX on a
 * copy of the demo workspace. The test types `@loopx /status` into the chat input and waits for the
 * participant's answer. Screenshot: test-results/chat-status.png (docs/images/chat-status.png).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { materializeDemoWorkspace, REPO_ROOT } from '../support/demoWorkspace';
import {
  installVsix,
  launchChromium,
  packageTestExtension,
  remoteUri,
  startCodeServer,
  workbenchUrl,
  type CodeServer,
} from '../support/vscodeHost';

const RESULTS = join(REPO_ROOT, 'test-results');
const LM_PROVIDER = join(REPO_ROOT, 'test', 'integration', 'lm-provider');

describe('@loopx in the real chat view (Chromium)', function () {
  this.timeout(240_000);
  let scratch: string;
  let server: CodeServer | undefined;
  let browser: Browser;

  before(async () => {
    mkdirSync(RESULTS, { recursive: true });
    scratch = mkdtempSync(join(tmpdir(), 'loopx-e2e-chat-'));
    browser = await launchChromium();
  });

  after(async () => {
    await server?.stop();
    await browser?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('answers "@loopx /status" typed into the chat view with the goal status', async () => {
    const workspace = materializeDemoWorkspace(join(scratch, 'workspace'));
    const extensionsDir = join(scratch, 'extensions');
    mkdirSync(extensionsDir, { recursive: true });
    installVsix(packageTestExtension(LM_PROVIDER, join(scratch, 'vsix')), extensionsDir);
    server = await startCodeServer({ workspace, extensionsDir, settings: { 'chat.disableAIFeatures': false } });
    const page: Page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(workbenchUrl(server, workspace, [['extensionDevelopmentPath', remoteUri(server, REPO_ROOT)]]));
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    try {
      // LoopX is active once its sidebar lists the demo goal.
      await page.locator('.activitybar').getByRole('tab', { name: /LoopX/ }).click();
      await page.locator('.part.sidebar').getByText('Tidy the notes folder').first().waitFor({ timeout: 60_000 });
      await page.keyboard.press('F1');
      await page.keyboard.type('Chat: Open Chat');
      await page
        .locator('.quick-input-list .monaco-list-row', { hasText: /Open Chat/ })
        .first()
        .waitFor();
      await page.keyboard.press('Enter');
      const input = page.locator('.interactive-input-part .monaco-editor').first();
      await input.waitFor({ timeout: 30_000 });
      await input.click();
      await page.keyboard.type('@loopx /status');
      await page.keyboard.press('Enter');
      const response = page.locator('.interactive-response').last();
      await response.getByText('tidy-notes').first().waitFor({ timeout: 60_000 });
      const text = await response.innerText();
      assert.match(text, /tidy-notes/);
      await page.screenshot({ path: join(RESULTS, 'chat-status.png') });
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, 'failure-chat-status.png') });
      throw error;
    }
  });
});
