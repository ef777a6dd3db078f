import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { quotaStatus } from '../../../src/core/ops/quota';
import { status } from '../../../src/core/ops/status';
import { todoList } from '../../../src/core/ops/todo';
import { runOperation } from '../../../src/core/ops/run';
import { turnRunOnce } from '../../../src/core/ops/turn';
import { editorEnvironment } from '../../../src/commands/operationRunner';
import { editorExecutorFactory } from '../../../src/lm/languageModelExecutor';

/**
 * The vscode-lm agent and @loopx against a language model that a test extension (test/integration/lm-provider)
 * registers through VS Code's provider API: the whole path runs in a real extension host.
 */

interface Provider {
  setScenario(name: string): void;
  prompts: string[];
}
interface TurnResult {
  ok: boolean;
  status: string;
  result_kind: string | null;
  message: string;
  failure: { reason?: string; message?: string } | null;
  usage: { estimated: boolean; tokens?: number; minutes: number } | null;
  quota_slot_spend_count: number;
}
interface ChatReply {
  result: { metadata: { command: string | null; refused?: string } };
  parts: { kind: string; value: string; command?: string }[];
}

const root = (): string => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
const registryPath = (): string => join(root(), '.loopx', 'registry.json');
const note = (): string => join(root(), 'notes', 'lm-note.md');
const checker = (): string => join(root(), 'scripts', 'check-notes.js');

let provider: Provider;

async function runLm(agentId = 'lm'): Promise<TurnResult> {
  const result = (await vscode.commands.executeCommand('loopx.turnRunOnce', {
    goalId: 'tidy-notes',
    agentIds: [agentId],
    confirmed: true,
  })) as TurnResult | undefined;
  assert.ok(result, 'the command returned no result (it failed: see the LoopX log)');
  return result;
}

async function reservedSlots(): Promise<number> {
  const quota = await runOperation(quotaStatus, { goalId: 'tidy-notes' }, editorEnvironment(registryPath()));
  return quota.reserved_slots;
}

