import assert from 'node:assert/strict';
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
  title: string;
  message: string;
  compared: { label: string; value: string | null; written_at: string | null }[];
  actions: { kind: string }[];
}
interface Outcome {
  accepted: boolean;
  ok?: boolean;
  message: string;
}
interface Failure {
  command: string;
  kind: string;
  message: string;
}

const HOSTILE = '<img src=x onerror=alert(1)> poll the <b>upstream</b> build & wait';

const warnings = async () =>
  (await vscode.commands.executeCommand('_loopx.warnings.snapshot')) as { cards: Card[]; html: string | null };
const snapshot = async (view: 'goals' | 'agents'): Promise<TreeSnapshotNode[]> =>
  (await vscode.commands.executeCommand<TreeSnapshotNode[]>('_loopx.treeSnapshot', view, 3)) ?? [];
const flatten = (nodes: readonly TreeSnapshotNode[]): TreeSnapshotNode[] =>
  nodes.flatMap((node) => [node, ...flatten(node.children)]);

/**
 * Issue 18 in the editor: a replan obligation written by the CLI in another process shows as a
 * warning card and a Goals-tree node, and its button records the replan; a lease taken by the CLI
 * shows in the Goals and Agents views, and Renew / Transfer / Release act on it through the lease ops.
 */
