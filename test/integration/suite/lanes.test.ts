import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import type { TreeSnapshotNode } from '../../../src/views/treeSnapshot';
import { backUpWorkspace } from './workspaceBackup';
import { waitFor } from '../../support/waitFor';
import { loopxJson } from '../../support/extensionHost';

/** A lane turn runs git and the demo agent: the slowest thing these suites wait for. */
const LANE_WAIT_MS = 90_000;

interface LaneDecorationsSnapshot {
  files: { file: string; agents: string[]; badge: string | null }[];
  banners: number;
}

const GATE = /Review and merge lane loopx\/tidy-notes\/demo/;

async function needsYou(): Promise<string[]> {
  await vscode.commands.executeCommand('loopx.refresh');
  const goals = await vscode.commands.executeCommand<TreeSnapshotNode[]>('_loopx.treeSnapshot', 'goals', 3);
  const goal = goals.find((g) => g.children.some((c) => c.label === 'Needs you')) ?? goals[0];
  return goal?.children.find((c) => c.label === 'Needs you')?.children.map((c) => c.label) ?? [];
}

/**
 * Lanes in a real host (docs/lanes.md): the demo agent configured `isolation: worktree` runs a turn
 * through the CLI in another process; its lane's changed file carries the `L` decoration, the merge
 * gate appears in Needs you, and Merge Lane (approved) brings the lane's commit, with its
 * `LoopX-Turn` trailer, into main.
 */
describe('Lanes (real VS Code host)', function () {
  this.timeout(240_000);
  let folder = '';
  let restore: () => void = () => undefined;
  const git = (...args: string[]): string =>
    execFileSync('git', args, {
      cwd: folder,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@e',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@e',
      },
    }).trim();
  const loopx = (...args: string[]) => loopxJson(args, folder);

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
    assert.ok(folder);
    restore = backUpWorkspace(folder);
    writeFileSync(join(folder, '.gitignore'), '.loopx/runtime/\n');
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'the demo as committed');
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    // The lanes live under .loopx/runtime/lanes: the restore takes them away with the runtime.
    restore();
    rmSync(join(folder, '.git'), { recursive: true, force: true });
    rmSync(join(folder, '.gitignore'), { force: true });
    await vscode.commands.executeCommand('loopx.refresh');
  });

  it('a CLI turn in a worktree lane decorates its file and opens the merge gate; Merge Lane brings its commit into main', async () => {
    const configured = loopx(
      'agent',
      'configure',
      '--goal-id',
      'tidy-notes',
      '--agent-id',
      'demo',
      '--preset',
      'demo',
      '--isolation',
      'worktree',
      '--execute',
    );
    assert.equal(configured['ok'], true, JSON.stringify(configured));
    const mainHead = git('rev-parse', 'HEAD');
    const turn = loopx('turn', 'run-once', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--execute');
    assert.equal(turn['status'], 'committed', JSON.stringify(turn));
    assert.equal(git('rev-parse', 'HEAD'), mainHead, 'the turn committed on its lane, not on main');
    const laneFiles = git('diff', '--name-only', 'main...loopx/tidy-notes/demo').split('\n');
    assert.ok(laneFiles.length > 0 && laneFiles[0] !== '', 'the lane has a commit main lacks');

    // Before the merge: the lane's changed file carries the lane decoration.
    const decorated = await waitFor(
      async () => {
        const snap = await vscode.commands.executeCommand<LaneDecorationsSnapshot>('_loopx.laneDecorations');
        return snap.files.find((f) => laneFiles.some((rel) => f.file === join(folder, rel)) && f.badge === 'L');
      },
      'the decoration of a file the lane changes',
      LANE_WAIT_MS,
    );
    assert.deepEqual(decorated.agents, ['demo']);

    // The merge gate in Needs you.
    const gate = await waitFor(
      async () => (await needsYou()).find((label) => GATE.test(label)),
      'the merge gate',
      LANE_WAIT_MS,
    );
    assert.match(gate, GATE);

    // Merge Lane, approved: main gets the lane's commit with its trailer; the gate closes.
    const merged = await vscode.commands.executeCommand<{ status?: string }>('loopx.laneMerge', {
      goalId: 'tidy-notes',
      agentId: 'demo',
      confirmed: true,
    });
    assert.equal(merged.status, 'merged', JSON.stringify(merged));
    assert.equal(git('rev-parse', 'main'), git('rev-parse', 'loopx/tidy-notes/demo'), 'fast-forwarded');
    assert.match(git('log', '-1', '--format=%(trailers:key=LoopX-Turn,valueonly)', 'main'), /^tidy-notes:demo:/);
    const file = laneFiles[0] ?? '';
    assert.ok(existsSync(join(folder, file)));
    assert.equal(
      readFileSync(join(folder, file), 'utf8'),
      execFileSync('git', ['show', `main:${file}`], { cwd: folder, encoding: 'utf8' }),
      'the main checkout has the lane’s change',
    );
    await waitFor(
      async () => ((await needsYou()).some((label) => GATE.test(label)) ? undefined : true),
      'the merge gate to close',
      LANE_WAIT_MS,
    );
    await waitFor(
      async () => {
        const snap = await vscode.commands.executeCommand<LaneDecorationsSnapshot>('_loopx.laneDecorations');
        return snap.files.length === 0 ? true : undefined;
      },
      'the decorations to go once merged',
      LANE_WAIT_MS,
    );
  });
});
