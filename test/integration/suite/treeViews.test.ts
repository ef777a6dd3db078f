import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import type { TreeSnapshotNode } from '../../../src/views/treeSnapshot';
import { backUpWorkspace } from './workspaceBackup';
import { waitFor } from '../../support/waitFor';
import { loopx, workspaceDir } from '../../support/extensionHost';

interface Failure {
  command: string;
  kind: string;
  message: string;
}

const snapshot = async (view: 'goals' | 'agents'): Promise<TreeSnapshotNode[]> =>
  (await vscode.commands.executeCommand<TreeSnapshotNode[]>('_loopx.treeSnapshot', view, 3)) ?? [];

/** Every node of a snapshot, depth first. */
function flatten(nodes: readonly TreeSnapshotNode[]): TreeSnapshotNode[] {
  return nodes.flatMap((node) => [node, ...flatten(node.children)]);
}

/** `loopx todo list`: the gate blockers of each open todo. */
function blockers(): Map<string, { gate_todo_id: string; gate_state: string }[]> {
  const listed = loopx(['todo', 'list', '--goal-id', 'tidy-notes', '--format', 'json']);
  assert.equal(listed.status, 0, listed.stderr);
  const todos = (
    JSON.parse(listed.stdout) as {
      todos: { todo_id: string; blocked_by: { gate_todo_id: string; gate_state: string }[] }[];
    }
  ).todos;
  return new Map(todos.map((t) => [t.todo_id, t.blocked_by]));
}

/**
 * The Goals and Agents views as rendered items, a gate rejected from the tree, Stop Loop on a
 * loop that really runs, and the `loopx` CLI on the terminals' PATH. The workspace's LoopX files
 * and notes are restored afterwards: the suites after this one expect the demo workspace as committed.
 */
