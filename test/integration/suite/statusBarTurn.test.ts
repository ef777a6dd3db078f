import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { backUpWorkspace } from './workspaceBackup';
import { waitFor } from '../../support/waitFor';

interface IndicatorSnapshot {
  visible: boolean;
  goalId: string | null;
  text: string;
  kind: string | null;
}
interface PickShown {
  title: string;
  labels: string[];
}

const indicator = async (): Promise<IndicatorSnapshot> =>
  (await vscode.commands.executeCommand('_loopx.quotaIndicator.snapshot')) as IndicatorSnapshot;
const takePicks = async (): Promise<PickShown[]> =>
  (await vscode.commands.executeCommand<PickShown[]>('_loopx.takeQuotaOverviewPicks')) ?? [];
/** "spent/allowed" of the status-bar text (`$(icon) goal 3/24 · …`). */
const spentOf = (text: string): number => {
  const match = /\s(\d+)\/\d+/.exec(text);
  assert.ok(match, `no spent/allowed slots in "${text}"`);
  return Number(match[1]);
};

/**
 * Accepts the active item of the quick pick on screen until the next pick shows (the extension
 * records a pick just before VS Code shows it, so the first accept can arrive before the pick).
 */
async function acceptUntilNextPick(what: string): Promise<PickShown> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 400));
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    for (let i = 0; i < 10; i++) {
      const next = (await takePicks())[0];
      if (next) return next;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

/**
 * The status bar through a real demo turn: a loop runs one turn of an agent that waits for the
 * test's release file (then does the demo agent's work, a real process). The status bar shows the
 * goal running while the loop runs; its click offers Stop Loop, which stops the loop; after the
 * turn the slots spent went up.
 */
describe('The status bar through a demo turn, and Stop Loop from its quick pick (real VS Code host)', function () {
  this.timeout(90_000);
  let folder: string;
  let restore: () => void = () => undefined;

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
    assert.ok(folder);
    restore = backUpWorkspace(folder);
  });

  after(async () => {
    restore();
    await vscode.commands.executeCommand('loopx.refresh');
  });

  it('shows running while a loop runs, offers Stop Loop on click (which stops it), and counts the spent slots after a demo loop', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    const barrier = mkdtempSync(join(tmpdir(), 'loopx-statusbar-agent-'));
    const started = join(barrier, 'started');
    const release = join(barrier, 'release');
    const wrapper = join(barrier, 'slow-agent.js');
    writeFileSync(
      wrapper,
      `const fs = require('fs');
const { spawnSync } = require('child_process');
const [started, release, demo] = process.argv.slice(2);
const input = fs.readFileSync(0);
fs.appendFileSync(started, 'x');
const wait = () => {
  if (!fs.existsSync(release)) return setTimeout(wait, 50);
  const run = spawnSync(process.execPath, [demo], { input, stdio: ['pipe', 'inherit', 'inherit'] });
  process.exit(run.status ?? 1);
};
wait();
`,
    );
    const registryPath = join(folder, '.loopx', 'registry.json');
    const registry = JSON.parse(readFileSync(registryPath, 'utf8')) as {
      goals: { coordination: { registered_agents: string[]; agent_profiles: Record<string, unknown> } }[];
    };
    const coordination = registry.goals[0]?.coordination;
    assert.ok(coordination);
    coordination.registered_agents.push('slow');
    coordination.agent_profiles['slow'] = {
      executor: {
        preset: 'command',
        command: [process.execPath, wrapper, started, release, join(extension.extensionPath, 'out', 'demoAgent.js')],
        timeout_minutes: 1,
      },
    };
    writeFileSync(registryPath, `${JSON.stringify(registry, null, 2)}\n`);
    await vscode.commands.executeCommand('loopx.refresh');

    try {
      const before = await waitFor(async () => {
        const s = await indicator();
        return s.visible && s.goalId === 'tidy-notes' ? s : undefined;
      }, 'the status bar showing tidy-notes');
      assert.notEqual(before.kind, 'running', `before the turn: ${before.text}`);
      assert.doesNotMatch(before.text, /sync~spin/);
      const spentBefore = spentOf(before.text);

      const loop = vscode.commands.executeCommand<{ stop_reason: string; turn_count: number } | undefined>(
        'loopx.turnLoop',
        { goalId: 'tidy-notes', agentIds: ['slow'], confirmed: true },
      );
      await waitFor(async () => (existsSync(started) ? true : undefined), 'the agent to start');
      const running = await waitFor(async () => {
        const s = await indicator();
        return s.kind === 'running' ? s : undefined;
      }, 'the status bar showing the goal running');
      assert.match(running.text, /^\$\(sync~spin\) tidy-notes /);

      // The status bar's click, driven as a person would: pick the goal, then the first action.
      await takePicks();
      const overview = vscode.commands.executeCommand('loopx.quotaOverview');
      await waitFor(async () => ((await takePicks()).length > 0 ? true : undefined), 'the goals quick pick');
      const actions = await acceptUntilNextPick('the actions quick pick');
      assert.equal(actions.title, 'LoopX: tidy-notes');
      assert.equal(actions.labels[0], '$(debug-stop) Stop Loop', `actions: ${JSON.stringify(actions.labels)}`);
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      await overview;

      writeFileSync(release, 'go');
      const result = await loop;
      assert.ok(result, 'the loop returned its result');
      assert.equal(
        result.stop_reason,
        'cancelled',
        `Stop Loop from the quick pick stopped the loop: ${JSON.stringify(result).slice(0, 2000)}`,
      );
      assert.equal(readFileSync(started, 'utf8'), 'x', 'one turn started, none after Stop Loop');

      // Stopped mid-turn: the turn is cancelled whole, no slot spent.
      assert.equal(spentOf((await indicator()).text), spentBefore);

      // Now a loop that runs its turns to the end: the demo agent's work, each turn a spent slot.
      rmSync(started, { force: true });
      rmSync(release, { force: true });
      const full = vscode.commands.executeCommand<{ stop_reason: string; spend_count: number } | undefined>(
        'loopx.turnLoop',
        { goalId: 'tidy-notes', agentIds: ['slow'], confirmed: true },
      );
      await waitFor(async () => (existsSync(started) ? true : undefined), 'the agent to start again');
      await waitFor(async () => ((await indicator()).kind === 'running' ? true : undefined), 'running again');
      writeFileSync(release, 'go');
      const done = await full;
      assert.ok(done && done.spend_count >= 1, `loop result: ${JSON.stringify(done)}`);
      let last = '';
      const after = await waitFor(async () => {
        const s = await indicator();
        last = `${s.kind ?? '-'} ${s.text}`;
        return s.kind !== 'running' && spentOf(s.text) === spentBefore + done.spend_count ? s : undefined;
      }, 'the status bar showing the spent slots').catch((error: Error) => {
        throw new Error(`${error.message}; before "${before.text}", spent ${done.spend_count}, now "${last}"`);
      });
      assert.doesNotMatch(after.text, /sync~spin/);

      // Not running any more: the click offers no Stop Loop.
      await takePicks();
      const idle = vscode.commands.executeCommand('loopx.quotaOverview');
      await waitFor(async () => ((await takePicks()).length > 0 ? true : undefined), 'the goals quick pick');
      const idleActions = await acceptUntilNextPick('the actions quick pick');
      assert.ok(!idleActions.labels.some((l) => l.includes('Stop Loop')), JSON.stringify(idleActions.labels));
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      await idle;
    } finally {
      writeFileSync(release, 'go');
      rmSync(barrier, { recursive: true, force: true });
    }
  });
});
