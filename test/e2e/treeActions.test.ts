/**
 * UI end-to-end, acting from the Goals tree: Playwright clicks the real workbench (code-server in
 * Debian's Chromium) with the extension under development on a copy of the demo workspace. It
 * approves the publish gate with its inline button (the decision note typed into the input box)
 * and runs one demo turn from the goal's context menu, and checks both in the tree and on disk.
 * Screenshots go to test-results/ (tree-*.png; tree-sidebar-gate.png is docs/images/sidebar.png).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { STATUS_NEUTRAL_CLASSIFICATIONS } from '../../src/core/runtime/runIndex';
import { materializeDemoWorkspace, REPO_ROOT } from '../support/demoWorkspace';
import { launchChromium, remoteUri, startCodeServer, workbenchUrl, type CodeServer } from '../support/vscodeHost';

const RESULTS = join(REPO_ROOT, 'test-results');
const GOAL = 'Tidy the notes folder';
const GATE = 'Approve publishing the knowledge base to the team wiki.';
const PUBLISH = /^Publish the knowledge base to the team wiki\./;

/** A tree row of the LoopX sidebar whose label starts with `label`. */
function row(page: Page, label: string | RegExp): Locator {
  const text = typeof label === 'string' ? new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) : label;
  return page
    .locator('.part.sidebar .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: text }) })
    .first();
}

/**
 * Waits until the row is rendered. The list renders only the rows in view, and the workbench may give the
 * Goals view less height than usual (seen in CI: VS Code showed the Restricted Mode view of a trusted window
 * at start-up, taking part of the side bar): then the other LoopX views are collapsed to make room.
 */
async function reveal(page: Page, label: string | RegExp): Promise<Locator> {
  const target = row(page, label);
  if ((await target.count()) === 0) {
    for (const title of ['Agents', 'Restricted Mode']) {
      const header = page.locator('.part.sidebar .pane-header[aria-expanded="true"]', { hasText: title });
      // The Restricted Mode view of a trusted window goes away by itself moments later: a header that
      // leaves while it is clicked is not an error (CI once waited 30 s on one detached mid-click).
      if ((await header.count()) > 0)
        await header
          .first()
          .click({ timeout: 3_000 })
          .catch(() => undefined);
    }
  }
  await target.waitFor({ timeout: 30_000 });
  return target;
}

async function descriptionOf(target: Locator): Promise<string> {
  const description = target.locator('.label-description');
  return (await description.count()) > 0 ? await description.innerText() : '';
}

