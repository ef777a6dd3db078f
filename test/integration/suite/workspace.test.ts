import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { waitFor } from '../../support/waitFor';
import { workspaceDir } from '../../support/extensionHost';

interface GoalsApi {
  getGoals(): { goalId: string }[];
  onDidChangeGoals: vscode.Event<unknown>;
}

describe('LoopX reacts to the files on disk (real VS Code host)', () => {
  let api: GoalsApi;
  const registryPath = (): string => join(workspaceDir(), '.loopx', 'registry.json');

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    api = (await extension.activate()) as GoalsApi;
  });

  it('creates a goal through the palette command: registry entry, state file, and the view model updates', async () => {
    await vscode.commands.executeCommand('loopx.createGoal', {
      goalId: 'second-goal',
      objective: 'Check that goals can be created from the editor.',
    });
    const registry = JSON.parse(readFileSync(registryPath(), 'utf8')) as {
      goals: { id: string; display_name?: string }[];
    };
    assert.deepEqual(
      registry.goals.map((g) => g.id),
      ['tidy-notes', 'second-goal'],
    );
    assert.equal(registry.goals[0]?.display_name, 'Tidy the notes folder', 'the existing goal is untouched');
    const state = readFileSync(join(workspaceDir(), '.codex', 'goals', 'second-goal', 'ACTIVE_GOAL_STATE.md'), 'utf8');
    assert.match(state, /objective: "Check that goals can be created from the editor\."/);
    await waitFor(
      () => (api.getGoals().some((g) => g.goalId === 'second-goal') ? true : undefined),
      'the new goal in the API',
    );
  });

  it('configures a goal from the palette: previewed, applied with { confirmed: true }, and a no-op writes nothing', async () => {
    await vscode.commands.executeCommand('loopx.configureGoal', {
      goalId: 'tidy-notes',
      quotaCompute: 0.25,
      confirmed: true,
    });
    const written = readFileSync(registryPath(), 'utf8');
    const goal = (JSON.parse(written) as { goals: { id: string; quota: { compute: number; window_hours: number } }[] })
      .goals[0];
    assert.equal(goal?.id, 'tidy-notes');
    assert.equal(goal?.quota.compute, 0.25);
    assert.equal(goal?.quota.window_hours, 24, 'the other quota fields are kept');
    await vscode.commands.executeCommand('loopx.configureGoal', {
      goalId: 'tidy-notes',
      quotaCompute: 0.25,
      confirmed: true,
    });
    assert.equal(readFileSync(registryPath(), 'utf8'), written, 'nothing to apply: the registry is not rewritten');
  });

  it('reports a malformed registry in the Problems panel, keeps the file untouched, and recovers when it is fixed', async () => {
    const original = readFileSync(registryPath(), 'utf8');
    const broken = original.replace('"goals": [', '"goals": [,');
    writeFileSync(registryPath(), broken);
    try {
      const uri = vscode.Uri.file(registryPath());
      const diagnostics = await waitFor(() => {
        const found = vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'LoopX');
        return found.length > 0 ? found : undefined;
      }, 'a LoopX diagnostic on the registry');
      assert.match(diagnostics[0]?.message ?? '', /registry\.json:\d+:\d+: the registry is not valid JSON/);
      assert.equal(readFileSync(registryPath(), 'utf8'), broken, 'LoopX never rewrites a file it could not parse');
    } finally {
      writeFileSync(registryPath(), original);
    }
    await waitFor(
      () =>
        vscode.languages.getDiagnostics(vscode.Uri.file(registryPath())).some((d) => d.source === 'LoopX')
          ? undefined
          : true,
      'the diagnostic to clear',
    );
    await waitFor(
      () => (api.getGoals().some((g) => g.goalId === 'tidy-notes') ? true : undefined),
      'goals to come back',
    );
  });
});
