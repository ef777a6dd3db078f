import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import type { TreeSnapshotNode } from '../../../src/views/treeSnapshot';
import { workspaceDir } from '../../support/extensionHost';

interface Failure {
  command: string;
  kind: string;
  message: string;
}

interface Finding {
  id: string;
  level: string;
  message: string;
}

const agentsView = async (): Promise<TreeSnapshotNode[]> =>
  (await vscode.commands.executeCommand<TreeSnapshotNode[]>('_loopx.treeSnapshot', 'agents', 2)) ?? [];

/**
 * Agent setup without JSON, in the real extension host: "Configure Agent…" run from an Agents view
 * node (the node object the view hands its context menu) and from code, "Remove Agent…" from a node,
 * and "LoopX: Doctor". Each is checked on disk and in the rendered Agents view. The registry is
 * restored afterwards: the suites after this one expect the demo workspace as committed.
 */
describe('Agent setup: Configure Agent, Remove Agent and Doctor (real VS Code host)', function () {
  this.timeout(60_000);
  const registryPath = () => join(workspaceDir(), '.loopx', 'registry.json');
  let savedRegistry = '';
  const profiles = () =>
    (
      JSON.parse(readFileSync(registryPath(), 'utf8')) as {
        goals: { coordination: { registered_agents: string[]; agent_profiles?: Record<string, unknown> } }[];
      }
    ).goals[0]?.coordination;
  /** What the Agents view hands a context-menu command: its `{ kind: 'agent', agent }` node. */
  const agentNode = (agentId: string) => ({
    kind: 'agent',
    agent: {
      agentId,
      goals: [{ goalId: 'tidy-notes', displayName: 'Tidy the notes folder', registryPath: registryPath() }],
    },
  });

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    savedRegistry = readFileSync(registryPath(), 'utf8');
    await vscode.commands.executeCommand('_loopx.takeCommandFailures');
  });

  after(async () => {
    writeFileSync(registryPath(), savedRegistry);
    await vscode.commands.executeCommand('loopx.refresh');
  });

  afterEach(async () => {
    const failures = (await vscode.commands.executeCommand('_loopx.takeCommandFailures')) as Failure[];
    assert.deepEqual(failures, [], 'no command failed');
  });

  it('Configure on an Agents view node gives the agent an executor, and the view shows it', async () => {
    const before = await agentsView();
    assert.equal(before.find((a) => a.label === 'codex-main')?.children[0]?.label, 'no executor configured');
    await vscode.commands.executeCommand('loopx.configureAgent', {
      ...agentNode('codex-main'),
      preset: 'codex',
      model: 'gpt-5-codex',
      permissionMode: 'workspace-write',
      confirmed: true,
    });
    assert.deepEqual(profiles()?.agent_profiles?.['codex-main'], {
      executor: { preset: 'codex', args: ['--model', 'gpt-5-codex', '--sandbox', 'workspace-write'] },
    });
    const after = await agentsView();
    assert.equal(after.find((a) => a.label === 'codex-main')?.children[0]?.label, 'executor: codex');
  });

  it('Configure Agent from code registers a new agent with its executor in one step', async () => {
    await vscode.commands.executeCommand('loopx.configureAgent', {
      goalId: 'tidy-notes',
      agentId: 'helper',
      preset: 'demo',
      confirmed: true,
    });
    assert.ok(profiles()?.registered_agents.includes('helper'));
    const helper = (await agentsView()).find((a) => a.label === 'helper');
    assert.ok(helper, 'the new agent is in the Agents view');
    assert.equal(helper.contextValue, 'agent', 'its node carries the agent actions');
    assert.equal(helper.children[0]?.label, 'executor: demo');
  });

  it('Remove on an Agents view node takes the agent off the goal', async () => {
    await vscode.commands.executeCommand('loopx.removeAgent', { ...agentNode('helper'), confirmed: true });
    assert.ok(!profiles()?.registered_agents.includes('helper'));
    assert.equal(profiles()?.agent_profiles?.['helper'], undefined);
    assert.equal(
      (await agentsView()).find((a) => a.label === 'helper'),
      undefined,
      'the agent left the Agents view',
    );
  });

  it("LoopX: Doctor reports the files, each agent's executor and the editor's own findings", async () => {
    const results = (await vscode.commands.executeCommand('loopx.doctor')) as {
      ok: boolean;
      checks: Finding[];
    }[];
    assert.equal(results.length, 1);
    const ids = new Map(results[0]?.checks.map((c) => [c.id, c]));
    assert.equal(ids.get('registry_parses')?.level, 'ok');
    assert.equal(ids.get('agent.tidy-notes.demo.executor')?.level, 'ok');
    assert.equal(ids.get('workspace_trust')?.level, 'ok');
    assert.ok(ids.has('language_models'), 'the editor reports its language models');
    assert.ok(ids.has('status_server_port'));
    // codex-main's executor (configured above) names a codex CLI this host does not have.
    assert.equal(ids.get('agent.tidy-notes.codex-main.binary')?.level, 'error');
    assert.equal(results[0]?.ok, false);
  });
});
