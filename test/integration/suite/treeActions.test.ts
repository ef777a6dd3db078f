import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { waitFor } from '../../support/waitFor';
import { loopxJson, workspaceDir } from '../../support/extensionHost';

interface Failure {
  command: string;
  kind: string;
  message: string;
}

/**
 * Brings the Goals view to a known state before an external write: reloads, renders the goal nodes the way the view
 * does (a refresh of a goal node the tree never rendered is a whole-tree one), and drops the refreshes fired so far.
 */
async function settleTree(): Promise<void> {
  await vscode.commands.executeCommand('loopx.refresh');
  await vscode.commands.executeCommand('_loopx.treeSnapshot', 'goals', 1);
  await vscode.commands.executeCommand('_loopx.takeTreeRefreshes');
}

/** The todo's line and its metadata comment in the state file. */
function todoLines(state: string, todoId: string): string {
  const lines = state.split('\n');
  const index = lines.findIndex((line) => line.includes(`<!-- loopx:todo todo_id=${todoId} `));
  assert.ok(index > 0, `${todoId} in the state file`);
  return `${lines[index - 1]}\n${lines[index]}`;
}

/**
 * Every action of the Goals tree, run as the tree runs it (with the node's goal and todo) or as code
 * does (`{ goalId, todoId, … }`), checked on disk. The files are restored afterwards: the suites
 * after this one expect the demo workspace as committed.
 */
