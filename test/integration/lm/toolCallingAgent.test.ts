import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { configureGoal } from '../../../src/core/ops/configureGoal';
import { createGoal } from '../../../src/core/ops/createGoal';
import { runOperation } from '../../../src/core/ops/run';
import { todoAdd, todoComplete, todoList } from '../../../src/core/ops/todo';
import { editorEnvironment } from '../../../src/commands/operationRunner';
import { boundTodo, goalAfterTurn, normalised, runCliTurn, type Json, type TurnSteps } from './heartbeatParity';

/**
 * A Copilot-style agent turn in the real host: a language model (the test extension's provider, scenario
 * 'tools') is offered LoopX's language-model tools and answers with tool calls; this test is the agent host's
 * loop (as a chat participant runs one): send the conversation with the tools, run each call with
 * `vscode.lm.invokeTool`, hand the results back, until the model answers in text. The model runs a governed
 * heartbeat (should_run → todo_complete → refresh_state → spend_slot), and the step answers, the quota, the
 * receipt and the todos come out exactly as the same turn through the `loopx` CLI on a twin goal.
 */

interface Provider {
  setScenario(name: string): void;
}
interface ToolCallPart {
  callId: string;
  name: string;
  input: object;
}
interface ToolInfo {
  name: string;
  tags: readonly string[];
}
/** The parts of the lm API newer than the @types/vscode this extension is built against. */
interface NewerApi {
  LanguageModelToolCallPart: new (callId: string, name: string, input: object) => ToolCallPart;
  LanguageModelToolResultPart: new (callId: string, content: unknown[]) => object;
  LanguageModelTextPart: new (value: string) => { value: string };
  LanguageModelChatMessage: {
    User(content: string | object[]): vscode.LanguageModelChatMessage;
    Assistant(content: string | object[]): vscode.LanguageModelChatMessage;
  };
  lm: {
    tools: readonly ToolInfo[];
    invokeTool(
      name: string,
      options: { input: object; toolInvocationToken: undefined },
    ): Thenable<{ content: unknown[] }>;
  };
}
interface ChatModel {
  sendRequest(
    messages: vscode.LanguageModelChatMessage[],
    options: { justification?: string; tools?: readonly ToolInfo[] },
    token?: vscode.CancellationToken,
  ): Thenable<{ stream: AsyncIterable<unknown> }>;
}

const api = vscode as unknown as NewerApi;
const root = (): string => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
const registryPath = (): string => join(root(), '.loopx', 'registry.json');

/** The agent host's loop: what a chat participant in agent mode does with a model that calls tools. */
async function agentTurn(
  model: ChatModel,
  prompt: string,
): Promise<{ calls: { name: string; input: object; json: Json }[]; answer: string }> {
  const tools = api.lm.tools.filter((tool) => tool.tags.includes('loopx'));
  const messages = [api.LanguageModelChatMessage.User(prompt)];
  const calls: { name: string; input: object; json: Json }[] = [];
  for (let round = 0; round < 10; round++) {
    const response = await model.sendRequest(messages, { justification: 'LoopX tool-loop test', tools });
    const requested: ToolCallPart[] = [];
    let answer = '';
    for await (const part of response.stream) {
      if (part instanceof api.LanguageModelToolCallPart) requested.push(part);
      else if (part instanceof api.LanguageModelTextPart) answer += part.value;
    }
    if (requested.length === 0) return { calls, answer };
    messages.push(api.LanguageModelChatMessage.Assistant(requested));
    const results: object[] = [];
    for (const call of requested) {
      const result = await api.lm.invokeTool(call.name, { input: call.input, toolInvocationToken: undefined });
      const json = (result.content[1] as { value?: string } | undefined)?.value ?? '{}';
      calls.push({ name: call.name, input: call.input, json: JSON.parse(json) as Json });
      results.push(new api.LanguageModelToolResultPart(call.callId, result.content));
    }
    messages.push(api.LanguageModelChatMessage.User(results));
  }
  assert.fail(`the model did not finish its turn in 10 rounds: ${JSON.stringify(calls.map((call) => call.name))}`);
}

const TOOLS_GOAL = 'copilot-turn';
const CLI_GOAL = 'cli-turn';
// No goal id inside the turn id: normalised() replaces the goal's id wherever it occurs.
const TURN = 'heartbeat-1';
const GATED_TOOLS_GOAL = 'copilot-gated';
const GATED_CLI_GOAL = 'cli-gated';

