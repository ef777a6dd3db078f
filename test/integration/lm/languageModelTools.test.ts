import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { configureGoal } from '../../../src/core/ops/configureGoal';
import { createGoal } from '../../../src/core/ops/createGoal';
import { quotaStatus } from '../../../src/core/ops/quota';
import { runOperation } from '../../../src/core/ops/run';
import { editorEnvironment } from '../../../src/commands/operationRunner';
import { LM_TOOL_SPECS } from '../../../src/lm/toolSpecs';

/**
 * LoopX's language-model tools and MCP server definitions in the real host (VS Code 1.139 with chat on):
 * `vscode.lm.tools` lists them, `vscode.lm.invokeTool` runs a heartbeat turn through them (guard →
 * record → spend, replayed on retry), a write is prepared with a confirmation naming the goal, the todo
 * and the amount (the test host answers dialogs itself), and the MCP provider offers the folder's server.
 */

interface ToolInfo {
  name: string;
  tags: readonly string[];
  inputSchema: unknown;
}
interface TextPart {
  value: string;
}
interface NewerLm {
  tools: readonly ToolInfo[];
  invokeTool(
    name: string,
    options: { input: object; toolInvocationToken: undefined },
  ): Thenable<{ content: unknown[] }>;
  registerMcpServerDefinitionProvider?: unknown;
}
type ToolEvent =
  | { tool: string; phase: 'prepare'; confirmation: { title: string; message: string } | null }
  | { tool: string; phase: 'invoke' };
interface McpDefinition {
  label: string;
  command: string;
  args: string[];
  env: Record<string, string>;
}

const lm = (): NewerLm => vscode.lm as unknown as NewerLm;
const root = (): string => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
const registryPath = (): string => join(root(), '.loopx', 'registry.json');

/** Runs a tool: its short line and the JSON the CLI prints. */
async function invoke(name: string, input: object): Promise<{ summary: string; json: Record<string, unknown> }> {
  const result = await lm().invokeTool(name, { input, toolInvocationToken: undefined });
  const texts = result.content.map((part) => (part as TextPart).value);
  assert.equal(texts.length, 2, JSON.stringify(texts));
  return { summary: texts[0] ?? '', json: JSON.parse(texts[1] ?? '{}') as Record<string, unknown> };
}

const takeEvents = async (): Promise<ToolEvent[]> =>
  (await vscode.commands.executeCommand<ToolEvent[]>('_loopx.takeToolEvents')) ?? [];

/** A goal of its own, so the other suites' turns on tidy-notes do not decide whether this one may run. */
const GOAL = 'lm-tools';

async function spentSlots(): Promise<number> {
  return (await runOperation(quotaStatus, { goalId: GOAL }, editorEnvironment(registryPath()))).spent_slots;
}

