import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { waitFor } from '../../support/waitFor';
import { loopxJson, workspaceDir } from '../../support/extensionHost';

interface Shown {
  kind: string;
  message: string;
  buttons: string[];
}

interface SnapshotNode {
  label: string;
  description?: string;
  contextValue?: string;
}

/**
 * VS Code 1.90 (the oldest-vscode tier) can miss a file event after earlier suites replaced folders under the
 * workspace: after 10 s without an answer the probe reloads once, as Refresh would. A current host
 * answers from its watcher well before that.
 */
function withWatcherFallback<T>(probe: () => Promise<T | undefined>): () => Promise<T | undefined> {
  const started = Date.now();
  let reloaded = false;
  return async () => {
    if (!reloaded && Date.now() - started > 10_000) {
      reloaded = true;
      await vscode.commands.executeCommand('loopx.refresh');
    }
    return probe();
  };
}

/** Our CLI in another process (as an agent or a script runs it). */
function cli(...args: string[]): Record<string, unknown> {
  return loopxJson(args);
}

/**
 * Notifications and the Gate Inbox on the real host (docs/review.md): a gate opened by the CLI in another process is
 * announced with its buttons, what this window did itself is not, and the inbox lists every open gate longest
 * blocked first. The state file is restored afterwards.
 */
describe('Gate inbox and notifications (real VS Code host)', function () {
  this.timeout(120_000);
  const statePath = () => join(workspaceDir(), '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md');
  let saved = '';
  const shown: Shown[] = [];
  const take = async (): Promise<Shown[]> => {
    shown.push(...((await vscode.commands.executeCommand('_loopx.takeNotifications')) as Shown[]));
    return shown;
  };

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    saved = readFileSync(statePath(), 'utf8');
    await vscode.commands.executeCommand('loopx.refresh');
    await vscode.commands.executeCommand('_loopx.gateInboxSnapshot');
    await vscode.commands.executeCommand('_loopx.takeNotifications');
  });

  after(async () => {
    writeFileSync(statePath(), saved);
    await vscode.commands.executeCommand('loopx.refresh');
  });

  it('a gate opened by the CLI in another process is announced once, with Approve, Reject and Open', async () => {
    const added = cli(
      'todo',
      'add',
      '--goal-id',
      'tidy-notes',
      '--role',
      'user',
      '--text',
      'Approve the deploy window',
      '--unblocks-todo-id',
      'todo_links',
      // The demo goal has two agents: a user gate names the lane it blocks (the original's rule).
      '--blocks-agent',
      'codex-main',
    );
    const gateId = String(added['todo_id']);
    const notice = await waitFor(
      async () =>
        (await take()).find((n) => n.kind === 'gate_opened' && n.message.includes('Approve the deploy window')),
      'the gate_opened notification',
    );
    assert.deepEqual(notice.buttons, ['Approve', 'Reject', 'Open']);
    assert.match(notice.message, /tidy-notes/);
    assert.ok(gateId.startsWith('todo_'));
  });

  it("this window's own action is not announced; the same kind from another process is", async () => {
    const inbox = (await vscode.commands.executeCommand('_loopx.gateInboxSnapshot')) as SnapshotNode[];
    assert.ok(
      inbox.some((n) => n.label === 'Approve the deploy window'),
      JSON.stringify(inbox),
    );
    shown.length = 0;
    // From this window: a due time in the past on the demo's gate (overdue at once, by our own hand).
    await vscode.commands.executeCommand('loopx.gateSetDue', {
      goalId: 'tidy-notes',
      todoId: 'todo_gate_publish',
      dueAt: '2026-01-01T00:00:00Z',
    });
    // From another process: the same on the CLI's gate.
    const listed = cli('todo', 'list', '--goal-id', 'tidy-notes', '--role', 'user');
    const other = (listed['open_gates'] as { todo_id: string; title: string }[]).find(
      (g) => g.title === 'Approve the deploy window',
    );
    assert.ok(other);
    cli('gate', 'set-due', '--goal-id', 'tidy-notes', '--todo-id', other.todo_id, '--due-at', '2026-01-02T00:00:00Z');
    await waitFor(
      withWatcherFallback(async () =>
        (await take()).find((n) => n.kind === 'gate_overdue' && n.message.includes('Approve the deploy window')),
      ),
      "the other process's overdue gate",
    );
    assert.deepEqual(
      shown.filter((n) => n.message.includes('Approve publishing')),
      [],
      'no notification for the due time this window set',
    );
    // Escalation: the status bar item shows the overdue gates.
    const bar = await waitFor(async () => {
      const snapshot = (await vscode.commands.executeCommand('_loopx.quotaIndicator.snapshot')) as { text: string };
      return snapshot.text.includes('2 overdue') ? snapshot : undefined;
    }, 'the status bar to show 2 overdue gates');
    assert.match(bar.text, /\$\(bell-dot\) 2 overdue/);
  });

  it('the inbox lists every open gate, longest blocked first (the open time unknown last), with a badge count', async () => {
    // Two gates written by hand with their times (another tool, a teammate's editor).
    const withGates = readFileSync(statePath(), 'utf8').replace(
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
    );
    assert.match(withGates, /todo_gate_older/);
    writeFileSync(statePath(), withGates);
    const labels = await waitFor(
      withWatcherFallback(async () => {
        const nodes = (await vscode.commands.executeCommand('_loopx.gateInboxSnapshot')) as SnapshotNode[];
        return nodes.length === 4 ? nodes : undefined;
      }),
      'four gates in the inbox',
    );
    assert.deepEqual(
      labels.map((n) => n.label),
      [
        'Approve the older contract.',
        'Approve the newer budget.',
        'Approve the deploy window',
        'Approve publishing the knowledge base to the team wiki.',
      ],
    );
    assert.match(labels[2]?.description ?? '', /overdue since 2026-01-02T00:00:00Z/);
    assert.ok(
      labels.every((n) => n.contextValue?.startsWith('gate.open')),
      'gate menus apply to inbox rows',
    );
  });
});