/** The todo's metadata comment in the state file. */
function todoMeta(workspace: string, todoId: string): string {
  const state = readFileSync(join(workspace, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md'), 'utf8');
  const lines = state.split('\n');
  const index = lines.findIndex((line) => line.includes(`todo_id=${todoId} `));
  assert.ok(index > 0, `${todoId} in the state file`);
  return `${lines[index - 1]}\n${lines[index]}`;
}

/** `loopx todo list` in the workspace: the todo's gate blockers, as an agent sees them. */
function blockersOf(workspace: string, todoId: string): unknown[] | undefined {
  const listed = spawnSync(
    process.execPath,
    [join(REPO_ROOT, 'out', 'cli.js'), 'todo', 'list', '--goal-id', 'tidy-notes', '--format', 'json'],
    { cwd: workspace, encoding: 'utf8' },
  );
  assert.equal(listed.status, 0, listed.stderr);
  const todos = (JSON.parse(listed.stdout) as { todos: { todo_id: string; blocked_by: unknown[] }[] }).todos;
  return todos.find((t) => t.todo_id === todoId)?.blocked_by;
}

function runIndexLines(workspace: string): string[] {
  const index = join(workspace, '.loopx', 'runtime', 'goals', 'tidy-notes', 'runs', 'index.jsonl');
  return readFileSync(index, 'utf8').split('\n').filter(Boolean);
}

/** Hovers a row after dismissing any hover card another row left open (it would take the pointer). */
async function hoverClear(page: Page, target: Locator): Promise<void> {
  await page.keyboard.press('Escape');
  await page.mouse.move(0, 0);
  await target.hover();
}

describe('Acting from the Goals tree in the VS Code workbench (Chromium)', function () {
  this.timeout(300_000);
  let scratch: string;
  let server: CodeServer | undefined;
  let browser: Browser;
  let page: Page;
  let workspace: string;

  before(async () => {
    mkdirSync(RESULTS, { recursive: true });
    scratch = mkdtempSync(join(tmpdir(), 'loopx-e2e-tree-'));
    workspace = materializeDemoWorkspace(join(scratch, 'workspace'));
    browser = await launchChromium();
    server = await startCodeServer({ workspace });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(workbenchUrl(server, workspace, [['extensionDevelopmentPath', remoteUri(server, REPO_ROOT)]]));
    await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    await page.locator('.activitybar').getByRole('tab', { name: /LoopX/ }).click();
    // A wider side bar, so the screenshots show the descriptions: drag the sash at its right edge.
    const bar = await page.locator('.part.sidebar').boundingBox();
    if (bar) {
      const y = bar.y + bar.height / 2;
      await page.mouse.move(bar.x + bar.width + 1, y);
      await page.mouse.down();
      await page.mouse.move(bar.x + 480, y, { steps: 8 });
      await page.mouse.up();
    }
    await row(page, GOAL).waitFor({ timeout: 60_000 });
    await row(page, GOAL).click();
    await row(page, GATE).waitFor({ timeout: 30_000 });
    await reveal(page, PUBLISH);
  });

  after(async () => {
    await page?.screenshot({ path: join(RESULTS, 'tree-final.png') }).catch(() => undefined);
    await browser?.close();
    await server?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('approves the gate with its inline button and a typed decision note: the held todo becomes runnable in the tree and on disk', async () => {
    try {
      assert.match(
        await descriptionOf(await reveal(page, PUBLISH)),
        /held by gate/,
        'the publish todo waits for the gate',
      );
      assert.equal(blockersOf(workspace, 'todo_publish')?.length, 1);
      const gateRow = row(page, GATE);
      await hoverClear(page, gateRow);
      // The README's sidebar picture: the gate that needs you, with its inline Approve and Reject buttons.
      await page.locator('.part.sidebar').screenshot({ path: join(RESULTS, 'tree-sidebar-gate.png') });
      // Inline actions show while the pointer is over the row: hover it again right before the click.
      await hoverClear(page, gateRow);
      await gateRow.locator('.actions .action-label[aria-label^="Approve Gate"]').click();
      const input = page.locator('.quick-input-widget .quick-input-box input');
      await input.waitFor({ state: 'visible' });
      await input.fill('Fine to publish: the index reads well');
      await input.press('Enter');

      // The tree: the gate leaves "Needs you", and the publish todo is no longer held.
      await gateRow.waitFor({ state: 'detached', timeout: 30_000 });
      await page.waitForFunction(
        () =>
          Array.from(document.querySelectorAll('.part.sidebar .monaco-list-row')).some(
            (r) =>
              /^Publish the knowledge base/.test(r.querySelector('.label-name')?.textContent ?? '') &&
              !/held by gate/.test(r.querySelector('.label-description')?.textContent ?? ''),
          ),
        undefined,
        { timeout: 30_000 },
      );
      assert.equal(await row(page, 'Needs you').count(), 0, 'no gate needs a person any more');
      // The state file: the gate is closed as approved with the note, and nothing holds the todo.
      const gate = todoMeta(workspace, 'todo_gate_publish');
      assert.match(gate, /^- \[x\]/);
      assert.match(gate, /decision_outcome=approve/);
      assert.match(gate, /Fine%20to%20publish/);
      assert.deepEqual(blockersOf(workspace, 'todo_publish'), []);
      await page.locator('.part.sidebar').screenshot({ path: join(RESULTS, 'tree-after-approve.png') });
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, 'failure-tree-approve.png') });
      throw error;
    }
  });

  it('runs one demo turn from the goal context menu: a new row appears under "Recent runs"', async () => {
    try {
      const runsRow = row(page, 'Recent runs');
      await runsRow.waitFor();
      const countBefore = Number(await descriptionOf(runsRow));
      const indexBefore = runIndexLines(workspace).length;

      await row(page, GOAL).click({ button: 'right' });
      const menuItem = page.locator('.context-view .monaco-menu .action-item', { hasText: 'Run One Turn' }).first();
      await menuItem.hover();
      await page.keyboard.press('Enter');
      // Two agents are registered: pick the demo agent in the quick pick.
      const input = page.locator('.quick-input-widget .quick-input-box input');
      await input.waitFor({ state: 'visible' });
      await input.fill('demo');
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: /^demo/ }).first().waitFor();
      await input.press('Enter');
      // The modal confirmation (shown in the UI test, where dialogs are not skipped).
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      await page.screenshot({ path: join(RESULTS, 'tree-run-turn-confirm.png') });
      await dialog.getByRole('button', { name: 'Run', exact: true }).click();

      await page.waitForFunction(
        (before) =>
          Array.from(document.querySelectorAll('.part.sidebar .monaco-list-row')).some(
            (r) =>
              r.querySelector('.label-name')?.textContent === 'Recent runs' &&
              Number(r.querySelector('.label-description')?.textContent ?? '0') > before,
          ),
        countBefore,
        { timeout: 120_000 },
      );
      assert.ok(runIndexLines(workspace).length > indexBefore, 'the run index on disk has the new run');
      // The newest row "Recent runs" shows: the turn's spend row comes after it in the index, and may
      // carry the next second, but settlement rows are not listed there.
      const rows = runIndexLines(workspace).map(
        (line) => JSON.parse(line) as { agent_id?: string; generated_at?: string; classification?: string },
      );
      const last = rows.filter((row) => !STATUS_NEUTRAL_CLASSIFICATIONS.has(row.classification ?? '')).at(-1) ?? {};
      assert.equal(last.agent_id, 'demo');
      assert.ok(last.generated_at);
      // The newest run is the first row under "Recent runs", with its agent and time.
      const firstRun = page.locator('.part.sidebar .monaco-list-row', { hasText: last.generated_at }).first();
      await firstRun.waitFor({ timeout: 30_000 });
      assert.match(await descriptionOf(firstRun), /@demo/);
      await page.locator('.part.sidebar').screenshot({ path: join(RESULTS, 'tree-sidebar.png') });
      await page.screenshot({ path: join(RESULTS, 'tree-workbench.png') });
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, 'failure-tree-run.png') });
      throw error;
    }
  });
  it('archiving the runtime of a registered goal asks for a second, explicit confirmation; Cancel moves nothing', async () => {
    const runtime = join(workspace, '.loopx', 'runtime', 'goals', 'tidy-notes');
    try {
      await row(page, GOAL).click({ button: 'right' });
      await page.locator('.context-view .monaco-menu .action-item', { hasText: 'Archive Runtime' }).first().hover();
      await page.keyboard.press('Enter');
      // The operation refuses a registered goal: the first dialog says so and offers "Archive Anyway…",
      // never the archive preview itself.
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      assert.match(await dialog.innerText(), /is still registered, so LoopX refuses to archive its runtime/);
      assert.equal(await dialog.getByRole('button', { name: 'Archive Anyway…' }).count(), 1);
      await page.screenshot({ path: join(RESULTS, 'tree-archive-override.png') });
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      assert.ok(existsSync(join(runtime, 'runs', 'index.jsonl')), 'the runtime stays where it was');
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, 'failure-tree-archive.png') });
      throw error;
    }
  });
});
