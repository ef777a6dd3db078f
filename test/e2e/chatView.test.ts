/**
 * UI end-to-end: `@loopx` in the real chat view of the VS Code workbench (code-server in Debian's
 * Chromium), with the test language model extension of the lm tier (test/integration/lm-provider)
 * installed as a user would and LoopX under development on a copy of the demo workspace.
 *
 * What this workbench does (code-server 4.x / VS Code 1.117, no Copilot): the chat view opens, the input
 * recognises `@loopx` and `/status` (participant and command chips, from package.json
 * `chatParticipants`), and the request is routed to LoopX — but VS Code's extension host then needs a
 * language model for the request (`getModelForRequest`: the user-selected model, else the default
 * model, which must be Copilot's), so the workbench answers "Language model unavailable" before LoopX's
 * handler runs — even though the picker offers the test model (which declares tool calling; before it
 * did, the picker offered only "Sign in to use Copilot"). This test pins that behaviour; the handler's real answers are tested in the real host (test/integration/lm, through
 * `_loopx.chatRequest`). Screenshot: test-results/chat-view-no-copilot.png.
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

describe('@loopx in the real chat view (Chromium, no Copilot)', function () {
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

  it('routes "@loopx /status" typed into the chat view to LoopX; without a signed-in Copilot the workbench has no model for it', async () => {
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
      // The completion list of the chat input may hold Enter; the Send button submits.
      await page.locator('.interactive-input-part').getByRole('button', { name: /^Send/ }).first().click();
      const chat = page.locator('.interactive-session').first();
      const response = page.locator('.interactive-response').last();
      await response.getByText('Language model unavailable').first().waitFor({ timeout: 60_000 });
      // Routed to LoopX: the request shows the participant and command chips, the reply is LoopX's.
      assert.match(await page.locator('.interactive-request').last().innerText(), /@loopx\s*\/status/);
      assert.match(await response.innerText(), /LoopX/);
      // The picker now offers the test model (it declares tool calling), yet the request still has no model
      // without a signed-in Copilot: the answer above is the workbench's, whatever the picker shows.
      assert.match(await page.locator('.interactive-input-part').first().innerText(), /LoopX Test M|Models/);
      assert.match(await chat.innerText(), /@loopx/);
      await page.screenshot({ path: join(RESULTS, 'chat-view-no-copilot.png') });
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, 'failure-chat-view.png') });
      console.log(
        await page
          .locator('.interactive-session')
          .first()
          .innerText()
          .catch(() => '(no chat session)'),
      );
      throw error;
    }
  });
});
