import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { LoopxExtensionApi } from '../../../src/api/types';
import { EXTENSION_ID, VIEW_IDS } from '../../../src/core/commands/ids';
import { listeningAddresses } from '../../support/listeningAddresses';
import { workspaceDir } from '../../support/extensionHost';

interface CommandFailure {
  command: string;
  kind: string;
  message: string;
}

const takeFailures = async (): Promise<CommandFailure[]> =>
  (await vscode.commands.executeCommand<CommandFailure[]>('_loopx.takeCommandFailures')) ?? [];

/**
 * The extension in an untrusted workspace (the driver turns workspace trust on and does not trust
 * the folder; the status server is turned on in the user settings): it shows goals read-only and
 * refuses to write files, run agents or serve the status.
 */
describe('LoopX in an untrusted workspace (real VS Code host, restricted mode)', function () {
  this.timeout(60_000);
  let api: LoopxExtensionApi;
  const registryPath = (): string => join(workspaceDir(), '.loopx', 'registry.json');
  const runIndex = (): string =>
    join(workspaceDir(), '.loopx', 'runtime', 'goals', 'tidy-notes', 'runs', 'index.jsonl');

  before(async () => {
    const extension = vscode.extensions.getExtension<LoopxExtensionApi>(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not installed in this host`);
    api = await extension.activate();
    await takeFailures();
  });

  it('really is untrusted (the harness turned workspace trust on)', () => {
    assert.equal(vscode.workspace.isTrusted, false);
  });

  it('still shows the goals: Refresh runs, the Goals view focuses, goals and todos read', async () => {
    await vscode.commands.executeCommand('loopx.refresh');
    await vscode.commands.executeCommand(`${VIEW_IDS.goals}.focus`);
    assert.deepEqual(await takeFailures(), [], 'a read-only command was refused or failed');
    const goal = api.getGoals().find((g) => g.goalId === 'tidy-notes');
    assert.ok(goal, `goals: ${JSON.stringify(api.getGoals().map((g) => g.goalId))}`);
    const todos = await api.getTodos('tidy-notes', { role: 'agent' });
    assert.ok(todos.todos.some((t) => t.todo_id === 'todo_related'));
  });

  it('refuses a write command: Create Goal writes nothing', async () => {
    const before = readFileSync(registryPath(), 'utf8');
    const result = await vscode.commands.executeCommand('loopx.createGoal', {
      goalId: 'untrusted-goal',
      objective: 'Must not be created in an untrusted workspace.',
    });
    assert.equal(result, undefined);
    assert.deepEqual(
      (await takeFailures()).map((f) => [f.command, f.kind]),
      [['loopx.createGoal', 'refused_untrusted']],
    );
    assert.equal(readFileSync(registryPath(), 'utf8'), before, 'the registry is untouched');
    assert.equal(existsSync(join(workspaceDir(), '.codex', 'goals', 'untrusted-goal')), false);
  });

  it('refuses to run an agent: Run Loop starts no turn', async () => {
    const indexBefore = existsSync(runIndex()) ? readFileSync(runIndex(), 'utf8') : '';
    const stateFile = join(workspaceDir(), '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md');
    const stateBefore = readFileSync(stateFile, 'utf8');
    const ended: unknown[] = [];
    const subscription = api.onDidEndTurn((event) => ended.push(event));
    let result: unknown;
    try {
      result = await vscode.commands.executeCommand('loopx.turnLoop', {
        goalId: 'tidy-notes',
        agentIds: ['demo'],
        confirmed: true,
      });
    } finally {
      subscription.dispose();
    }
    assert.equal(result, undefined);
    assert.deepEqual(
      (await takeFailures()).map((f) => [f.command, f.kind]),
      [['loopx.turnLoop', 'refused_untrusted']],
    );
    assert.deepEqual(ended, []);
    assert.equal(existsSync(runIndex()) ? readFileSync(runIndex(), 'utf8') : '', indexBefore, 'no run recorded');
    assert.equal(readFileSync(stateFile, 'utf8'), stateBefore, 'the state file is untouched');
  });

  it('@loopx answers read-only commands and refuses the ones that write: /goal and /run write nothing', async () => {
    type ChatReply = { result: { metadata: { command: string | null; refused?: string } }; parts: unknown[] };
    const ask = async (command: string, prompt = ''): Promise<ChatReply> =>
      (await vscode.commands.executeCommand('_loopx.chatRequest', command, prompt)) as ChatReply;
    const registryBefore = readFileSync(registryPath(), 'utf8');
    const runsBefore = existsSync(runIndex()) ? readFileSync(runIndex(), 'utf8') : null;
    const status = await ask('status');
    assert.equal(status.result.metadata.refused, undefined, 'a read-only command is answered');
    assert.match(JSON.stringify(status.parts), /tidy-notes/);
    for (const [command, prompt] of [
      ['goal', 'Write a changelog for the notes folder'],
      ['run', ''],
    ]) {
      const reply = await ask(command ?? '', prompt);
      assert.equal(reply.result.metadata.refused, 'untrusted', `/${command} was not refused`);
      assert.match(JSON.stringify(reply.parts), /not trusted/);
    }
    assert.equal(readFileSync(registryPath(), 'utf8'), registryBefore, 'the registry changed');
    assert.equal(existsSync(runIndex()) ? readFileSync(runIndex(), 'utf8') : null, runsBefore, 'a run was recorded');
  });

  it('Review Changes shows a diff but Revert refuses: the changed file keeps its bytes', async () => {
    const note = join(workspaceDir(), 'notes', 'untrusted-review.md');
    writeFileSync(note, 'before\n');
    // A review recorded around a change the test makes itself (a turn cannot run here).
    const handle = await vscode.commands.executeCommand<string>('_loopx.review.begin', {
      projectRoot: workspaceDir(),
      writeScope: ['notes'],
      forceFiles: true,
    });
    writeFileSync(note, 'after\n');
    const review = await vscode.commands.executeCommand<{ id: string; files: { path: string; status: string }[] }>(
      '_loopx.review.end',
      handle,
    );
    assert.deepEqual(review.files, [{ path: 'notes/untrusted-review.md', status: 'modified' }]);
    const shown = await vscode.commands.executeCommand<unknown[]>('_loopx.review.open', review.id);
    assert.equal(shown.length, 1, 'the diff is still shown read-only');
    await assert.rejects(
      Promise.resolve(
        vscode.commands.executeCommand('_loopx.review.revert', {
          reviewId: review.id,
          path: 'notes/untrusted-review.md',
          confirmed: true,
        }),
      ),
      /not trusted \(restricted mode\); nothing was reverted/,
    );
    assert.equal(readFileSync(note, 'utf8'), 'after\n', 'Revert wrote in an untrusted workspace');
  });

  it('does not start the status server although the user settings turn it on', async () => {
    const port = Number(process.env['LOOPX_UNTRUSTED_STATUS_PORT']);
    assert.ok(port > 0, 'LOOPX_UNTRUSTED_STATUS_PORT not set by the driver');
    assert.equal(vscode.workspace.getConfiguration('loopx').get('statusServer.enabled'), true);
    await vscode.env.clipboard.writeText('unchanged');
    // Resolves once the server's state is settled (it waits for the controller's queue).
    await vscode.commands.executeCommand('loopx.copyStatusServerUrl');
    assert.deepEqual(await takeFailures(), []);
    assert.equal(await vscode.env.clipboard.readText(), 'unchanged', 'no status URL to copy');
    assert.deepEqual(listeningAddresses(port), [], `something listens on port ${port}`);
  });
  it('offers only the read language-model tools; a should-run that would write a receipt, and every write, are refused; no MCP server', async () => {
    const lm = vscode.lm as unknown as {
      tools: readonly { name: string; tags: readonly string[] }[];
      invokeTool(
        name: string,
        options: { input: object; toolInvocationToken: undefined },
      ): Thenable<{ content: unknown[] }>;
    };
    // The host lists every contributed tool (the writes carry `when: isWorkspaceTrusted` for the agent's
    // picker); only the reads have an implementation here: a write cannot run.
    const ours = lm.tools.filter((tool) => tool.tags.includes('loopx')).map((tool) => tool.name);
    assert.ok(ours.includes('loopx_should_run'), JSON.stringify(ours));
    for (const write of ['loopx_todo_complete', 'loopx_refresh_state', 'loopx_spend_slot'])
      await assert.rejects(
        Promise.resolve(
          lm.invokeTool(write, {
            input: { goalId: 'tidy-notes', todoId: 'todo_related', agentId: 'demo' },
            toolInvocationToken: undefined,
          }),
        ),
        write,
      );
    const brief = await lm.invokeTool('loopx_heartbeat_prompt', {
      input: { goalId: 'tidy-notes', agentId: 'demo' },
      toolInvocationToken: undefined,
    });
    assert.equal(brief.content.length, 2);
    const call = async (input: object): Promise<Record<string, unknown>> => {
      const result = await lm.invokeTool('loopx_should_run', { input, toolInvocationToken: undefined });
      return JSON.parse((result.content[1] as { value: string }).value) as Record<string, unknown>;
    };
    const read = await call({ goalId: 'tidy-notes', agentId: 'demo' });
    assert.equal(read['should_run'] !== undefined, true, JSON.stringify(read));
    const receipt = await call({ goalId: 'tidy-notes', agentId: 'demo', turnInstanceId: 'untrusted-turn' });
    assert.equal(receipt['ok'], false);
    assert.match(String(receipt['error']), /not trusted/);
    assert.deepEqual(await vscode.commands.executeCommand('_loopx.mcpServerDefinitions'), []);
  });
});
