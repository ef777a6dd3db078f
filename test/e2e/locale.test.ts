/**
 * The display language end to end: code-server started with `--locale zh-cn`. It takes a locale only when a language
 * pack provides it, and the real one cannot be downloaded here, so startCodeServer registers an empty pack (the
 * workbench's own texts stay English). `vscode.env.language` is then `zh-cn`, and VS Code loads LoopX's
 * package.nls.zh-cn.json and l10n/bundle.l10n.zh-cn.json: the Goals view, its tree items, a palette command and the
 * warnings webview show Chinese.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { materializeDemoWorkspace, REPO_ROOT } from '../support/demoWorkspace';
import { launchChromium, remoteUri, startCodeServer, workbenchUrl, type CodeServer } from '../support/vscodeHost';

const RESULTS = join(REPO_ROOT, 'test-results');

describe('LoopX in Simplified Chinese (code-server --locale zh-cn, Chromium)', function () {
  this.timeout(180_000);
  let scratch: string;
  let server: CodeServer | undefined;
  let browser: Browser;

  before(async () => {
    mkdirSync(RESULTS, { recursive: true });
    scratch = mkdtempSync(join(tmpdir(), 'loopx-e2e-zh-'));
    browser = await launchChromium();
  });

  after(async () => {
    await server?.stop();
    await browser?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('shows the views, tree items, a palette command and the warnings webview in Chinese', async () => {
    const workspace = materializeDemoWorkspace(join(scratch, 'workspace'));
    // A run whose recommendation differs from the durable Next Action: the warnings webview has a card.
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
        'Merge duplicate notes',
      ],
      { cwd: workspace, encoding: 'utf8' },
    );
    assert.equal(cli.status, 0, `${cli.stdout}${cli.stderr}`);
    server = await startCodeServer({ workspace, locale: 'zh-cn' });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      await page.goto(workbenchUrl(server, workspace, [['extensionDevelopmentPath', remoteUri(server, REPO_ROOT)]]));
      await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
      await page.locator('.activitybar').getByRole('tab', { name: /LoopX/ }).click();
      const sidebar = page.locator('.part.sidebar');
      // The view's name comes from package.nls.zh-cn.json ("Goals" → 目标).
      await sidebar.locator('.pane-header', { hasText: '目标' }).first().waitFor({ timeout: 30_000 });
      const goalRow = sidebar.locator('.monaco-list-row', { hasText: 'Tidy the notes folder' });
      await goalRow.first().waitFor({ timeout: 30_000 });
      await goalRow.first().click();
      // Tree items from vscode.l10n.t with l10n/bundle.l10n.zh-cn.json ("Needs you", "Agent Todos").
      await sidebar.locator('.monaco-list-row', { hasText: '需要你处理' }).first().waitFor({ timeout: 15_000 });
      await sidebar.locator('.monaco-list-row', { hasText: '智能体待办' }).first().waitFor();
      assert.equal(await sidebar.locator('.monaco-list-row', { hasText: 'Agent Todos' }).count(), 0);
      await page.locator('.part.sidebar').screenshot({ path: join(RESULTS, 'sidebar-zh-cn.png') });

      // The palette finds the command by its translated title.
      await page.keyboard.press('F1');
      await page.keyboard.type('LoopX: 显示投影警告');
      await page
        .locator('.quick-input-list .monaco-list-row', { hasText: '显示投影警告' })
        .first()
        .waitFor({ timeout: 15_000 });
      await page.keyboard.press('Enter');
      const frame = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
      // Card texts built by the host (@vscode/l10n) and the script's own texts (the bundle sent with the render).
      const card = frame.locator('article.card', { hasText: '最近一次运行建议了别的事' }).first();
      await card.waitFor({ timeout: 30_000 });
      await frame.locator('h1', { hasText: '投影警告' }).waitFor();
      await card.locator('.compared .text h3', { hasText: '持久化的下一步行动' }).first().waitFor();
      await card.locator('button', { hasText: '写为下一步行动' }).waitFor();
      assert.equal(await frame.locator('html[lang="zh-cn"]').count(), 1, 'the webview document says its language');
      await page.screenshot({ path: join(RESULTS, 'warnings-webview-zh-cn.png') });
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, 'failure-zh-cn.png') });
      throw error;
    } finally {
      await page.close();
    }
  });
});