describe('Replan obligations and task leases in the editor (real VS Code host)', function () {
  this.timeout(90_000);
  let folder = '';
  let restore: () => void = () => undefined;

  /** `loopx … --format json` in another process (the CLI the extension ships). */
  function cli(args: string[]): Record<string, unknown> {
    return loopxJson(args, folder);
  }

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
    assert.ok(folder);
    restore = backUpWorkspace(folder);
    await vscode.commands.executeCommand('loopx.refresh');
    await vscode.commands.executeCommand('_loopx.takeCommandFailures');
  });

  after(async () => {
    restore();
    await vscode.commands.executeCommand('loopx.refresh');
  });

  it('shows a replan obligation written by another process as a card and a tree node, and records the replan', async () => {
    for (const turn of ['T1', 'T2']) {
      cli(['quota', 'should-run', '--goal-id', 'tidy-notes', '--agent-id', 'codex-main', '--turn-instance-id', turn]);
      cli([
        'refresh-state',
        '--goal-id',
        'tidy-notes',
        '--agent-id',
        'codex-main',
        '--classification',
        'monitor_no_progress',
        '--recommended-action',
        HOSTILE,
        '--delivery-outcome',
        'surface_only',
        '--turn-instance-id',
        turn,
      ]);
    }
    const guard = cli(['quota', 'should-run', '--goal-id', 'tidy-notes', '--agent-id', 'codex-main']);
    assert.equal(guard['effective_action'], 'autonomous_replan_required');
    const obligationId = (guard['replan_obligation'] as { obligation_id: string }).obligation_id;

    // Explicit reload, as for the lease below: in the full suite run (after other suites replaced runtime folders)
    // code-server's watcher sometimes misses these writes; live refresh itself is asserted by runtimeWatch and
    // liveLayouts, this test asserts the card and what recording the replan does.
    await vscode.commands.executeCommand('loopx.refresh');
    await vscode.commands.executeCommand('loopx.showProjectionWarnings');
    const card = await waitFor(async () => {
      const snap = await warnings();
      return snap.cards.find((c) => c.kind === 'autonomous_replan_required');
    }, 'the replan card');
    assert.equal(card.goal_id, 'tidy-notes');
    assert.equal(card.title, 'Replan required: lane codex-main stalled');
    assert.match(card.message, /since \d{4}-/);
    assert.deepEqual(
      card.compared.map((c) => [c.label, c.value]),
      [
        ['Stalled turn 2 (T2)', `monitor_no_progress: ${HOSTILE}`],
        ['Stalled turn 1 (T1)', `monitor_no_progress: ${HOSTILE}`],
      ],
      'the hostile text travels as data',
    );
    assert.deepEqual(
      card.actions.map((a) => a.kind),
      ['record_replan', 'open_state'],
    );
    const html = (await warnings()).html ?? '';
    assert.doesNotMatch(html, /onerror|upstream/, 'no run text in the markup: it travels by message, as text nodes');

    const [goal] = await snapshot('goals');
    const replanNode = flatten(goal ? [goal] : []).find((n) => n.contextValue === 'warning.replan');
    assert.ok(replanNode, 'the Goals tree shows the obligation');
    assert.equal(replanNode.label, 'Replan required');
    assert.match(replanNode.description ?? '', /^@codex-main · 2 stalled turns · since \d{4}-/);

    const outcome = (await vscode.commands.executeCommand(
      '_loopx.warnings.receive',
      { type: 'act', key: card.key, action: 'record_replan' },
      { confirmed: true },
    )) as Outcome;
    assert.deepEqual([outcome.accepted, outcome.ok], [true, true], outcome.message);
    assert.match(outcome.message, new RegExp(obligationId));
    await waitFor(async () => {
      const snap = await warnings();
      return snap.cards.some((c) => c.kind === 'autonomous_replan_required') ? undefined : true;
    }, 'the replan card to go away');
    const after = cli(['quota', 'should-run', '--goal-id', 'tidy-notes', '--agent-id', 'codex-main']);
    assert.notEqual(after['effective_action'], 'autonomous_replan_required', 'the replan result discharged it');
    const [goalAfter] = await snapshot('goals');
    assert.equal(
      flatten(goalAfter ? [goalAfter] : []).some((n) => n.contextValue === 'warning.replan'),
      false,
    );
  });

  it('shows a lease taken by another process in both views, refuses Complete, and renews, transfers and releases it', async () => {
    const inspect = () =>
      cli(['task-lease', 'inspect', '--goal-id', 'tidy-notes', '--todo-id', 'todo_related'])['lease'] as Record<
        string,
        unknown
      > | null;
    cli([
      'task-lease',
      'acquire',
      '--goal-id',
      'tidy-notes',
      '--todo-id',
      'todo_related',
      '--owner',
      'codex-main',
      '--idempotency-key',
      'it-run-1',
    ]);
    const leasedTodo = async () => {
      const [goal] = await snapshot('goals');
      return flatten(goal ? [goal] : []).find(
        (n) => n.contextValue?.startsWith('todo.') === true && n.label.startsWith('Add a "Related" section'),
      );
    };
    // Explicit reload: in the full suite run (after other suites replaced .loopx wholesale) the file
    // watcher did not report the new task-leases folder within 20 s, alone it did; this test asserts what
    // the views render, the watcher gap is an open item (docs/leases.md).
    await vscode.commands.executeCommand('loopx.refresh');
    let seen: TreeSnapshotNode | undefined;
    const todo = await waitFor(async () => {
      seen = await leasedTodo();
      return seen?.contextValue === 'todo.open.agent.leased' ? seen : undefined;
    }, 'the leased todo in the Goals tree').catch(async (error: unknown) => {
      await vscode.commands.executeCommand('loopx.refresh');
      throw new Error(
        `${String(error)}; last seen ${JSON.stringify(seen)}; after a refresh ${JSON.stringify(await leasedTodo())}`,
      );
    });
    // The time of day, with the date in front when the lease ends on another day (a run near midnight).
    assert.match(todo.description ?? '', /🔒 codex-main until (\d{4}-\d\d-\d\d )?\d\d:\d\d/);
    const agents = await snapshot('agents');
    const codex = agents.find((a) => a.label === 'codex-main');
    assert.match(codex?.description ?? '', /1 leased/);
    assert.ok(
      codex?.children.some(
        (c) => c.label.startsWith('Add a "Related" section') && /^leased until /.test(c.description ?? ''),
      ),
      JSON.stringify(codex?.children),
    );

    // Complete from the editor is refused: the editor is not the holder.
    await vscode.commands.executeCommand('loopx.todoComplete', {
      goalId: 'tidy-notes',
      todoId: 'todo_related',
      evidence: 'done in the editor',
      noFollowUp: true,
    });
    const failures = (await vscode.commands.executeCommand('_loopx.takeCommandFailures')) as Failure[];
    assert.equal(failures.length, 1, JSON.stringify(failures));
    assert.match(failures[0]?.message ?? '', /leased to codex-main .*Release or transfer the lease first/);
    assert.equal(inspect()?.['status'], 'active', 'the lease is untouched');

    await vscode.commands.executeCommand('loopx.taskLeaseRenew', {
      goalId: 'tidy-notes',
      todoId: 'todo_related',
      confirmed: true,
    });
    assert.deepEqual([inspect()?.['owner'], inspect()?.['version']], ['codex-main', 2]);

    await vscode.commands.executeCommand('loopx.taskLeaseTransfer', {
      goalId: 'tidy-notes',
      todoId: 'todo_related',
      newOwner: 'demo',
      confirmed: true,
    });
    assert.deepEqual([inspect()?.['owner'], inspect()?.['version']], ['demo', 3]);
    await waitFor(
      async () => ((await leasedTodo())?.description?.includes('🔒 demo until') ? true : undefined),
      'the tree to show the new holder',
    );

    await vscode.commands.executeCommand('loopx.taskLeaseRelease', {
      goalId: 'tidy-notes',
      todoId: 'todo_related',
      confirmed: true,
    });
    assert.equal(inspect()?.['status'], 'released');
    await waitFor(
      async () => ((await leasedTodo())?.contextValue === 'todo.open.agent' ? true : undefined),
      'the lock to go from the tree',
    );
    assert.deepEqual((await vscode.commands.executeCommand('_loopx.takeCommandFailures')) as Failure[], []);
  });

  it('shows the event log as a timeline by turn in the goal detail, and updates it live', async () => {
    interface Render {
      type: string;
      detail?: {
        goal_id: string;
        timeline: { turns: { turn_instance_id: string | null; events: { kind: string; text: string }[] }[] };
      };
    }
    const renders = async () =>
      ((await vscode.commands.executeCommand('_loopx.goalDetail.snapshot')) as { posted: Render[] }).posted.filter(
        (m) => m.type === 'render' && m.detail?.goal_id === 'tidy-notes',
      );
    await vscode.commands.executeCommand('loopx.showGoalDetail', { goalId: 'tidy-notes' });
    // A panel an earlier suite opened may still hold its last render (of that suite's workspace) until the
    // reload of this one reaches it: wait for a render that shows this workspace's log.
    let seenTurns: (string | null)[] = [];
    const first = await waitFor(async () => {
      const last = (await renders()).at(-1);
      seenTurns = (last?.detail?.timeline.turns ?? []).map((t) => t.turn_instance_id);
      return seenTurns.includes('T2') ? last : undefined;
    }, 'a goal detail render with the stalled turns of the first test').catch(() => {
      assert.fail(`the stalled turns of the first test are in the timeline: ${JSON.stringify(seenTurns)}`);
    });
    const t2 = first.detail?.timeline.turns.find((t) => t.turn_instance_id === 'T2');
    assert.ok(t2);
    assert.deepEqual(
      t2.events.map((e) => e.kind),
      ['quota_should_run', 'refresh_state'],
    );

    // Another process runs a guard for a new turn: the open panel shows it first, without a reopen.
    cli(['quota', 'should-run', '--goal-id', 'tidy-notes', '--agent-id', 'codex-main', '--turn-instance-id', 'T-live']);
    const newTurn = async () => {
      const last = (await renders()).at(-1);
      return last?.detail?.timeline.turns[0]?.turn_instance_id === 'T-live' ? last : undefined;
    };
    // The watcher first; in the full suite run (after other suites replaced runtime folders) code-server's
    // watcher sometimes misses the write, as the first test says: then one explicit reload, and the open panel
    // must follow the model without a reopen.
    const live = await waitFor(newTurn, 'the new turn in the timeline', 10_000).catch(async () => {
      await vscode.commands.executeCommand('loopx.refresh');
      return waitFor(newTurn, 'the new turn in the timeline after a reload');
    });
    assert.equal(live.detail?.timeline.turns[0]?.events[0]?.kind, 'quota_should_run');
  });
});
