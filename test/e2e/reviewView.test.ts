/**
 * UI end-to-end of the review queue (docs/review.md#the-review-view): Playwright drives the real workbench
 * (code-server in Debian's Chromium) with the extension under development on a copy of the demo workspace made a
 * git repository. Turns run outside the window, by the CLI in other processes (two demo-agent turns, and a
 * heartbeat turn of codex-main driven step by step as an agent drives it), appear in the Review view, newest
 * first; a changed file of a turn opens VS Code's diff editor, base on
 * the left, head on the right. Screenshots go to test-results/ (review-view.png is docs/images/review-view.png).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { materializeDemoWorkspace, REPO_ROOT } from '../support/demoWorkspace';
import { launchChromium, remoteUri, startCodeServer, workbenchUrl, type CodeServer } from '../support/vscodeHost';

const RESULTS = join(REPO_ROOT, 'test-results');
const GOAL = 'Tidy the notes folder';

/** Our CLI in the workspace, in its own process (as an agent's host or a script runs it). */
function cli(workspace: string, ...args: string[]): Record<string, unknown> {
  const run = spawnSync(process.execPath, [join(REPO_ROOT, 'out', 'cli.js'), ...args, '--format', 'json'], {
    cwd: workspace,
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, `${args.join(' ')}: ${run.stdout}\n${run.stderr}`);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, {
    cwd,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Person',
      GIT_AUTHOR_EMAIL: 'person@example.com',
      GIT_COMMITTER_NAME: 'Person',
      GIT_COMMITTER_EMAIL: 'person@example.com',
    },
  });
}

/** Polls until `probe` answers (the ceiling only ends a hung test; nothing here is timed). */
async function eventually<T>(probe: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() - started > 120_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The Review view's pane (expanded first: it starts collapsed). */
async function reviewPane(page: Page) {
  const header = page.locator('.part.sidebar .pane-header', { hasText: 'Review' });
  if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
  return page.locator('.part.sidebar .pane').filter({ has: page.locator('.pane-header', { hasText: 'Review' }) });
}

describe('The Review view in the VS Code workbench (Chromium)', function () {
  this.timeout(400_000);
  let scratch: string;
  let server: CodeServer | undefined;
  let browser: Browser;
  let page: Page;
  let workspace: string;

  before(async () => {
    mkdirSync(RESULTS, { recursive: true });
    scratch = mkdtempSync(join(tmpdir(), 'loopx-e2e-review-'));
    workspace = materializeDemoWorkspace(join(scratch, 'workspace'));
    writeFileSync(join(workspace, '.gitignore'), '.loopx/runtime/\n');
    git(workspace, 'init', '-q', '-b', 'main');
    git(workspace, 'add', '-A');
    git(workspace, 'commit', '-qm', 'the demo as committed');
    browser = await launchChromium();
    server = await startCodeServer({ workspace, rootDir: join(scratch, 'host') });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(workbenchUrl(server, workspace, [['extensionDevelopmentPath', remoteUri(server, REPO_ROOT)]]));
    await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    await page.locator('.activitybar').getByRole('tab', { name: /LoopX/ }).click();
    await page
      .locator('.part.sidebar .monaco-list-row .label-name', { hasText: GOAL })
      .first()
      .waitFor({ timeout: 90_000 });
  });

  after(async () => {
    await page?.screenshot({ path: join(RESULTS, 'review-view-final.png') }).catch(() => undefined);
    const logs = spawnSync('find', [join(scratch, 'host'), '-name', 'LoopX.log'], { encoding: 'utf8' }).stdout.trim();
    for (const file of logs.split('\n').filter(Boolean)) copyFileSync(file, join(RESULTS, 'review-view-LoopX.log'));
    await browser?.close();
    await server?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('turns run by the CLI in other processes appear newest first; a file of a turn opens its diff', async () => {
    try {
      // Two turns of the demo agent through the turn driver, then a heartbeat turn of codex-main: its receipt
      // (should-run with a turn id) takes the base, the agent edits, its delivery writeback takes the head.
      for (let i = 0; i < 2; i++)
        assert.equal(
          cli(workspace, 'turn', 'run-once', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--execute')['status'],
          'committed',
        );
      const turn = ['--goal-id', 'tidy-notes', '--agent-id', 'codex-main', '--turn-instance-id', 'heartbeat-0900'];
      assert.equal(cli(workspace, 'quota', 'should-run', ...turn)['should_run'], true);
      writeFileSync(
        join(workspace, 'notes', 'links-report.md'),
        '# Links report\n\nEvery relative link between the notes resolves.\n',
      );
      cli(
        workspace,
        'refresh-state',
        ...turn,
        '--classification',
        'validated_progress',
        '--delivery-outcome',
        'outcome_progress',
      );
      cli(workspace, 'quota', 'spend-slot', ...turn, '--source', 'heartbeat', '--execute');

      const pane = await reviewPane(page);
      const labels = await eventually(async () => {
        const rows = await pane.locator('.monaco-list-row .label-name').allInnerTexts();
        return rows.length === 3 ? rows : undefined;
      }, 'three turns in the Review view');
      assert.deepEqual(labels, ['codex-main · todo_links', 'demo · todo_index', 'demo · todo_related']);
      // Expand the demo's first turn and open a note it changed: the diff editor, base → head.
      await pane.locator('.monaco-list-row', { hasText: 'demo · todo_related' }).click();
      const file = pane.locator('.monaco-list-row', { hasText: 'notes/bread.md' }).first();
      await file.waitFor();
      await file.click();
      const diff = page.locator('.editor-group-container .monaco-diff-editor').first();
      await diff.waitFor({ timeout: 60_000 });
      assert.match(await page.locator('.tabs-container .tab.active').innerText(), /bread\.md/);
      await diff.locator('.modified .view-line', { hasText: '## Related' }).first().waitFor();
      assert.equal(
        await diff.locator('.original .view-line', { hasText: '## Related' }).count(),
        0,
        'the base is the note before the turn',
      );
      // Wider side bar for the picture: the rows' descriptions show.
      const sidebar = await page.locator('.part.sidebar').boundingBox();
      if (sidebar !== null) {
        const edge = { x: sidebar.x + sidebar.width + 1, y: sidebar.y + sidebar.height / 2 };
        await page.mouse.move(edge.x, edge.y);
        await page.mouse.down();
        await page.mouse.move(edge.x + 180, edge.y, { steps: 8 });
        await page.mouse.up();
      }
      await page.locator('.part.sidebar .pane-header', { hasText: 'Agents' }).click();
      await page.mouse.move(900, 600);
      await page.screenshot({ path: join(RESULTS, 'review-view.png') });
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, 'failure-review-view.png') });
      throw error;
    }
  });
});
