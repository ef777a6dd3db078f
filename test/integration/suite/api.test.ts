import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { LoopxExtensionApi, LoopxGoal } from '../../../src/api/types';
import { LOOPX_EXTENSION_ID } from '../../../src/api/types';

describe('LoopX extension API, as another extension reads it', () => {
  let api: LoopxExtensionApi;

  before(async () => {
    const extension = vscode.extensions.getExtension<LoopxExtensionApi>(LOOPX_EXTENSION_ID);
    assert.ok(extension, `${LOOPX_EXTENSION_ID} is not installed in this host`);
    await extension.activate();
    api = extension.exports;
  });

  it('is versioned', () => {
    assert.equal(api.apiVersion, 1);
    assert.equal(typeof api.version, 'string');
  });

  it("lists the demo workspace's goal tidy-notes with its agents", () => {
    const goal = api.getGoals().find((g) => g.goalId === 'tidy-notes');
    assert.ok(goal, `goals: ${JSON.stringify(api.getGoals().map((g) => g.goalId))}`);
    assert.deepEqual(goal.agents, ['demo', 'codex-main']);
    assert.equal(api.getQuota('tidy-notes')?.allowed_slots, 24);
  });

  it("reads the goal's todos and gates", async () => {
    const todos = await api.getTodos('tidy-notes', { role: 'agent' });
    assert.ok(todos.todos.some((t) => t.todo_id === 'todo_related'));
    const gates = await api.getGates('tidy-notes');
    assert.deepEqual(
      gates.open_gates.map((g) => g.todo_id),
      ['todo_gate_publish'],
    );
  });

  it("reads the goal's status from the editor's live status model", async () => {
    const status = await api.getGoalStatus('tidy-notes');
    assert.equal(status.goal.goalId, 'tidy-notes');
    assert.equal(status.state?.open_gate_count, 1);
    assert.ok((status.state?.todos.agent.open_count ?? 0) > 0, JSON.stringify(status.state?.todos));
    assert.ok(status.runs.count > 0);
    assert.notEqual(
      status.runs.latest_status_run?.classification,
      'quota_slot_spent',
      'bookkeeping does not speak for the goal',
    );
    await assert.rejects(
      api.getGoalStatus('nope'),
      (error: unknown) => (error as { code?: string }).code === 'goal_not_found',
    );
  });

  it('fires onDidChangeGoals when LoopX reloads', async () => {
    const fired = new Promise<readonly LoopxGoal[]>((resolve) => {
      const subscription = api.onDidChangeGoals((goals) => {
        subscription.dispose();
        resolve(goals);
      });
    });
    await vscode.commands.executeCommand('loopx.refresh');
    assert.ok((await fired).some((g) => g.goalId === 'tidy-notes'));
  });
});
