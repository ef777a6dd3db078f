/**
 * UI end-to-end on what users install: `scripts/package.mjs` builds the .vsix, code-server installs it
 * with `--install-extension` (as `npm start` and a user do), and the workbench opens with no extension
 * under development, so every webview below loads its script and stylesheets from the installed folder.
 * Each webview must show its content, not the empty `<main id="root">` of a shell whose script did not ship.
 * Screenshots: test-results/installed-*.png (docs/images/sidebar.png, statusbar.png, warnings-webview.png and
 * goal-detail.png are the sidebar's, the status bar's, the panel's and the goal detail's).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Frame, Page } from 'playwright-core';
import { EXTENSION_ID } from '../../src/core/commands/ids';
import { materializeDemoWorkspace, REPO_ROOT } from '../support/demoWorkspace';
import { brokenLinks, markdownLinks } from '../support/markdownLinks';
import { installVsix, launchChromium, startCodeServer, workbenchUrl, type CodeServer } from '../support/vscodeHost';

const RESULTS = join(REPO_ROOT, 'test-results');

/** The webview frame whose `main#root` holds `selector` (with `text`), polled across every webview of the page. */
async function webviewShowing(
  page: Page,
  selector: string,
  text: string | RegExp,
  besides: ReadonlySet<Frame> = new Set(),
): Promise<Frame> {
  const deadline = Date.now() + 45_000;
  for (;;) {
    for (const frame of page.frames().filter((f) => !besides.has(f))) {
      const found = await frame
        .locator(`main#root ${selector}`, { hasText: text })
        .count()
        .catch(() => 0);
      if (found > 0) return frame;
    }
    if (Date.now() > deadline) {
      const roots = await Promise.all(
        page.frames().map((frame) =>
          frame
            .locator('main#root')
            .evaluateAll((mains) => mains.map((main) => `<main id="root"> with ${main.childElementCount} children`))
            .catch(() => []),
        ),
      );
      throw new Error(`no webview shows ${selector} "${String(text)}"; webview roots: ${roots.flat().join('; ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 15_000 });
  await input.fill(`>${title}`);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
}

describe('LoopX installed from its .vsix: the webviews show their content (Chromium)', function () {
  this.timeout(300_000);
  let scratch: string;
  let extensionsDir: string;
  let installedDir: string;
  let server: CodeServer | undefined;
  let browser: Browser;

  before(() => {
    mkdirSync(RESULTS, { recursive: true });
    scratch = mkdtempSync(join(tmpdir(), 'loopx-e2e-installed-'));
    const vsix = join(scratch, 'loopx.vsix');
    execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'package.mjs'), '--out', vsix], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    extensionsDir = join(scratch, 'extensions');
    installVsix(vsix, extensionsDir);
    const installed = readdirSync(extensionsDir).filter((dir) => dir.startsWith(`${EXTENSION_ID}-`));
    assert.equal(installed.length, 1, `installed extensions: ${readdirSync(extensionsDir).join(', ')}`);
    installedDir = join(extensionsDir, installed[0] ?? '');
  });

  before(async () => {
    browser = await launchChromium();
  });

  after(async () => {
    await server?.stop();
    await browser?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('installs a README whose links work on the marketplace page: absolute, into files the repository has', () => {
    const readme = ['readme.md', 'README.md'].map((name) => join(installedDir, name)).find((file) => existsSync(file));
    assert.ok(readme, `no README in ${readdirSync(installedDir).join(', ')}`);
    const packaged = readFileSync(readme, 'utf8');
    const links = markdownLinks(packaged);
    assert.ok(links.length > 10, 'the packaged README has its links');
    const relative = links.filter((link) => !/^(https:|#)/.test(link.target));
    assert.deepEqual(relative, [], 'vsce rewrote every relative link and image to the repository');
    assert.deepEqual(brokenLinks(REPO_ROOT, join(REPO_ROOT, 'README.md'), packaged), []);
  });

  it('shows the Goals tree with its gate actions and the status-bar quota, and opens the Projection Warnings view and panel and the goal detail with their content', async () => {
    const workspace = materializeDemoWorkspace(join(scratch, 'workspace'));
    // The installed CLI records a run whose recommendation differs from the durable Next Action: one warning card.
    const recommendation = 'Merge duplicate notes before indexing';
    const cli = spawnSync(
      process.execPath,
      [
        join(installedDir, 'out', 'cli.js'),
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
        recommendation,
      ],
      { cwd: workspace, encoding: 'utf8' },
    );
    assert.equal(cli.status, 0, `${cli.stdout}${cli.stderr}`);

    server = await startCodeServer({ workspace, extensionsDir });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    // No extensionDevelopmentPath: the only LoopX in this workbench is the installed one.
    await page.goto(workbenchUrl(server, workspace, []));
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    try {
      await page.locator('.activitybar').getByRole('tab', { name: /LoopX/ }).click();
      const sidebar = page.locator('.part.sidebar');
      await sidebar
        .locator('.monaco-list-row', { hasText: 'Tidy the notes folder' })
        .first()
        .waitFor({ timeout: 60_000 });

      // The README's pictures come from what users install: the gate that needs a person, with its inline
      // Approve and Reject buttons, in a side bar widened to show the descriptions; and the status-bar quota.
      const bar = await sidebar.boundingBox();
      if (bar) {
        await page.mouse.move(bar.x + bar.width + 1, bar.y + bar.height / 2);
        await page.mouse.down();
        await page.mouse.move(bar.x + 480, bar.y + bar.height / 2, { steps: 8 });
        await page.mouse.up();
      }
      await sidebar.locator('.monaco-list-row', { hasText: 'Tidy the notes folder' }).first().click();
      const gate = sidebar.locator('.monaco-list-row', { hasText: 'Approve publishing the knowledge base' }).first();
      await gate.waitFor({ timeout: 30_000 });
      await page.mouse.move(0, 0);
      await gate.hover();
      await gate.locator('.actions .action-label[aria-label^="Approve Gate"]').waitFor({ timeout: 15_000 });
      await sidebar.screenshot({ path: join(RESULTS, 'installed-sidebar.png') });
      await page.locator('.statusbar-item', { hasText: 'tidy-notes' }).first().waitFor({ timeout: 30_000 });
      await page.locator('.part.statusbar').screenshot({ path: join(RESULTS, 'installed-statusbar.png') });

      // The sidebar's webview view (collapsed by default).
      const header = sidebar.locator('.pane-header', { hasText: 'Projection Warnings' }).first();
      await header.waitFor({ timeout: 30_000 });
      if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
      const view = await webviewShowing(page, 'h1', 'Projection warnings');
      await view.locator('main#root article.card', { hasText: recommendation }).first().waitFor({ timeout: 30_000 });
      await page.screenshot({ path: join(RESULTS, 'installed-warnings-view.png') });

      // The panel, from the command palette: a new webview, besides the view's (folded again, kept or not).
      await header.click();
      await runCommand(page, 'LoopX: Show Projection Warnings');
      await page
        .locator('.editor-group-container .tab', { hasText: /Projection Warnings/i })
        .first()
        .waitFor();
      const panel = await webviewShowing(page, 'h1', 'Projection warnings', new Set([view]));
      await panel.locator('main#root article.card', { hasText: recommendation }).first().waitFor({ timeout: 30_000 });
      await page.screenshot({ path: join(RESULTS, 'installed-warnings-panel.png') });

      // The goal detail: its chart needs goalDetail.js and uPlot.min.css from the installed folder.
      await runCommand(page, 'LoopX: Show Goal Detail');
      const detail = await webviewShowing(page, 'h2', 'Spend over the quota window');
      await detail.locator('main#root .uplot').first().waitFor({ timeout: 30_000 });
      const stylesheets = await detail
        .locator('link[rel="stylesheet"]')
        .evaluateAll((links) => links.map((link) => (link as HTMLLinkElement).sheet !== null));
      assert.deepEqual(stylesheets, [true, true], 'both stylesheets (uPlot.min.css, webview.css) loaded');
      await page.screenshot({ path: join(RESULTS, 'installed-goal-detail.png') });
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, 'failure-installed-webviews.png') });
      throw error;
    }
  });
});