describe('Goals and Agents views, reject, Stop Loop and the terminal PATH (real VS Code host)', function () {
  this.timeout(90_000);
  const statePath = () => join(workspaceDir(), '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md');
  const registryPath = () => join(workspaceDir(), '.loopx', 'registry.json');
  let restore: () => void = () => undefined;

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    restore = backUpWorkspace(workspaceDir());
    await vscode.commands.executeCommand('loopx.refresh');
    await vscode.commands.executeCommand('_loopx.takeCommandFailures');
  });

  after(async () => {
    restore();
    await vscode.commands.executeCommand('loopx.refresh');
  });

  afterEach(async () => {
    const failures = (await vscode.commands.executeCommand('_loopx.takeCommandFailures')) as Failure[];
    assert.deepEqual(failures, [], 'no command failed');
  });

  it('the Goals view lists what needs a person first and marks the todo the gate holds', async () => {
    const [goal] = await snapshot('goals');
    assert.ok(goal);
    assert.equal(goal.label, 'Tidy the notes folder');
    assert.equal(goal.contextValue, 'goal.active');
    assert.equal(goal.children[0]?.label, 'Needs you', 'gates come first');
    assert.deepEqual(
      goal.children[0]?.children.map((g) => [g.label, g.contextValue]),
      [['Approve publishing the knowledge base to the team wiki.', 'gate.open']],
    );
    const todos = flatten([goal]).filter((n) => n.contextValue?.startsWith('todo.'));
    const held = todos.filter((t) => t.description?.includes('held by gate')).map((t) => t.label);
    assert.deepEqual(held, ['Publish the knowledge base to the team wiki.']);
  });

  it('the Agents view shows per agent its executor, claims, last turn and goals', async () => {
    const agents = await snapshot('agents');
    assert.deepEqual(
      agents.map((a) => a.label),
      ['codex-main', 'demo'],
    );
    const [codex, demo] = agents;
    assert.match(codex?.description ?? '', /1 goal · 1 claimed/);
    const codexRows = codex?.children.map((c) => [c.label, c.description ?? '']) ?? [];
    assert.deepEqual(codexRows[0], ['no executor configured', ''], 'codex-main has no executor profile');
    assert.deepEqual(codexRows[1], ['No turn yet', '']);
    assert.deepEqual(codexRows[2], ['Fix broken relative links between notes.', 'claimed · tidy-notes']);
    assert.deepEqual(codexRows[3], ['Tidy the notes folder', 'tidy-notes']);
    const demoRows = demo?.children.map((c) => [c.label, c.description ?? '']) ?? [];
    assert.equal(demoRows[0]?.[0], 'executor: demo');
    assert.match(demoRows[1]?.[0] ?? '', /^Last turn: /);
    assert.match(demoRows[1]?.[1] ?? '', /^tidy-notes · 2026-11-28T08:5\d:00\+00:00 · 1 slot/);
    assert.equal(demoRows.length, 3, 'demo claims nothing');
  });

  it('rejects a second gate added with todo add: closed as rejected, and the todo it holds stays blocked', async () => {
    const added = loopx([
      'todo',
      'add',
      '--goal-id',
      'tidy-notes',
      '--text',
      'Approve writing the index page',
      '--task-class',
      'user_gate',
      '--unblocks-todo-id',
      'todo_index',
      // Two agents on the demo goal: a user gate names the lane it blocks (the original's rule).
      '--blocks-agent',
      'demo',
      '--format',
      'json',
    ]);
    assert.equal(added.status, 0, added.stderr);
    const gateId = (JSON.parse(added.stdout) as { todo_id: string }).todo_id;
    await vscode.commands.executeCommand('loopx.refresh');
    assert.deepEqual(
      blockers()
        .get('todo_index')
        ?.map((b) => [b.gate_todo_id, b.gate_state]),
      [[gateId, 'open']],
    );

    await vscode.commands.executeCommand('loopx.gateReject', {
      goalId: 'tidy-notes',
      todoId: gateId,
      note: 'Not before the tags are cleaned up',
    });
    const lines = readFileSync(statePath(), 'utf8').split('\n');
    const meta = lines.find((line) => line.includes(`todo_id=${gateId} `)) ?? '';
    assert.match(meta, /decision_outcome=reject/);
    assert.match(meta, /Not%20before%20the%20tags/);
    assert.deepEqual(
      blockers()
        .get('todo_index')
        ?.map((b) => [b.gate_todo_id, b.gate_state]),
      [[gateId, 'rejected']],
      'the todo stays blocked by the rejected gate',
    );
    assert.deepEqual(blockers().get('todo_publish')?.length, 1, 'the other gate is untouched');
    // The tree: the rejected gate no longer asks for a decision (the status lists open gates only).
    const goal = (await snapshot('goals'))[0];
    const gates = goal?.children.find((c) => c.label === 'Needs you')?.children.map((g) => g.label);
    assert.deepEqual(gates, ['Approve publishing the knowledge base to the team wiki.']);
  });

  it('Stop Loop stops a loop that is running: no turn after the current one', async () => {
    const barrier = mkdtempSync(join(tmpdir(), 'loopx-slow-agent-'));
    const started = join(barrier, 'started');
    const release = join(barrier, 'release');
    const wrapper = join(barrier, 'slow-agent.js');
    // A slow agent: it says it started, waits for the test's release file, then does the demo agent's work.
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
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    const registry = JSON.parse(readFileSync(registryPath(), 'utf8')) as {
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
    writeFileSync(registryPath(), `${JSON.stringify(registry, null, 2)}\n`);
    await vscode.commands.executeCommand('loopx.refresh');

    try {
      const loop = vscode.commands.executeCommand<{ stop_reason: string; turn_count: number } | undefined>(
        'loopx.turnLoop',
        { goalId: 'tidy-notes', agentIds: ['slow'], confirmed: true },
      );
      await waitFor(() => (existsSync(started) ? true : undefined), 'the slow agent to start');
      const [goal] = await snapshot('goals');
      assert.equal(goal?.contextValue, 'goal.active.running', 'the tree offers Stop Loop while it runs');
      assert.match(goal?.description ?? '', /^loop running/);

      assert.equal(await vscode.commands.executeCommand('loopx.stopLoop', { goalId: 'tidy-notes' }), true);
      writeFileSync(release, 'go');
      const result = await loop;
      assert.ok(result, 'the loop returned its result');
      assert.equal(result.stop_reason, 'cancelled');
      assert.ok(result.turn_count <= 1, `turns: ${result.turn_count}`);
      assert.equal(readFileSync(started, 'utf8'), 'x', 'the agent was started once');
      assert.equal(await vscode.commands.executeCommand('loopx.stopLoop', { goalId: 'tidy-notes' }), false);
      const [after] = await snapshot('goals');
      assert.equal(after?.contextValue, 'goal.active');
    } finally {
      writeFileSync(release, 'go');
      rmSync(barrier, { recursive: true, force: true });
    }
  });
});
