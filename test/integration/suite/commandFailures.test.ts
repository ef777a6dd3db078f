import assert from 'node:assert/strict';
import * as vscode from 'vscode';

/**
 * Root hook for the whole development suite: the palette command wrapper turns a failure into a
 * notification and resolves with undefined, so a test whose command failed would still pass. After
 * every test, the failures LoopX recorded (`_loopx.takeCommandFailures`) must be none.
 */
afterEach(async function () {
  const failures = (await vscode.commands.executeCommand<unknown[]>('_loopx.takeCommandFailures')) ?? [];
  if (failures.length > 0)
    throw new Error(
      `LoopX command(s) failed during "${this.currentTest?.fullTitle() ?? '?'}": ${JSON.stringify(failures)}`,
    );
});

describe('command failures are observable', () => {
  it('a failing command is recorded by _loopx.takeCommandFailures (and the root hook clears it)', async () => {
    const result = await vscode.commands.executeCommand('loopx.createGoal', {
      goalId: 'Not A Valid Id!',
      objective: 'x',
    });
    assert.equal(result, undefined);
    const failures =
      (await vscode.commands.executeCommand<{ command: string; kind: string }[]>('_loopx.takeCommandFailures')) ?? [];
    assert.deepEqual(
      failures.map((f) => [f.command, f.kind]),
      [['loopx.createGoal', 'failed']],
    );
  });
});