describe('The vscode-lm agent on a test language model (real VS Code host)', function () {
  this.timeout(90_000);

  before(async () => {
    const registry = JSON.parse(readFileSync(registryPath(), 'utf8')) as {
      goals: { coordination: Record<string, unknown> & { registered_agents: string[]; agent_profiles: object } }[];
    };
    const coordination = registry.goals[0]?.coordination;
    assert.ok(coordination);
    coordination.registered_agents.push('lm', 'lm-missing');
    coordination.agent_profiles = {
      ...coordination.agent_profiles,
      lm: { executor: { preset: 'vscode-lm', vendor: 'loopx-test', family: 'deterministic' } },
      'lm-missing': { executor: { preset: 'vscode-lm', vendor: 'nobody-sells-this' } },
    };
    coordination['write_scope'] = ['notes/**'];
    writeFileSync(registryPath(), JSON.stringify(registry, null, 2));
    const loopx = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(loopx);
    await loopx.activate();
    await vscode.commands.executeCommand('loopx.refresh');
    const extension = vscode.extensions.getExtension<Provider>('loopx-tests.loopx-lm-provider');
    assert.ok(extension, 'the test provider extension is not loaded');
    provider = await extension.activate();
  });

  it('sees the model the test extension registers', async () => {
    const models = await vscode.lm.selectChatModels({ vendor: 'loopx-test', family: 'deterministic' });
    assert.equal(models.length, 1);
  });

  it('runs a turn: prompt, streamed reply, typed result, the edit inside the write scope, estimated usage, one spend', async () => {
    provider.setScenario('edit');
    const before = readFileSync(checker(), 'utf8');
    const result = await runLm();
    assert.equal(result.ok, true, result.message);
    assert.equal(result.result_kind, 'validated_progress');
    assert.equal(result.quota_slot_spend_count, 1);
    assert.equal(readFileSync(note(), 'utf8'), '# LM note\n\n## Related\n- [Bread](bread.md)\n');
    assert.equal(readFileSync(checker(), 'utf8'), before);
    assert.ok(result.usage, 'no usage recorded');
    assert.equal(result.usage.estimated, true);
    assert.ok((result.usage.tokens ?? 0) > 0, `no tokens counted: ${JSON.stringify(result.usage)}`);
    const prompt = provider.prompts.at(-1) ?? '';
    assert.match(prompt, /sha256:[0-9a-f]{64}/);
    assert.match(prompt, /write scope: `notes\/\*\*`/);
    assert.equal(await reservedSlots(), 0);
  });

  it('refuses a reply with an edit outside the write scope: nothing written, the slot released', async () => {
    rmSync(note(), { force: true });
    provider.setScenario('outside');
    const before = readFileSync(checker(), 'utf8');
    const result = await runLm();
    assert.equal(result.ok, false);
    assert.equal(result.failure?.reason, 'contract_violation');
    assert.match(result.failure?.message ?? '', /outside the goal's write scope/);
    assert.equal(existsSync(note()), false, 'the in-scope edit of a refused reply was written');
    assert.equal(readFileSync(checker(), 'utf8'), before);
    assert.equal(await reservedSlots(), 0);
  });

  it('fails a malformed reply with a clear error: nothing written, the slot released', async () => {
    provider.setScenario('malformed');
    const result = await runLm();
    assert.equal(result.ok, false);
    assert.equal(result.failure?.reason, 'malformed_result');
    assert.match(result.failure?.message ?? '', /no JSON object/);
    assert.equal(existsSync(note()), false);
    assert.equal(await reservedSlots(), 0);
  });

  it('stops a cancelled turn while the model streams: a clean cancelled status (resumable), nothing written', async () => {
    provider.setScenario('slow');
    const prompts = provider.prompts.length;
    const controller = new AbortController();
    // The barrier: cancel once the first streamed piece has arrived, so the request is in flight.
    const factory = editorExecutorFactory({ onOutput: () => controller.abort() });
    const result = (await runOperation(
      turnRunOnce,
      { goalId: 'tidy-notes', agentId: 'lm', execute: true },
      { ...editorEnvironment(registryPath(), controller.signal), executorFactory: factory },
    )) as TurnResult;
    assert.equal(result.status, 'cancelled', result.message);
    assert.equal(result.quota_slot_spend_count, 0);
    assert.equal(provider.prompts.length, prompts + 1, 'the model was not asked');
    assert.equal(existsSync(note()), false);
  });

  it('stops cleanly before the turn when no model matches the agent profile: a status, no failed turn, nothing reserved', async () => {
    const prompts = provider.prompts.length;
    const runs = (await runOperation(status, {}, editorEnvironment(registryPath()))).run_count;
    const result = (await runLm('lm-missing')) as TurnResult & { reason?: string };
    assert.equal(result.ok, true, 'no model is a clean stop, not a failure');
    assert.equal(result.status, 'not_started');
    assert.equal(result.reason, 'no_model');
    assert.match(
      result.message,
      /No VS Code language model matches the agent "lm-missing" \(vendor "nobody-sells-this"\)/,
    );
    const loop = (await vscode.commands.executeCommand('loopx.turnLoop', {
      goalId: 'tidy-notes',
      agentIds: ['lm-missing'],
      confirmed: true,
    })) as { status?: string; reason?: string };
    assert.equal(loop.status, 'not_started');
    assert.equal(loop.reason, 'no_model');
    assert.equal(provider.prompts.length, prompts);
    assert.equal(await reservedSlots(), 0);
    assert.equal((await runOperation(status, {}, editorEnvironment(registryPath()))).run_count, runs);
  });
});

describe('@loopx in a real VS Code host', function () {
  this.timeout(60_000);

  async function ask(command: string | undefined, prompt = ''): Promise<ChatReply> {
    return (await vscode.commands.executeCommand('_loopx.chatRequest', command, prompt)) as ChatReply;
  }
  const markdown = (reply: ChatReply): string =>
    reply.parts
      .filter((p) => p.kind === 'markdown')
      .map((p) => p.value)
      .join('');

  it('answers /status from the status op, with the state file anchor and a button', async () => {
    const reply = await ask('status');
    assert.match(markdown(reply), /tidy-notes/);
    assert.ok(reply.parts.some((p) => p.kind === 'anchor' && (p.command ?? '').endsWith('ACTIVE_GOAL_STATE.md')));
    assert.ok(reply.parts.some((p) => p.kind === 'button' && p.command === 'loopx.status'));
  });

  for (const [command, palette] of [
    ['gates', 'loopx.globalGates'],
    ['todos', 'loopx.globalTodos'],
    ['risks', 'loopx.globalRisks'],
    ['summary', 'loopx.globalSummary'],
  ] as const) {
    it(`answers /${command} from its global view op`, async () => {
      const reply = await ask(command);
      assert.ok(markdown(reply).length > 0);
      assert.ok(reply.parts.some((p) => p.kind === 'button' && p.command === palette));
    });
  }

  it('answers /gates with the open publish gate', async () => {
    assert.match(markdown(await ask('gates')), /todo_gate_publish|Approve publishing/);
  });

  it('answers /next with a decision per agent', async () => {
    const text = markdown(await ask('next'));
    assert.match(text, /tidy-notes\*\* \/ demo: (run|skip)/);
  });

  it('/run previews and offers the confirming palette command; it runs nothing itself', async () => {
    const prompts = provider.prompts.length;
    const reply = await ask('run', 'tidy-notes lm');
    assert.ok(reply.parts.some((p) => p.kind === 'button' && p.command === 'loopx.turnRunOnce'));
    assert.match(markdown(reply), /One turn of tidy-notes by lm/);
    assert.equal(provider.prompts.length, prompts);
  });

  it('/run says so when the agent has no language model, and offers no button', async () => {
    const reply = await ask('run', 'tidy-notes lm-missing');
    assert.equal(reply.result.metadata.refused, 'no_model');
    assert.match(markdown(reply), /No VS Code language model matches the agent "lm-missing"/);
    assert.ok(!reply.parts.some((p) => p.kind === 'button'));
  });

  it('/goal drafts a goal from a sentence with the model and writes nothing; its button opens the draft for review', async () => {
    provider.setScenario('goal');
    const before = readFileSync(registryPath(), 'utf8');
    const reply = await ask('goal', 'publish a weekly digest of the notes');
    const text = markdown(reply);
    assert.match(text, /Draft goal `weekly-digest`/);
    assert.match(text, /1\. P1 — Collect the notes changed this week\./);
    assert.match(text, /Approve the digest before it is sent\./);
    assert.match(provider.prompts.at(-1) ?? '', /publish a weekly digest of the notes/);
    assert.ok(reply.parts.some((p) => p.kind === 'button' && p.command === 'loopx.startGoal'));
    assert.equal(readFileSync(registryPath(), 'utf8'), before);
  });

  it('/goal reports a malformed draft clearly and writes nothing', async () => {
    provider.setScenario('bad-goal');
    const before = readFileSync(registryPath(), 'utf8');
    const reply = await ask('goal', 'publish a weekly digest of the notes');
    assert.equal(reply.result.metadata.refused, 'malformed_draft');
    assert.match(markdown(reply), /draft is malformed/);
    assert.equal(readFileSync(registryPath(), 'utf8'), before);
  });

  it('Start a Goal: the model drafts, the user edits the draft document, exactly the reviewed todos are written', async () => {
    provider.setScenario('goal');
    const opened = (await vscode.commands.executeCommand('loopx.startGoal', {
      sentence: 'publish a weekly digest of the notes',
    })) as { step: string; draftUri: string; source: string };
    assert.equal(opened.step, 'review');
    assert.equal(opened.source, 'model');
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === opened.draftUri);
    assert.ok(document, 'the draft document is not open');
    assert.equal(
      existsSync(join(root(), '.codex', 'goals', 'weekly-digest')),
      false,
      'something was written before review',
    );
    // The user's review: drops the second todo, rewords the third, adds one, keeps the gate.
    const edited = document
      .getText()
      .replace('- Write the digest draft.\n', '')
      .replace(
        '- Link each note from the digest.',
        '- Link every note from the digest.\n- Send the digest to the team.',
      );
    const edit = new vscode.WorkspaceEdit();
    edit.replace(document.uri, new vscode.Range(0, 0, document.lineCount, 0), edited);
    assert.ok(await vscode.workspace.applyEdit(edit));
    const created = (await vscode.commands.executeCommand('loopx.startGoal', {
      draft: opened.draftUri,
      confirmed: true,
    })) as { step: string; goal_id: string } | undefined;
    assert.ok(created, 'Start a Goal failed (see the LoopX log)');
    assert.equal(created.goal_id, 'weekly-digest');
    const listed = await runOperation(todoList, { goalId: 'weekly-digest' }, editorEnvironment(registryPath()));
    const agent = listed.todos.filter((t) => t.role === 'agent').map((t) => t.text);
    assert.deepEqual(agent, [
      '[P1] Collect the notes changed this week.',
      '[P2] Link every note from the digest.',
      '[P3] Send the digest to the team.',
    ]);
    assert.deepEqual(
      listed.todos.filter((t) => t.role === 'user').map((t) => t.text),
      ['Approve the digest before it is sent.'],
    );
  });

  it('Start a Goal: a refused todo in the reviewed draft writes nothing, no goal and no state file (never a half goal)', async () => {
    const registryBefore = readFileSync(registryPath(), 'utf8');
    const opened = (await vscode.commands.executeCommand('loopx.startGoal', {
      draftText: [
        '# Goal: half-goal',
        '',
        'Objective: Tidy the attic.',
        '',
        '## Agent todos (highest priority first)',
        '',
        '- Sort the boxes.',
        '- Log in with password=hunter2xyz and list them.',
        '',
        '## Human gates',
        '',
        '- Approve what is thrown away.',
        '',
      ].join('\n'),
    })) as { step: string; draftUri: string } | undefined;
    assert.ok(opened, 'the draft did not open (see the LoopX log)');
    const created = await vscode.commands.executeCommand('loopx.startGoal', {
      draft: opened.draftUri,
      confirmed: true,
    });
    assert.equal(created, undefined, 'a draft with a credential in a todo created a goal');
    assert.equal(existsSync(join(root(), '.codex', 'goals', 'half-goal')), false, 'a half goal was left on disk');
    assert.equal(readFileSync(registryPath(), 'utf8'), registryBefore, 'the registry changed');
  });

  it('answers free text with the language model, the status read model as context', async () => {
    provider.setScenario('answer');
    const reply = await ask(undefined, 'what is tidy-notes waiting on?');
    assert.match(markdown(reply), /waits on the publish gate/);
    assert.match(provider.prompts.at(-1) ?? '', /"goal_id":"tidy-notes"/);
    // Issue 34, defect 10: the model is told workspace-relative paths, never the machine's absolute ones.
    const prompt = provider.prompts.at(-1) ?? '';
    assert.ok(!prompt.includes(root()), `the prompt holds the workspace's absolute path ${root()}`);
    assert.match(prompt, /<project>\/\.loopx\/registry\.json/);
  });
});
