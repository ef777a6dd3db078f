/**
 * UI end-to-end: the demo workspace opened untrusted (workspace trust on, restricted mode) in the
 * real VS Code workbench (code-server in Debian's Chromium). The LoopX container shows its
 * "Restricted Mode" view (package.json `views` / `viewsWelcome`, `when: !isWorkspaceTrusted`) saying
 * what LoopX does not do here, and its "Manage Workspace Trust" button opens VS Code's trust editor.
 * Screenshot: test-results/restricted.png (docs/images/restricted.png).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { materializeDemoWorkspace, REPO_ROOT } from '../support/demoWorkspace';
import { launchChromium, remoteUri, startCodeServer, workbenchUrl, type CodeServer } from '../support/vscodeHost';

const RESULTS = join(REPO_ROOT, 'test-results');

describe('LoopX in an untrusted workspace (Chromium, restricted mode)', function () {
  this.timeout(180_000);
  let scratch: string;
  let server: CodeServer | undefined;
  let browser: Browser;

  before(async () => {
    mkdirSync(RESULTS, { recursive: true });
    scratch = mkdtempSync(join(tmpdir(), 'loopx-e2e-restricted-'));
    browser = await launchChromium();
  });

  after(async () => {
    await server?.stop();
    await browser?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('shows the Restricted Mode welcome: what is read-only, and the trust action that opens the trust editor', async () => {
    const workspace = materializeDemoWorkspace(join(scratch, 'workspace'));
    server = await startCodeServer({ workspace, untrusted: true });
    const page: Page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(workbenchUrl(server, workspace, [['extensionDevelopmentPath', remoteUri(server, REPO_ROOT)]]));
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    try {
      await page.locator('.activitybar').getByRole('tab', { name: /LoopX/ }).click();
      const sidebar = page.locator('.part.sidebar');
      // Read-only, the goal still shows.
      await sidebar.getByText('Tidy the notes folder').first().waitFor({ timeout: 60_000 });
      const header = sidebar.locator('.pane-header', { hasText: 'Restricted Mode' }).first();
      await header.waitFor({ timeout: 30_000 });
      if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
      // Room for the whole welcome text: fold the Agents view.
      const agents = sidebar.locator('.pane-header', { hasText: 'Agents' }).first();
      if ((await agents.getAttribute('aria-expanded')) === 'true') await agents.click();
      const welcome = sidebar.locator('.welcome-view-content', { hasText: 'This workspace is not trusted' }).first();
      await welcome.waitFor({ timeout: 30_000 });
      const text = await welcome.innerText();
      assert.match(text, /LoopX is read-only here/);
      assert.match(
        text,
        /does not write state files or the registry, run agent turns or loops, or start the status server/,
      );
      assert.match(text, /Trust the workspace to act from the tree/);
      const buttons = await welcome.locator('.monaco-button').allInnerTexts();
      assert.ok(
        buttons.some((b) => /Manage Workspace Trust/.test(b)),
        `welcome buttons: ${buttons.join(', ')}`,
      );
      await welcome.locator('.monaco-button', { hasText: 'Manage Workspace Trust' }).first().scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(RESULTS, 'restricted.png') });
      await welcome.locator('.monaco-button', { hasText: 'Manage Workspace Trust' }).first().click();
      // VS Code's Workspace Trust editor opens, on this (restricted) workspace.
      const trustEditor = page.locator('.workspace-trust-editor').first();
      await trustEditor.waitFor({ timeout: 30_000 });
      await trustEditor.getByText('Restricted Mode', { exact: false }).first().waitFor({ timeout: 30_000 });
      assert.match(await trustEditor.innerText(), /Restricted Mode/);
      await page.screenshot({ path: join(RESULTS, 'restricted-trust-editor.png') });
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, 'failure-restricted.png') });
      throw error;
    }
  });
});
