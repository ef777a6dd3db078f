import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { waitUntil } from '../../support/waitFor';
import { loopxJson } from '../../support/extensionHost';

interface TurnEnded {
  goalId: string;
  agentId: string | null;
  todoId: string | null;
  classification: string;
}
interface QuotaChanged {
  goalId: string;
  quota: { spent_slots?: number };
}
interface Api {
  onDidEndTurn: vscode.Event<TurnEnded>;
  onDidChangeQuota: vscode.Event<QuotaChanged>;
}

interface LoopResult {
  turn_count: number;
  spend_count: number;
  stop_reason: string;
  skipped_todos: { todo_id: string; reason: string }[];
}

describe('Running the demo goal from the editor (real VS Code host, real agent process)', function () {
  this.timeout(120_000);

  it('"Run Loop" runs the demo agent until the human gate, with spends, evidence and onDidEndTurn events', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    const api = (await extension.activate()) as Api;
    const ended: TurnEnded[] = [];
    const subscription = api.onDidEndTurn((event) => ended.push(event));
    let result: LoopResult;
    try {
      result = (await vscode.commands.executeCommand('loopx.turnLoop', {
        goalId: 'tidy-notes',
        agentIds: ['demo'],
        confirmed: true,
      })) as LoopResult;
      await waitUntil(() => ended.length >= 2, 'two onDidEndTurn events');
    } finally {
      subscription.dispose();
    }
    assert.ok(result, 'the command returned no result (it failed: see the LoopX log)');
    assert.equal(result.turn_count, 2);
    assert.equal(result.spend_count, 2);
    assert.equal(result.stop_reason, 'user_action');
    assert.ok(
      result.skipped_todos.some((s) => s.todo_id === 'todo_links'),
      'todo_links is claimed by codex-main and must be skipped',
    );
    assert.deepEqual(
      ended.map((e) => e.todoId),
      ['todo_related', 'todo_index'],
    );
    assert.ok(ended.every((e) => e.goalId === 'tidy-notes' && e.agentId === 'demo'));

    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
    const state = readFileSync(join(folder, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md'), 'utf8');
    assert.match(state, /- \[x\] \[P1\] Add a "Related" section linking notes that share a tag\./);
    assert.match(state, /- \[x\] \[P1\] Write notes\/index\.md listing every note by tag\./);
    assert.match(state, /- \[ \] \[P3\] Publish the knowledge base to the team wiki\./, 'the gated todo stays open');
    assert.match(
      readFileSync(join(folder, 'notes', 'index.md'), 'utf8'),
      /gardening/i,
      'the demo agent really wrote notes/index.md',
    );
    const index = readFileSync(join(folder, '.loopx', 'runtime', 'goals', 'tidy-notes', 'runs', 'index.jsonl'), 'utf8');
    assert.equal(
      index.split('\n').filter((line) => line.includes('"quota_slot_spent"')).length,
      3,
      'the demo history had one spend; the loop adds two',
    );
  });

  it('a turn recorded by the CLI in another process fires onDidEndTurn and onDidChangeQuota', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    const api = (await extension.activate()) as Api;
    const ended: TurnEnded[] = [];
    const quota: QuotaChanged[] = [];
    const subscriptions = [
      api.onDidEndTurn((event) => ended.push(event)),
      api.onDidChangeQuota((event) => quota.push(event)),
    ];
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
    // An agent driven by its own scheduler: records its turn, then settles its slot.
    const cli = (...args: string[]) => loopxJson(args, folder);
    try {
      const turn = ['--goal-id', 'tidy-notes', '--agent-id', 'codex-main', '--todo-id', 'todo_links'];
      cli('refresh-state', ...turn, '--classification', 'validated_progress');
      cli('quota', 'spend-slot', ...turn, '--turn-instance-id', 'cli-turn-1', '--execute');
      await waitUntil(() => ended.some((e) => e.agentId === 'codex-main'), 'onDidEndTurn for the CLI turn');
      await waitUntil(() => quota.some((q) => q.goalId === 'tidy-notes'), 'onDidChangeQuota for the CLI spend');
    } finally {
      for (const subscription of subscriptions) subscription.dispose();
    }
    const turnEvent = ended.find((e) => e.agentId === 'codex-main');
    assert.equal(turnEvent?.todoId, 'todo_links');
    assert.equal(turnEvent?.classification, 'validated_progress');
  });
});