describe('Acting from the Goals tree (real VS Code host)', function () {
  this.timeout(60_000);
  const statePath = () => join(workspaceDir(), '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md');
  const registryPath = () => join(workspaceDir(), '.loopx', 'registry.json');
  const state = () => readFileSync(statePath(), 'utf8');
  let savedState = '';
  let savedRegistry = '';

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    savedState = state();
    savedRegistry = readFileSync(registryPath(), 'utf8');
    await vscode.commands.executeCommand('_loopx.takeCommandFailures');
  });

  after(async () => {
    writeFileSync(statePath(), savedState);
    writeFileSync(registryPath(), savedRegistry);
    await vscode.commands.executeCommand('loopx.refresh');
  });

  afterEach(async () => {
    const failures = (await vscode.commands.executeCommand('_loopx.takeCommandFailures')) as Failure[];
    assert.deepEqual(failures, [], 'no command failed');
  });

  it('registers every tree action as a command', async () => {
    const all = new Set(await vscode.commands.getCommands(true));
    for (const id of [
      'loopx.gateApprove',
      'loopx.gateReject',
      'loopx.todoComplete',
      'loopx.todoClaim',
      'loopx.todoDefer',
      'loopx.todoSupersede',
      'loopx.todoUpdate',
      'loopx.openInStateFile',
      'loopx.pauseGoal',
      'loopx.resumeGoal',
      'loopx.archiveRuntime',
      'loopx.stopLoop',
      'loopx.openRunEvidence',
    ])
      assert.ok(all.has(id), id);
  });

  it('approves the gate with a decision note: the gate is closed as approved and the todo it held is released', async () => {
    await vscode.commands.executeCommand('loopx.gateApprove', {
      goalId: 'tidy-notes',
      todoId: 'todo_gate_publish',
      note: 'Fine to publish <b>now</b>',
    });
    const gate = todoLines(state(), 'todo_gate_publish');
    assert.match(gate, /^- \[x\]/);
    assert.match(gate, /decision_outcome=approve/);
    const listed = loopxJson(['todo', 'list', '--goal-id', 'tidy-notes']);
    const todos = (listed as unknown as { todos: { todo_id: string; blocked_by: unknown[] }[] }).todos;
    assert.deepEqual(todos.find((t) => t.todo_id === 'todo_publish')?.blocked_by, [], 'todo_publish is runnable');
  });

  it('completes, claims, defers, supersedes and re-prioritizes todos, each written to the state file', async () => {
    await vscode.commands.executeCommand('loopx.todoComplete', {
      goalId: 'tidy-notes',
      todoId: 'todo_related',
      evidence: 'notes link each other under Related',
      noFollowUp: true,
    });
    assert.match(todoLines(state(), 'todo_related'), /^- \[x\][\s\S]*evidence=notes%20link/);

    await vscode.commands.executeCommand('loopx.todoClaim', {
      goalId: 'tidy-notes',
      todoId: 'todo_index',
      agentId: 'demo',
    });
    assert.match(todoLines(state(), 'todo_index'), /claimed_by=demo/);

    await vscode.commands.executeCommand('loopx.todoDefer', {
      goalId: 'tidy-notes',
      todoId: 'todo_links',
      reason: 'waits for the index',
      resumeWhen: 'todo_done:todo_index',
    });
    assert.match(todoLines(state(), 'todo_links'), /status=deferred/);

    await vscode.commands.executeCommand('loopx.todoUpdate', {
      goalId: 'tidy-notes',
      todoId: 'todo_index',
      priority: 'P0',
    });
    assert.match(todoLines(state(), 'todo_index'), /^- \[ \] \[P0\]/);

    await vscode.commands.executeCommand('loopx.todoSupersede', {
      goalId: 'tidy-notes',
      todoId: 'todo_publish',
      successorText: 'Publish the knowledge base as a static site',
    });
    assert.match(todoLines(state(), 'todo_publish'), /superseded/);
    assert.match(state(), /Publish the knowledge base as a static site/);
  });

  it('a refused action writes nothing and is reported (completing an agent todo with no evidence)', async () => {
    const before = state();
    await vscode.commands.executeCommand('loopx.todoComplete', {
      goalId: 'tidy-notes',
      todoId: 'todo_index',
      evidence: '   ',
      noFollowUp: true,
    });
    assert.equal(state(), before);
    const failures = (await vscode.commands.executeCommand('_loopx.takeCommandFailures')) as Failure[];
    assert.equal(failures.length, 1);
    assert.equal(failures[0]?.command, 'loopx.todoComplete');
  });

  it('opens the state file at the todo line', async () => {
    const editor = (await vscode.commands.executeCommand('loopx.openInStateFile', {
      goalId: 'tidy-notes',
      todoId: 'todo_index',
    })) as vscode.TextEditor;
    assert.equal(editor.document.uri.fsPath, statePath());
    assert.match(editor.document.lineAt(editor.selection.active.line).text, /Write notes\/index\.md/);
  });

  it('pauses and resumes the goal through the registry stop flag', async () => {
    await vscode.commands.executeCommand('loopx.pauseGoal', { goalId: 'tidy-notes', confirmed: true });
    const status = () =>
      (JSON.parse(readFileSync(registryPath(), 'utf8')) as { goals: { status: string }[] }).goals[0]?.status;
    assert.equal(status(), 'paused');
    await vscode.commands.executeCommand('loopx.resumeGoal', { goalId: 'tidy-notes', confirmed: true });
    assert.equal(status(), 'active');
  });

  it('archive runtime is refused for a registered goal: nothing moves', async () => {
    const runtime = join(workspaceDir(), '.loopx', 'runtime', 'goals', 'tidy-notes');
    await vscode.commands.executeCommand('loopx.archiveRuntime', { goalId: 'tidy-notes', confirmed: true });
    assert.ok(existsSync(join(runtime, 'runs', 'index.jsonl')));
    const failures = (await vscode.commands.executeCommand('_loopx.takeCommandFailures')) as Failure[];
    assert.equal(failures.length, 1);
    assert.match(failures[0]?.message ?? '', /registered/);
  });

  it('Stop Loop with no loop running says so and changes nothing', async () => {
    assert.equal(await vscode.commands.executeCommand('loopx.stopLoop', { goalId: 'tidy-notes' }), false);
  });

  it("a change written by another process refreshes that goal's tree node only", async () => {
    await settleTree();
    const script = `require('fs').appendFileSync(${JSON.stringify(statePath())}, '\\n- 2026-12-01: edited by another process\\n')`;
    const child = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } });
    assert.equal(child.status, 0);
    const seen: string[][] = [];
    await waitFor(() => {
      void vscode.commands.executeCommand<string[][]>('_loopx.takeTreeRefreshes').then((r) => seen.push(...r));
      return seen.length > 0 ? true : undefined;
    }, 'a tree refresh after the external write');
    assert.deepEqual(seen, [['tidy-notes']], 'the goal node only, not the whole tree');
  });

  it("a task lease taken by another process refreshes that goal's tree node through the watcher alone", async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    // Earlier tests of this suite complete, claim and defer todos: lease one that is still open and unclaimed.
    const listed = loopxJson(['todo', 'list', '--goal-id', 'tidy-notes'])['todos'] as {
      todo_id: string;
      status: string;
      role: string;
      claimed_by?: string | null;
    }[];
    const free = listed.find((todo) => todo.role === 'agent' && todo.status === 'open' && !todo.claimed_by);
    assert.ok(free !== undefined, `an open, unclaimed agent todo to lease: ${JSON.stringify(listed)}`);
    const lease = ['--goal-id', 'tidy-notes', '--todo-id', free.todo_id];
    // The runtime folder replaced wholesale, as a backup restore (or another suite) does: the watcher must survive it.
    const runtime = join(workspaceDir(), '.loopx');
    const copy = join(mkdtempSync(join(tmpdir(), 'loopx-it-runtime-')), '.loopx');
    cpSync(runtime, copy, { recursive: true });
    rmSync(runtime, { recursive: true, force: true });
    cpSync(copy, runtime, { recursive: true });
    rmSync(copy, { recursive: true, force: true });
    await settleTree();
    loopxJson(['task-lease', 'acquire', ...lease, '--owner', 'codex-main', '--idempotency-key', 'it-tree-lease']);
    try {
      // No explicit refresh: the watcher's event for <runtime>/goals/tidy-notes/task-leases/… is mapped to the goal.
      const seen: string[][] = [];
      await waitFor(() => {
        void vscode.commands.executeCommand<string[][]>('_loopx.takeTreeRefreshes').then((r) => seen.push(...r));
        return seen.length > 0 ? true : undefined;
      }, 'a tree refresh after the external lease');
      assert.deepEqual(seen, [['tidy-notes']], 'the goal node only, not the whole tree');
    } finally {
      const held = loopxJson(['task-lease', 'inspect', ...lease])['lease'] as { version?: number } | null;
      loopxJson([
        'task-lease',
        'release',
        ...lease,
        '--owner',
        'codex-main',
        '--idempotency-key',
        'it-tree-lease',
        '--expected-version',
        String(held?.version ?? 1),
      ]);
    }
  });
});
