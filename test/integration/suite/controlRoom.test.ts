import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import type { TreeSnapshotNode } from '../../../src/views/treeSnapshot';
import { backUpWorkspace } from './workspaceBackup';
import { waitFor } from '../../support/waitFor';
import { loopxJson } from '../../support/extensionHost';

interface Card {
  key: string;
  goal_id: string;
  kind: string;
  compared: { field: string; value: string | null }[];
  actions: { kind: string }[];
}
interface WarningsSnapshot {
  cards: Card[];
  html: string | null;
  posted: { type: string; cards?: Card[] }[];
  visible: boolean;
}
interface IndicatorSnapshot {
  visible: boolean;
  goalId: string | null;
  text: string;
  kind: string | null;
  tooltip: string | null;
}
interface Outcome {
  accepted: boolean;
  ok?: boolean;
  message: string;
}

const HOSTILE = '<script>alert(1)</script> Merge <b>duplicate</b> notes & tags';

const warnings = async () => (await vscode.commands.executeCommand('_loopx.warnings.snapshot')) as WarningsSnapshot;
const indicator = async () =>
  (await vscode.commands.executeCommand('_loopx.quotaIndicator.snapshot')) as IndicatorSnapshot;

describe('The editor as the control room: warnings webview, status-bar quota, goal detail (real VS Code host)', function () {
  this.timeout(60_000);
  let folder: string;
  let restore: () => void = () => undefined;
  const statePath = () => join(folder, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md');
  const registryPath = () => join(folder, '.loopx', 'registry.json');

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
    assert.ok(folder);
    restore = backUpWorkspace(folder);
  });

  after(async () => {
    // Later suites run the demo goal: give them its state file, registry and run index back.
    restore();
    await vscode.commands.executeCommand('loopx.refresh');
  });

  it("shows the demo goal's quota in the status bar, with a Markdown tooltip", async () => {
    const snap = await waitFor(async () => {
      const s = await indicator();
      return s.visible ? s : undefined;
    }, 'the status-bar item');
    assert.equal(snap.goalId, 'tidy-notes');
    assert.match(snap.text, /^\$\([a-z~-]+\) tidy-notes \d+\/\d+ · /);
    assert.match(snap.tooltip ?? '', /LoopX quota/);
    assert.match((snap.tooltip ?? '').replace(/&nbsp;/g, ' '), /Slots: \d+ spent/);
  });

  it('shows a mismatch written by another process side by side, refuses malformed messages, and resolves it with its button', async () => {
    await vscode.commands.executeCommand('loopx.showProjectionWarnings');
    const opened = await warnings();
    assert.equal(opened.visible, true);
    assert.ok(opened.html);
    const html = opened.html.replace(/&#39;/g, "'");
    const csp = /Content-Security-Policy" content="([^"]*)"/.exec(html)?.[1] ?? '';
    assert.match(csp, /^default-src 'none'; /);
    assert.match(csp, /script-src 'nonce-[A-Za-z0-9_-]+'$/, 'scripts only with the nonce of this render');
    assert.doesNotMatch(html, /unsafe-inline|unsafe-eval|<style|style=/);
    assert.equal(html.match(/<script /g)?.length, 1, 'one script, the bundle');
    assert.doesNotMatch(opened.html, /Related/, 'no goal text in the markup: it travels by message');

    // Another process records a run whose recommendation differs from the durable Next Action.
    loopxJson(
      [
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
        HOSTILE,
      ],
      folder,
    );
    const card = await waitFor(async () => {
      const snap = await warnings();
      return snap.cards.find((c) => c.goal_id === 'tidy-notes' && c.kind === 'next_action_projection_mismatch');
    }, 'the mismatch card');
    assert.deepEqual(
      card.compared.map((c) => [c.field, c.value]),
      [
        ['active_state_next_action', 'Add a "Related" section linking notes that share a tag.'],
        ['latest_run_recommended_action', HOSTILE],
      ],
    );
    const rendered = (await warnings()).posted.filter((m) => m.type === 'render').at(-1);
    assert.ok(
      rendered?.cards?.some((c) => c.key === card.key),
      'the webview was sent the new card',
    );

    // Malformed messages are refused and change nothing.
    for (const bad of [
      { type: 'act', key: card.key, action: 'set_next_action', text: 'smuggled text' },
      { type: 'act', key: card.key, action: 'delete_everything' },
      { type: 'hello' },
      '<script>',
    ]) {
      const outcome = (await vscode.commands.executeCommand('_loopx.warnings.receive', bad)) as Outcome;
      assert.equal(outcome.accepted, false, JSON.stringify(bad));
    }
    assert.doesNotMatch(readFileSync(statePath(), 'utf8'), /smuggled/);

    // "Write as Next Action": refresh-state --next-action with the run's text, confirmed.
    const outcome = (await vscode.commands.executeCommand(
      '_loopx.warnings.receive',
      { type: 'act', key: card.key, action: 'set_next_action' },
      { confirmed: true },
    )) as Outcome;
    assert.deepEqual([outcome.accepted, outcome.ok], [true, true], outcome.message);
    const state = readFileSync(statePath(), 'utf8');
    assert.ok(state.includes(HOSTILE), 'the run text is the durable Next Action, verbatim');
    await waitFor(async () => {
      const snap = await warnings();
      return snap.cards.some((c) => c.goal_id === 'tidy-notes' && c.kind === 'next_action_projection_mismatch')
        ? undefined
        : true;
    }, 'the mismatch to go away');
  });

  it("gives the goal's and its runs' tooltips on hover, as Markdown that renders no HTML", async () => {
    // The Next Action is HOSTILE since the test above; the newest run recommended it.
    const plain = (text: string | undefined) => (text ?? '').replace(/&nbsp;/g, ' ').replace(/\\(.)/g, '$1');
    const goal = await waitFor(async () => {
      const tree = (await vscode.commands.executeCommand(
        '_loopx.treeSnapshot',
        'goals',
        3,
        true,
      )) as TreeSnapshotNode[];
      const found = tree.find((n) => plain(n.tooltip).includes('(tidy-notes)'));
      return plain(found?.tooltip).includes(`Next Action: ${HOSTILE}`) ? found : undefined;
    }, "the goal's tooltip with its Next Action");
    assert.equal(goal.tooltipOnHover, true, 'not handed with the item: the host would parse it at every fill');
    assert.equal(goal.tooltipTrusted, false, 'agent-written text must not render as HTML');
    const runs = goal.children.find((n) => n.label === 'Recent runs')?.children ?? [];
    const recommending = runs.find((n) => plain(n.tooltip).includes(`Recommends: ${HOSTILE}`));
    assert.ok(recommending, `a run with its recommendation: ${JSON.stringify(runs.map((r) => r.tooltip))}`);
    assert.deepEqual([recommending.tooltipOnHover, recommending.tooltipTrusted], [true, false]);
  });

  it('pauses and resumes the goal through the stop flag, and the status bar follows', async () => {
    await vscode.commands.executeCommand('loopx.pauseGoal', { goalId: 'tidy-notes', confirmed: true });
    const goalStatus = () =>
      (JSON.parse(readFileSync(registryPath(), 'utf8')) as { goals: { id: string; status: string }[] }).goals.find(
        (g) => g.id === 'tidy-notes',
      )?.status;
    assert.equal(goalStatus(), 'paused');
    await waitFor(async () => ((await indicator()).kind === 'paused' ? true : undefined), 'a paused status bar');
    assert.match((await indicator()).text, /^\$\(debug-pause\) tidy-notes .*paused$/);
    await vscode.commands.executeCommand('loopx.resumeGoal', { goalId: 'tidy-notes', confirmed: true });
    assert.equal(goalStatus(), 'active');
    await waitFor(async () => ((await indicator()).kind !== 'paused' ? true : undefined), 'the pause to lift');
  });

  it('opens the goal detail with its spend history, todo frontier and latest runs', async () => {
    await vscode.commands.executeCommand('loopx.showGoalDetail', { goalId: 'tidy-notes' });
    const render = await waitFor(async () => {
      const snap = (await vscode.commands.executeCommand('_loopx.goalDetail.snapshot')) as {
        posted: {
          type: string;
          detail?: { goal_id: string; spends: unknown[]; runs: unknown[]; quota: { allowed_slots: number } };
        }[];
      };
      return snap.posted.find((m) => m.type === 'render');
    }, 'the goal detail render');
    assert.equal(render.detail?.goal_id, 'tidy-notes');
    assert.ok((render.detail?.runs.length ?? 0) > 0, 'the demo goal has runs');
    assert.ok((render.detail?.quota.allowed_slots ?? 0) > 0);
  });
});
