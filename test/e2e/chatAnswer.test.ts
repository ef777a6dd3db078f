/**
 * UI end-to-end: a picture of `@loopx /status` answering. code-server's chat view needs a signed-in
 * Copilot before any request reaches LoopX's handler (see chatView.test.ts), so this test takes the
 * honest fallback: a test extension (test/e2e/chat-answer-probe) runs LoopX's real participant handler
 * for `/status` in the real extension host, through LoopX's hidden `_loopx.chatRequest` command, writes
 * its answer as Markdown, and opens it in VS Code's own Markdown preview (`markdown.showPreview`).
 * Screenshot: test-results/chat-status-answer.png (docs/images/chat-status-answer.png).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
const PROBE = join(REPO_ROOT, 'test', 'e2e', 'chat-answer-probe');

describe("@loopx /status's real answer in the Markdown preview (Chromium)", function () {
  this.timeout(240_000);
  let scratch: string;
  let server: CodeServer | undefined;
  let browser: Browser;

  before(async () => {
    mkdirSync(RESULTS, { recursive: true });
    scratch = mkdtempSync(join(tmpdir(), 'loopx-e2e-chat-answer-'));
    browser = await launchChromium();
  });

  after(async () => {
    await server?.stop();
    await browser?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("renders the participant handler's /status answer for the demo workspace", async () => {
    const workspace = materializeDemoWorkspace(join(scratch, 'workspace'));
    const extensionsDir = join(scratch, 'extensions');
    mkdirSync(extensionsDir, { recursive: true });
    installVsix(packageTestExtension(PROBE, join(scratch, 'vsix')), extensionsDir);
    server = await startCodeServer({ workspace, extensionsDir });
    const page: Page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(workbenchUrl(server, workspace, [['extensionDevelopmentPath', remoteUri(server, REPO_ROOT)]]));
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    try {
      // LoopX is active once its sidebar lists the demo goal.
      await page.locator('.activitybar').getByRole('tab', { name: /LoopX/ }).click();
      await page.locator('.part.sidebar').getByText('Tidy the notes folder').first().waitFor({ timeout: 60_000 });
      await page.keyboard.press('F1');
      await page.keyboard.type('LoopX Tests: Show @loopx /status Answer');
      await page
        .locator('.quick-input-list .monaco-list-row', { hasText: /Show @loopx \/status Answer/ })
        .first()
        .waitFor();
      await page.keyboard.press('Enter');
      // The handler's answer, as written by the real host: the demo goal from the status op.
      const answerFile = join(workspace, '.loopx-e2e', 'chat-status-answer.md');
      const preview = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
      await preview.getByText('the answer of LoopX', { exact: false }).first().waitFor({ timeout: 60_000 });
      const answer = readFileSync(answerFile, 'utf8');
      assert.match(answer, /tidy-notes/);
      assert.match(answer, /ACTIVE_GOAL_STATE\.md/, 'the state file anchor');
      assert.match(answer, /loopx\.status/, 'the Show Status button');
      // VS Code's Markdown preview renders it.
      await preview.getByText('tidy-notes', { exact: false }).first().waitFor();
      await page.locator('.part.sidebar').getByText('Tidy the notes folder').first().waitFor();
      await page.screenshot({ path: join(RESULTS, 'chat-status-answer.png') });
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, 'failure-chat-answer.png') });
      throw error;
    }
  });
});