describe('LoopX language-model tools and MCP servers (real VS Code host)', function () {
  this.timeout(90_000);

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    const env = editorEnvironment(registryPath());
    const created = await runOperation(
      createGoal,
      { goalId: GOAL, objective: 'Exercise the LoopX tools.', todo: ['Write the tools note'] },
      env,
    );
    assert.equal(created.ok, true, JSON.stringify(created));
    await runOperation(configureGoal, { goalId: GOAL, registeredAgent: ['demo'] }, env, 'apply');
    await vscode.commands.executeCommand('loopx.refresh');
    await takeEvents();
  });

  it('vscode.lm.tools lists every LoopX tool, tagged, with its input schema', () => {
    const ours = lm().tools.filter((tool) => tool.tags.includes('loopx'));
    assert.deepEqual(ours.map((tool) => tool.name).sort(), LM_TOOL_SPECS.map((spec) => spec.name).sort());
    const shouldRun = ours.find((tool) => tool.name === 'loopx_should_run');
    assert.deepEqual((shouldRun?.inputSchema as { required?: string[] }).required, ['goalId']);
  });

  it('runs a heartbeat turn through the tools: should-run binds the turn, the delivery is recorded, the slot spent once', async () => {
    const turn = 'lm-tools-turn-1';
    const before = await spentSlots();
    const guard = await invoke('loopx_should_run', { goalId: GOAL, agentId: 'demo', turnInstanceId: turn });
    assert.equal(guard.json['ok'], true, JSON.stringify(guard.json));
    assert.equal(guard.json['should_run'], true, String(guard.json['reason']));
    const receipt = guard.json['heartbeat_receipt'] as { todo_id: string; replayed: boolean };
    assert.equal(receipt.replayed, false);
    assert.match(guard.summary, new RegExp(`^should_run: ok=true, should_run=true.*selected_todo=${receipt.todo_id}`));
    // A retry of the same turn replays its receipt.
    const again = await invoke('loopx_should_run', { goalId: GOAL, agentId: 'demo', turnInstanceId: turn });
    assert.equal((again.json['heartbeat_receipt'] as { replayed: boolean }).replayed, true);

    const delivery = await invoke('loopx_refresh_state', {
      goalId: GOAL,
      agentId: 'demo',
      turnInstanceId: turn,
      classification: 'validated_progress',
    });
    assert.equal(delivery.json['goal_id'], GOAL, JSON.stringify(delivery.json));
    assert.notEqual(delivery.json['ok'], false);

    // As over MCP, spend_slot previews unless execute is true: a preview writes nothing and asks nothing.
    const preview = await invoke('loopx_spend_slot', { goalId: GOAL, agentId: 'demo', turnInstanceId: turn });
    assert.equal(preview.json['dry_run'], true, JSON.stringify(preview.json));
    assert.equal(await spentSlots(), before);
    const spend = await invoke('loopx_spend_slot', {
      goalId: GOAL,
      agentId: 'demo',
      turnInstanceId: turn,
      execute: true,
    });
    assert.equal(spend.json['appended'], true, JSON.stringify(spend.json));
    assert.equal(spend.json['todo_id'], receipt.todo_id, 'the spend is settled on the todo the receipt binds');
    assert.equal(await spentSlots(), before + 1);
    const replay = await invoke('loopx_spend_slot', {
      goalId: GOAL,
      agentId: 'demo',
      turnInstanceId: turn,
      execute: true,
    });
    assert.equal(replay.json['idempotent_replay'], true);
    assert.match(replay.summary, /idempotent_replay=true/);
    assert.equal(await spentSlots(), before + 1, 'a retried spend writes nothing');

    // Each write was prepared with a confirmation that names the goal, the todo or turn, and the amount.
    const events = await takeEvents();
    const spendPrepared = events.filter((event) => event.phase === 'prepare' && event.tool === 'loopx_spend_slot');
    assert.equal(
      spendPrepared[0]?.phase === 'prepare' && spendPrepared[0].confirmation,
      null,
      'a preview asks nothing',
    );
    const spendConfirmation = spendPrepared[1];
    assert.ok(spendConfirmation?.phase === 'prepare' && spendConfirmation.confirmation, JSON.stringify(events));
    assert.equal(spendConfirmation.confirmation.title, 'Spend LoopX quota?');
    assert.match(
      spendConfirmation.confirmation.message,
      /Spend 1 slot\(s\) of goal lm-tools \(agent demo, turn lm-tools-turn-1\)/,
    );
    const readPrepared = events.find((event) => event.phase === 'prepare' && event.tool === 'loopx_should_run');
    assert.ok(readPrepared?.phase === 'prepare' && readPrepared.confirmation === null, 'reads ask nothing');
    assert.deepEqual(
      events.filter((event) => event.phase === 'invoke').map((event) => event.tool),
      [
        'loopx_should_run',
        'loopx_should_run',
        'loopx_refresh_state',
        'loopx_spend_slot',
        'loopx_spend_slot',
        'loopx_spend_slot',
      ],
    );
  });

  it('a bad call answers the CLI JSON failure naming the field; a human decision is not a tool argument', async () => {
    const missing = await invoke('loopx_todo_complete', { goalId: 'tidy-notes' });
    assert.equal(missing.json['ok'], false);
    assert.equal(missing.json['error_code'], 'invalid_argument');
    assert.match(String(missing.json['error']), /todoId/);
    const gate = await invoke('loopx_todo_complete', {
      goalId: 'tidy-notes',
      todoId: 'gate_publish',
      decisionOutcome: 'approve',
    });
    assert.equal(gate.json['error_code'], 'invalid_argument');
    assert.match(String(gate.json['error']), /decisionOutcome/);
    const unknownGoal = await invoke('loopx_heartbeat_prompt', { goalId: 'no-such-goal', agentId: 'demo' });
    assert.equal(unknownGoal.json['ok'], false);
    assert.match(unknownGoal.summary, /^loopx_heartbeat_prompt failed: goal_not_found/);
  });

  it('the MCP provider offers one stdio server for the LoopX folder: this extension’s CLI, mcp --project-root <folder>', async () => {
    assert.equal(typeof lm().registerMcpServerDefinitionProvider, 'function', 'this host has MCP providers');
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    const contributed = (extension?.packageJSON as { contributes: { mcpServerDefinitionProviders: { id: string }[] } })
      .contributes.mcpServerDefinitionProviders;
    assert.deepEqual(
      contributed.map((provider) => provider.id),
      ['loopx.mcpServers'],
    );
    const definitions = (await vscode.commands.executeCommand<McpDefinition[]>('_loopx.mcpServerDefinitions')) ?? [];
    assert.equal(definitions.length, 1, JSON.stringify(definitions));
    const [server] = definitions;
    assert.ok(server);
    assert.equal(server.command, process.execPath);
    assert.deepEqual(server.args, [
      join(extension?.extensionPath ?? '', 'out', 'cli.js'),
      'mcp',
      '--project-root',
      root(),
    ]);
    assert.ok(existsSync(server.args[0] ?? ''), 'the CLI the server runs is built');
  });
});
