import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { createGoal } from '../../../src/core/ops/createGoal';
import { quotaStatus } from '../../../src/core/ops/quota';
import { todoAdd } from '../../../src/core/ops/todo';
import { runOperation } from '../../../src/core/ops/run';
import { editorEnvironment } from '../../../src/commands/operationRunner';

/**
 * Watching a turn run, and reviewing what it changed, in a real VS Code host: the turn terminal gets
 * a real agent process's output while it runs (a barrier: the agent waits until the test has seen its
 * line in the terminal), Ctrl+C in the terminal and Stop Loop cancel it, and after a demo turn
 * "Review Changes" opens diff editors and "Revert" restores a file's bytes.
 */

interface TerminalSnapshot {
  name: string;
  running: boolean;
  cancelled: boolean;
  transcript: string;
}
interface RunResult {
  ok: boolean;
  status: string;
  message: string;
  review?: { id: string; kind: string; files: { path: string; status: string }[] };
}

const root = (): string => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
const registryPath = (): string => join(root(), '.loopx', 'registry.json');

/** A real agent process: prints a line, then waits (forever) for the barrier file; prints its PID first. */
const WAITING_AGENT = `
const fs = require('fs');
process.stdout.write('agent pid ' + process.pid + '\\n');
process.stderr.write('waiting for the barrier\\n');
const barrier = process.argv[1];
setInterval(() => { if (fs.existsSync(barrier)) { process.stdout.write('barrier seen, no result\\n'); process.exit(0); } }, 20);
`;

async function terminals(): Promise<TerminalSnapshot[]> {
  return (await vscode.commands.executeCommand('_loopx.turnTerminals.snapshot')) as TerminalSnapshot[];
}

