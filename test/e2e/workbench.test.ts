/**
 * UI end-to-end: Playwright drives the real VS Code workbench (code-server) in Debian's Chromium,
 * with the extension under development loaded on a copy of the demo workspace. Screenshots go
 * to test-results/ (the README's screenshot is test-results/sidebar.png).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { materializeDemoWorkspace, REPO_ROOT } from '../support/demoWorkspace';
import { launchChromium, remoteUri, startCodeServer, workbenchUrl, type CodeServer } from '../support/vscodeHost';

const RESULTS = join(REPO_ROOT, 'test-results');

async function openWorkbench(server: CodeServer, browser: Browser, workspace: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(workbenchUrl(server, workspace, [['extensionDevelopmentPath', remoteUri(server, REPO_ROOT)]]));
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  return page;
}

async function openLoopxSidebar(page: Page): Promise<void> {
  await page.locator('.activitybar').getByRole('tab', { name: /LoopX/ }).click();
  await page.locator('.part.sidebar').getByText('Goals', { exact: false }).first().waitFor();
}

describe('LoopX in the VS Code workbench (Chromium)', function () {
  this.timeout(180_000);
  let scratch: string;
  let server: CodeServer;
  let browser: Browser;

  before(async () => {
    mkdirSync(RESULTS, { recursive: true });
    scratch = mkdtempSync(join(tmpdir(), 'loopx-e2e-'));
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  afterEach(async () => {
    await server?.stop();
  });

  it('shows the LoopX activity-bar container with the Goals and Agents views and their welcome content on an empty folder', async () => {
    const empty = join(scratch, 'empty');
    mkdirSync(empty, { recursive: true });
    server = await startCodeServer({ workspace: empty });
    const page = await openWorkbench(server, browser, empty);
    try {
      await openLoopxSidebar(page);
      const sidebar = page.locator('.part.sidebar');
      await sidebar.getByText('No LoopX goals in this workspace yet.').waitFor({ timeout: 30_000 });
      await sidebar.getByText('No agents are registered', { exact: false }).waitFor();
      const buttons = await sidebar
        .locator('.welcome-view-content a.monaco-button, .welcome-view-content .monaco-button')
        .allInnerTexts();
      assert.ok(
        buttons.some((b) => /Create Goal/.test(b)),
        `welcome buttons: ${buttons.join(', ')}`,
      );
      await page.screenshot({ path: join(RESULTS, 'welcome.png') });
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, 'failure-welcome.png') });
      throw error;
    }
  });

  it('lists the demo workspace goal in the Goals view', async () => {
    const workspace = materializeDemoWorkspace(join(scratch, 'workspace'));
    server = await startCodeServer({ workspace });
    const page = await openWorkbench(server, browser, workspace);
    try {
      await openLoopxSidebar(page);
      const goalRow = page.locator('.part.sidebar .monaco-list-row', { hasText: 'Tidy the notes folder' });
      await goalRow.first().waitFor({ timeout: 30_000 });
      await goalRow.first().click();
      const sidebar = page.locator('.part.sidebar');
      // The goal's children come from the real state file and run index of the demo workspace.
      await sidebar
        .getByText('Add a "Related" section linking notes that share a tag.')
        .first()
        .waitFor({ timeout: 15_000 });
      await sidebar.locator('.monaco-list-row', { hasText: 'Needs you' }).first().waitFor();
      await sidebar.locator('.monaco-list-row', { hasText: 'Approve publishing the knowledge base' }).first().waitFor();
      await sidebar
        .locator('.monaco-list-row', { hasText: 'Write notes/index.md listing every note by tag.' })
        .first()
        .waitFor();
      assert.equal(
        await sidebar.locator('.monaco-list-row', { hasText: 'Give every note a level-one title.' }).count(),
        0,
        'done todos are not listed',
      );
      await page.screenshot({ path: join(RESULTS, 'workbench.png') });
      await page.locator('.part.sidebar').screenshot({ path: join(RESULTS, 'sidebar.png') });
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, 'failure-goals.png') });
      throw error;
    }
  });

  it('opens the warnings webview, shows a mismatch side by side and resolves it with its button; the status bar and goal detail chart show', async () => {
    const workspace = materializeDemoWorkspace(join(scratch, 'warnings'));
    const hostile = '<script>alert(1)</script> Merge duplicate notes';
    // Another process records a run whose recommendation differs from the durable Next Action.
    const cli = spawnSync(
      process.execPath,
      [
        join(REPO_ROOT, 'out', 'cli.js'),
        'refresh-state',
        '--goal-id',
        'tidy-notes',
        '--classification',
        'state_refreshed',
        '--agent-id',
        'codex-main',
        '--progress-scope',
        'goal',
        '--recommended-action',
        hostile,
      ],
      { cwd: workspace, encoding: 'utf8' },
    );
    assert.equal(cli.status, 0, `${cli.stdout}${cli.stderr}`);
    server = await startCodeServer({ workspace });
    const page = await openWorkbench(server, browser, workspace);
    try {
      await openLoopxSidebar(page);
      const statusItem = page.locator('.statusbar-item', { hasText: 'tidy-notes' }).first();
      await statusItem.waitFor({ timeout: 30_000 });
      await page.locator('.part.statusbar').screenshot({ path: join(RESULTS, 'statusbar.png') });

      await page.keyboard.press('F1');
      await page.keyboard.type('LoopX: Show Projection Warnings');
      await page.keyboard.press('Enter');
      const frame = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
      const card = frame.locator('article.card', { hasText: 'Latest run recommends something else' }).first();
      await card.waitFor({ timeout: 30_000 });
      // Side by side, and the hostile text shows as text.
      await card.locator('.compared .text', { hasText: 'Durable Next Action' }).waitFor();
      await card.locator('blockquote', { hasText: hostile }).waitFor();
      assert.equal(
        await frame.locator('script', { hasText: 'alert(1)' }).count(),
        0,
        'the goal text became no script element',
      );
      await page.screenshot({ path: join(RESULTS, 'warnings-webview.png') });

      await card.locator('button', { hasText: 'Write as Next Action' }).click();
      // Multi-agent goal: first pick the agent the refresh is recorded for, then confirm the preview.
      const quickInput = page.locator('.quick-input-widget');
      await quickInput.waitFor({ timeout: 15_000 });
      await page.keyboard.press('Enter');
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 15_000 });
      await dialog.screenshot({ path: join(RESULTS, 'warnings-confirm.png') });
      await dialog.locator('a.monaco-button, button', { hasText: 'Write Next Action' }).first().click();
      const stateFile = join(workspace, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md');
      const deadline = Date.now() + 20_000;
      while (!readFileSync(stateFile, 'utf8').includes(hostile)) {
        if (Date.now() > deadline) throw new Error('the Next Action was not written');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await frame
        .locator('.result.ok')
        .first()
        .waitFor({ timeout: 15_000 })
        .catch(() => undefined);
      await page.screenshot({ path: join(RESULTS, 'warnings-resolved.png') });

      await page.keyboard.press('F1');
      await page.keyboard.type('LoopX: Show Goal Detail');
      await page.keyboard.press('Enter');
      const detail = page.frameLocator('iframe.webview.ready').last().frameLocator('iframe#active-frame');
      await detail.locator('.uplot').first().waitFor({ timeout: 30_000 });
      await page.screenshot({ path: join(RESULTS, 'goal-detail.png') });
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, 'failure-warnings.png') });
      throw error;
    }
  });
});
