/**
 * UI end-to-end of the human's side of the loop (docs/review.md): Playwright drives the real workbench (code-server
 * in Debian's Chromium) with the extension under development on a copy of the demo workspace. The demo agent, run
 * by the CLI in another process, stops on a todo it cannot do and opens a gate; the notification appears; Approve
 * on it (with a typed decision note) releases the todo. The Gate Inbox view orders its gates by blocked time.
 * Screenshots go to test-results/ (gate-inbox-*.png; gate-inbox-sidebar.png is docs/images/gate-inbox.png,
 * gate-inbox-notification.png docs/images/gate-notification.png).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { materializeDemoWorkspace, REPO_ROOT } from '../support/demoWorkspace';
import { launchChromium, remoteUri, startCodeServer, workbenchUrl, type CodeServer } from '../support/vscodeHost';
import { waitFor } from '../support/waitFor';

/** The workbench in headless Chromium on a shared machine: slow to render, so waits are long. */
const E2E_WAIT_MS = 120_000;

const RESULTS = join(REPO_ROOT, 'test-results');
const GOAL = 'Tidy the notes folder';
const TODO_TEXT = 'Translate the notes to French';

/** Our CLI in the workspace, in its own process (as an agent's host or a script runs it). */
function cli(workspace: string, ...args: string[]): Record<string, unknown> {
  const run = spawnSync(process.execPath, [join(REPO_ROOT, 'out', 'cli.js'), ...args, '--format', 'json'], {
    cwd: workspace,
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, `${args.join(' ')}: ${run.stdout}\n${run.stderr}`);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

/** The same, without blocking this process: the page is watched while the CLI runs. */
function cliAsync(workspace: string, ...args: string[]): Promise<number | null> {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'out', 'cli.js'), ...args, '--format', 'json'], {
    cwd: workspace,
    stdio: 'ignore',
  });
  return new Promise((resolve) => child.on('close', resolve));
}

interface ListedTodo {
  todo_id: string;
  role: string;
  title: string;
  status: string;
  blocked_by: unknown[];
}

function todoNamed(workspace: string, text: string): ListedTodo | undefined {
  const listed = cli(workspace, 'todo', 'list', '--goal-id', 'tidy-notes');
  return (listed['todos'] as ListedTodo[]).find((t) => t.role === 'agent' && t.title.includes(text));
}

/** The labels of the Gate Inbox view's rows, top to bottom (the view starts collapsed: expanded first). */
async function inboxLabels(page: Page): Promise<string[]> {
  const header = page.locator('.part.sidebar .pane-header', { hasText: 'Gate Inbox' });
  if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
  return page
    .locator('.part.sidebar .pane')
    .filter({ has: page.locator('.pane-header', { hasText: 'Gate Inbox' }) })
    .locator('.monaco-list-row .label-name')
    .allInnerTexts();
}