/** Waits (bounded by the test's timeout) until the newest terminal of `name` shows `pattern`. */
async function terminalShows(name: string, pattern: RegExp): Promise<TerminalSnapshot> {
  for (;;) {
    const found = (await terminals()).filter((t) => t.name === name).at(-1);
    if (found !== undefined && pattern.test(found.transcript)) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function reservedSlots(goalId = 'watch-goal'): Promise<number> {
  return (await runOperation(quotaStatus, { goalId }, editorEnvironment(registryPath()))).reserved_slots;
}

describe('Watching a turn run (real VS Code host, real agent processes)', function () {
  this.timeout(90_000);
  const barrier = (): string => join(root(), 'barrier.flag');

  before(async () => {
    // The waiting agent works on a goal of its own, so its cancelled (resumable) turns hold no demo todo.
    const env = editorEnvironment(registryPath());
    await runOperation(createGoal, { project: root(), goalId: 'watch-goal', objective: 'Watch a turn run.' }, env);
    await runOperation(todoAdd, { goalId: 'watch-goal', text: 'Wait for the barrier.', priority: 'P1' }, env);
    await runOperation(todoAdd, { goalId: 'watch-goal', text: 'Wait for it again.', priority: 'P2' }, env);
    const registry = JSON.parse(readFileSync(registryPath(), 'utf8')) as {
      goals: { id: string; coordination?: Record<string, unknown> }[];
    };
    const goal = registry.goals.find((g) => g.id === 'watch-goal');
    assert.ok(goal);
    goal.coordination = {
      ...goal.coordination,
      registered_agents: ['live'],
      agent_profiles: {
        live: { executor: { preset: 'command', command: [process.execPath, '-e', WAITING_AGENT, barrier()] } },
      },
    };
    writeFileSync(registryPath(), JSON.stringify(registry, null, 2));
    const loopx = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(loopx);
    await loopx.activate();
    await vscode.commands.executeCommand('loopx.refresh');
  });

  it('shows the built-in demo agent (a real process) in the terminal, then Review Changes opens a diff and Revert restores the bytes', async () => {
    const notes = join(root(), 'notes');
    const run = (await vscode.commands.executeCommand('loopx.turnRunOnce', {
      goalId: 'tidy-notes',
      agentIds: ['demo'],
      confirmed: true,
    })) as RunResult | undefined;
    assert.ok(run, 'the command returned no result (see the LoopX log)');
    assert.equal(run.ok, true, run.message);
    const shown = (await terminals()).filter((t) => t.name === 'LoopX: tidy-notes · demo').at(-1);
    assert.ok(shown, 'no terminal for the demo turn');
    assert.match(shown.transcript, /demo agent: working on/);
    for (const phase of ['reserve', 'run', 'validate', 'write back', 'settle'])
      assert.match(shown.transcript, new RegExp(`\\[${phase}\\]`), `no "${phase}" line`);
    assert.ok(run.review, 'no review of the changed files');
    assert.equal(run.review.kind, 'files', 'the demo workspace is no git repository');
    const files = run.review.files;
    assert.ok(files.length > 0, 'the demo turn changed no file');
    assert.ok(files.every((f) => !f.path.startsWith('.loopx/') && !f.path.endsWith('ACTIVE_GOAL_STATE.md')));
    const modified = files.find((f) => f.status === 'modified' && f.path.startsWith('notes/'));
    assert.ok(modified, `no modified note among ${JSON.stringify(files)}`);
    const original = await vscode.workspace.openTextDocument(
      vscode.Uri.from({ scheme: 'loopx-original', path: `/${run.review.id}/${modified.path}` }),
    );
    assert.notEqual(original.getText(), readFileSync(join(root(), modified.path), 'utf8'));

    const opened = (await vscode.commands.executeCommand('_loopx.review.open', run.review.id)) as unknown[];
    assert.equal(opened.length, files.length);
    const diffs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .map((tab) => tab.input)
      .filter((input): input is vscode.TabInputTextDiff => input instanceof vscode.TabInputTextDiff);
    const diff = diffs.find((d) => d.modified.fsPath === join(root(), modified.path));
    assert.ok(diff, `no diff editor for ${modified.path}`);
    assert.equal(diff.original.scheme, 'loopx-original');

    assert.equal(
      await vscode.commands.executeCommand('_loopx.review.revert', {
        reviewId: run.review.id,
        path: modified.path,
        confirmed: true,
      }),
      true,
    );
    assert.equal(readFileSync(join(root(), modified.path), 'utf8'), original.getText());
    await assert.rejects(
      Promise.resolve(
        vscode.commands.executeCommand('_loopx.review.revert', {
          reviewId: run.review.id,
          path: 'scripts/check-notes.js',
          confirmed: true,
        }),
      ),
      /not a file this turn changed/,
    );
    assert.ok(existsSync(notes));
  });

  it("streams the agent's output live into a terminal named after goal and agent; Ctrl+C there cancels the turn", async () => {
    const name = 'LoopX: watch-goal · live';
    const run = vscode.commands.executeCommand('loopx.turnRunOnce', {
      goalId: 'watch-goal',
      agentIds: ['live'],
      confirmed: true,
    }) as Thenable<RunResult | undefined>;
    // The agent runs until the barrier exists, so its line can only have come while it runs.
    const shown = await terminalShows(name, /waiting for the barrier/);
    assert.equal(shown.running, true);
    assert.match(shown.transcript, /\[reserve\]/, 'no reserve phase line before the agent ran');
    const pid = Number(/agent pid (\d+)/.exec(shown.transcript)?.[1]);
    assert.ok(alive(pid), 'the agent process is not running while its output shows');
    const terminal = vscode.window.terminals.find((t) => t.name === name);
    assert.ok(terminal, 'no VS Code terminal with the goal and agent in its name');
    terminal.sendText('\u0003', false);
    const result = await run;
    assert.ok(result, 'the command returned no result (see the LoopX log)');
    assert.equal(result.status, 'cancelled', result.message);
    assert.equal(alive(pid), false, 'the agent process outlived the cancel');
    const after = (await terminals()).filter((t) => t.name === name).at(-1);
    assert.ok(after);
    assert.equal(after.running, false);
    assert.match(after.transcript, /\^C — cancelling/);
    assert.match(after.transcript, /\^C — cancelling[\s\S]*cancelled/);
    assert.equal(existsSync(barrier()), false);
    assert.equal(await reservedSlots(), 0);
  });

  it('Stop Loop (the tree and palette command) cancels a running loop; the terminal shows why it stopped', async () => {
    const name = 'LoopX: watch-goal · live';
    const before = (await terminals()).length;
    const run = vscode.commands.executeCommand('loopx.turnLoop', {
      goalId: 'watch-goal',
      agentIds: ['live'],
      confirmed: true,
    }) as Thenable<{ ok: boolean; stop_reason?: string; turns: unknown[] } | undefined>;
    for (;;) {
      const all = await terminals();
      if (all.length > before && /waiting for the barrier/.test(all.at(-1)?.transcript ?? '')) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    assert.equal(await vscode.commands.executeCommand('loopx.stopLoop', { goalId: 'watch-goal' }), true);
    const result = await run;
    assert.ok(result);
    const after = (await terminals()).filter((t) => t.name === name).at(-1);
    assert.match(after?.transcript ?? '', /■ loop stopped \(cancelled\)/);
    assert.equal(await reservedSlots(), 0);
  });
});