describe('A Copilot-style agent turn through the language-model tools (real VS Code host)', function () {
  this.timeout(90_000);
  let provider: Provider;
  let model: ChatModel;

  before(async () => {
    const loopx = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(loopx);
    await loopx.activate();
    const env = editorEnvironment(registryPath());
    for (const goalId of [TOOLS_GOAL, CLI_GOAL, GATED_TOOLS_GOAL, GATED_CLI_GOAL]) {
      const created = await runOperation(
        createGoal,
        { goalId, objective: 'Write the tools note.', todo: ['Write the tools note'] },
        env,
      );
      assert.equal(created.ok, true, JSON.stringify(created));
      await runOperation(configureGoal, { goalId, registeredAgent: ['demo'] }, env, 'apply');
    }
    await vscode.commands.executeCommand('loopx.refresh');
    const extension = vscode.extensions.getExtension<Provider>('loopx-tests.loopx-lm-provider');
    assert.ok(extension, 'the test provider extension is not loaded');
    provider = await extension.activate();
    provider.setScenario('tools');
    const [selected] = await vscode.lm.selectChatModels({ vendor: 'loopx-test', family: 'deterministic' });
    assert.ok(selected, 'the test model is not offered');
    model = selected as unknown as ChatModel;
  });

  after(() => provider.setScenario('edit'));

  it('the model calls should_run → todo_complete → refresh_state → spend_slot; quota, receipt and todos are the CLI’s', async () => {
    const env = editorEnvironment(registryPath());
    const turn = await agentTurn(model, `Run one LoopX heartbeat turn: goal=${TOOLS_GOAL} agent=demo turn=${TURN}`);
    assert.deepEqual(
      turn.calls.map((call) => call.name),
      ['loopx_should_run', 'loopx_todo_complete', 'loopx_refresh_state', 'loopx_spend_slot'],
      turn.answer,
    );
    assert.match(turn.answer, /slot spent/);
    const [shouldRun, todoComplete, refreshState, spendSlot] = turn.calls.map((call) => call.json);
    const viaTools: TurnSteps = {
      shouldRun: shouldRun ?? {},
      todoComplete: todoComplete ?? {},
      refreshState: refreshState ?? {},
      spendSlot: spendSlot ?? {},
    };
    assert.equal(viaTools.spendSlot['appended'], true, JSON.stringify(viaTools.spendSlot));
    const toolsTodo = boundTodo(viaTools);
    assert.equal(viaTools.spendSlot['todo_id'], toolsTodo, 'the spend settles the todo the receipt binds');
    const toolsAfter = await goalAfterTurn(env, TOOLS_GOAL);
    assert.equal(toolsAfter.quota['spent_slots'], 1);
    assert.equal(toolsAfter.quota['reserved_slots'], 0);

    // The same turn through the CLI's four processes, on the twin goal: everything but ids and clocks is equal.
    const cliJs = join(vscode.extensions.getExtension(EXTENSION_ID)?.extensionPath ?? '', 'out', 'cli.js');
    const viaCli = runCliTurn(cliJs, registryPath(), CLI_GOAL, TURN);
    const cliAfter = await goalAfterTurn(env, CLI_GOAL);
    const tools = normalised({ ...viaTools, ...toolsAfter }, TOOLS_GOAL, toolsTodo) as Json;
    const cli = normalised({ ...viaCli, ...cliAfter }, CLI_GOAL, boundTodo(viaCli)) as Json;
    for (const key of ['shouldRun', 'todoComplete', 'refreshState', 'spendSlot', 'quota', 'todos'])
      assert.deepEqual(tools[key], cli[key], key);

    // A second agent host retrying the same turn id: should_run replays the turn's receipt (the same event) and,
    // its one todo done with no follow-up, says not now; the model stops there and nothing is spent again.
    const retry = await agentTurn(model, `Run one LoopX heartbeat turn: goal=${TOOLS_GOAL} agent=demo turn=${TURN}`);
    assert.deepEqual(
      retry.calls.map((call) => call.name),
      ['loopx_should_run'],
      retry.answer,
    );
    const replayed = retry.calls[0]?.json ?? {};
    assert.equal(replayed['should_run'], false, JSON.stringify(replayed));
    const receipt = (key: Json): { event_id: string; replayed: boolean } =>
      key['heartbeat_receipt'] as { event_id: string; replayed: boolean };
    assert.equal(receipt(replayed).replayed, true);
    assert.equal(receipt(replayed).event_id, receipt(viaTools.shouldRun).event_id);
    assert.match(retry.answer, /^Not now/);
    assert.equal((await goalAfterTurn(env, TOOLS_GOAL)).quota['spent_slots'], 1, 'a retried turn spends nothing');
  });
  it('an open user gate holds the agent exactly as on the CLI: no tool passes it, the human approves, then the turn runs as the CLI’s', async () => {
    const env = editorEnvironment(registryPath());
    // The human's side (never an agent tool): a user gate holding back each twin goal's one agent todo.
    const gateOf = async (goalId: string): Promise<{ todo: string; gate: string }> => {
      const listed = (await runOperation(todoList, { goalId }, env)) as unknown as { todos: { todo_id: string }[] };
      const todo = listed.todos[0]?.todo_id ?? '';
      const added = (await runOperation(
        todoAdd,
        { goalId, text: 'Approve the tools note', taskClass: 'user_gate', unblocksTodoId: [todo], blocksAgent: 'demo' },
        env,
      )) as unknown as Json;
      assert.equal(added['ok'], true, JSON.stringify(added));
      return { todo, gate: String(added['todo_id']) };
    };
    const toolsIds = await gateOf(GATED_TOOLS_GOAL);
    const cliIds = await gateOf(GATED_CLI_GOAL);
    const cliJs = join(vscode.extensions.getExtension(EXTENSION_ID)?.extensionPath ?? '', 'out', 'cli.js');
    const comparable = (value: unknown, goalId: string, ids: { todo: string; gate: string }): Json =>
      normalised(JSON.parse(JSON.stringify(value).replaceAll(ids.gate, '<gate>')), goalId, ids.todo) as Json;

    // Gated: the model asks should_run, is told not now, and stops: it has no tool that could pass a gate.
    assert.equal(
      api.lm.tools.some((tool) => /gate|approve|decide/.test(tool.name)),
      false,
      'no language-model tool decides a gate',
    );
    const held = await agentTurn(
      model,
      `Run one LoopX heartbeat turn: goal=${GATED_TOOLS_GOAL} agent=demo turn=gated-1`,
    );
    assert.deepEqual(
      held.calls.map((call) => call.name),
      ['loopx_should_run'],
      held.answer,
    );
    assert.match(held.answer, /^Not now/);
    const heldViaTools = held.calls[0]?.json ?? {};
    assert.equal(heldViaTools['should_run'], false, JSON.stringify(heldViaTools));
    const heldViaCli = runCliTurn(cliJs, registryPath(), GATED_CLI_GOAL, 'gated-1').shouldRun;
    assert.deepEqual(
      comparable(heldViaTools, GATED_TOOLS_GOAL, toolsIds),
      comparable(heldViaCli, GATED_CLI_GOAL, cliIds),
      'should_run on a gated goal answers as the CLI',
    );
    for (const goalId of [GATED_TOOLS_GOAL, GATED_CLI_GOAL]) {
      const after = await goalAfterTurn(env, goalId);
      assert.equal(after.quota['spent_slots'], 0, `${goalId}: a held turn spends nothing`);
      assert.equal(after.quota['reserved_slots'], 0, `${goalId}: and holds nothing`);
    }

    // The human approves (the palette's op, as a person); the next turn runs and lands as the CLI's.
    for (const [goalId, ids] of [
      [GATED_TOOLS_GOAL, toolsIds],
      [GATED_CLI_GOAL, cliIds],
    ] as const) {
      const approved = (await runOperation(
        todoComplete,
        { goalId, todoId: ids.gate, decisionOutcome: 'approve', evidence: 'looked at the plan' },
        env,
      )) as unknown as Json;
      assert.equal(approved['ok'], true, JSON.stringify(approved));
    }
    const turn = await agentTurn(
      model,
      `Run one LoopX heartbeat turn: goal=${GATED_TOOLS_GOAL} agent=demo turn=gated-2`,
    );
    assert.deepEqual(
      turn.calls.map((call) => call.name),
      ['loopx_should_run', 'loopx_todo_complete', 'loopx_refresh_state', 'loopx_spend_slot'],
      turn.answer,
    );
    const [shouldRun, todoCompleted, refreshState, spendSlot] = turn.calls.map((call) => call.json);
    const viaTools = {
      shouldRun: shouldRun ?? {},
      todoComplete: todoCompleted ?? {},
      refreshState: refreshState ?? {},
      spendSlot: spendSlot ?? {},
      ...(await goalAfterTurn(env, GATED_TOOLS_GOAL)),
    };
    const viaCli = {
      ...runCliTurn(cliJs, registryPath(), GATED_CLI_GOAL, 'gated-2'),
      ...(await goalAfterTurn(env, GATED_CLI_GOAL)),
    };
    assert.equal(viaTools.quota['spent_slots'], 1);
    const tools = comparable(viaTools, GATED_TOOLS_GOAL, toolsIds);
    const cli = comparable(viaCli, GATED_CLI_GOAL, cliIds);
    for (const key of ['shouldRun', 'todoComplete', 'refreshState', 'spendSlot', 'quota', 'todos'])
      assert.deepEqual(tools[key], cli[key], key);
  });
});