describe('Notifications and the Gate Inbox in the VS Code workbench (Chromium)', function () {
  this.timeout(400_000);
  let scratch: string;
  let server: CodeServer | undefined;
  let browser: Browser;
  let page: Page;
  let workspace: string;

  before(async () => {
    mkdirSync(RESULTS, { recursive: true });
    scratch = mkdtempSync(join(tmpdir(), 'loopx-e2e-inbox-'));
    workspace = materializeDemoWorkspace(join(scratch, 'workspace'));
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
    // The demo's own gate is in the inbox once the extension has read the goal: the baseline is taken.
    await waitFor(
      async () => ((await inboxLabels(page)).length > 0 ? true : undefined),
      'the inbox filled',
      E2E_WAIT_MS,
      250,
    );
  });

  after(async () => {
    await page?.screenshot({ path: join(RESULTS, 'gate-inbox-final.png') }).catch(() => undefined);
    // The extension's log, kept beside the screenshots (what the notifier saw and showed).
    const logs = spawnSync('find', [join(scratch, 'host'), '-name', 'LoopX.log'], { encoding: 'utf8' }).stdout.trim();
    for (const file of logs.split('\n').filter(Boolean)) copyFileSync(file, join(RESULTS, 'gate-inbox-LoopX.log'));
    await browser?.close();
    await server?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('the demo agent (run by the CLI) opens a gate → a notification appears → Approve from it → the todo is runnable', async () => {
    try {
      cli(
        workspace,
        'todo',
        'add',
        '--goal-id',
        'tidy-notes',
        '--text',
        TODO_TEXT,
        '--priority',
        'P0',
        '--claimed-by',
        'demo',
      );
      // The turn runs in another process while the page is watched: an information toast hides itself after a while.
      const turn = cliAsync(
        workspace,
        'turn',
        'run-once',
        '--goal-id',
        'tidy-notes',
        '--agent-id',
        'demo',
        '--execute',
      );
      // The notification as a toast, or (a toast may hide itself) in the notification center, opened if needed.
      const toast = await waitFor(
        async () => {
          const item = page
            .locator('.notifications-toasts .notification-list-item, .notifications-center .notification-list-item', {
              hasText: 'needs your decision',
            })
            .first();
          if ((await item.count()) > 0 && (await item.isVisible())) return item;
          if ((await page.locator('.notifications-center.visible').count()) === 0) {
            await page.keyboard.press('F1');
            const palette = page.locator('.quick-input-widget .quick-input-box input');
            await palette.fill('>Notifications: Show Notifications');
            await page
              .locator('.quick-input-widget .monaco-list-row', { hasText: 'Show Notifications' })
              .first()
              .waitFor();
            await palette.press('Enter');
          }
          return undefined;
        },
        'the gate_opened notification',
        E2E_WAIT_MS,
        250,
      );
      await toast.hover();
      assert.equal(await turn, 0, 'the demo turn ran');
      const held = todoNamed(workspace, TODO_TEXT);
      assert.equal(held?.blocked_by.length, 1, 'the demo agent parked its todo behind a new gate');
      assert.match(await toast.innerText(), /cannot do "Translate the notes to French"/);
      await page.screenshot({ path: join(RESULTS, 'gate-inbox-notification.png') });
      await toast.hover();
      await toast.getByRole('button', { name: 'Approve', exact: true }).click();
      const input = page.locator('.quick-input-widget .quick-input-box input');
      await input.waitFor({ state: 'visible' });
      await input.fill('Fine: translate them');
      await input.press('Enter');

      const released = await waitFor(
        () => {
          const todo = todoNamed(workspace, TODO_TEXT);
          return todo !== undefined && todo.blocked_by.length === 0 ? todo : undefined;
        },
        'the todo released by the approval',
        E2E_WAIT_MS,
        250,
      );
      assert.equal(released.status, 'open', 'runnable: open and held by no gate');
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, 'failure-gate-inbox-approve.png') });
      throw error;
    }
  });

  it('the Gate Inbox orders its gates by blocked time, longest first', async () => {
    try {
      const statePath = join(workspace, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md');
      // Two gates a teammate wrote, with the times they were written; the CLI opens a third now.
      writeFileSync(
        statePath,
        readFileSync(statePath, 'utf8').replace(
          '\n## Agent Todo\n',
          [
            '- [ ] Approve the newer budget.',
            '  <!-- loopx:todo todo_id=todo_gate_newer status=open task_class=user_gate global_gate=true updated_at=2026-11-20T00%3A00%3A00%2B00%3A00 -->',
            '- [ ] Approve the older contract.',
            '  <!-- loopx:todo todo_id=todo_gate_older status=open task_class=user_gate unblocks_todo_id=todo_index updated_at=2026-11-01T00%3A00%3A00%2B00%3A00 -->',
            '',
            '## Agent Todo',
            '',
          ].join('\n'),
        ),
      );
      cli(
        workspace,
        'todo',
        'add',
        '--goal-id',
        'tidy-notes',
        '--role',
        'user',
        '--text',
        'Approve the fresh release.',
        '--global-gate',
        '--due-in',
        '2d',
      );
      const labels = await waitFor(
        async () => {
          const rows = await inboxLabels(page);
          return rows.length === 4 ? rows : undefined;
        },
        'four gates in the Gate Inbox view',
        E2E_WAIT_MS,
        250,
      );
      assert.deepEqual(labels, [
        'Approve the older contract.',
        'Approve the newer budget.',
        'Approve the fresh release.',
        'Approve publishing the knowledge base to the team wiki.',
      ]);
      // The badges: the workbench sums its views' badges on the LoopX icon, the Gate Inbox's 4 and the Goals view's 4.
      await waitFor(
        async () => {
          const badges = await page
            .locator('.activitybar .action-item', { has: page.locator('[aria-label^="LoopX"]') })
            .locator('.badge')
            .allInnerTexts();
          return badges.some((text) => text.trim() === '8') ? true : undefined;
        },
        'the LoopX badge counting 4 + 4 open gates',
        E2E_WAIT_MS,
        250,
      );
      await page.locator('.part.sidebar').screenshot({ path: join(RESULTS, 'gate-inbox-sidebar.png') });
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, 'failure-gate-inbox-order.png') });
      throw error;
    }
  });
});
