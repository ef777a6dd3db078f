import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { configureGoal } from '../../../src/core/ops/configureGoal';
import { createGoal } from '../../../src/core/ops/createGoal';
import { runOperation } from '../../../src/core/ops/run';
import { turnInspectJournal, turnRunOnce } from '../../../src/core/ops/turn';
import { editorExecutorFactory } from '../../../src/lm/languageModelExecutor';
import { editorEnvironment } from '../../../src/commands/operationRunner';

/**
 * The vscode-lm agent working through its workspace tools in the real host: the test extension's model
 * (scenario 'workspace-tools') reads a note, lists the notes, tries three edits LoopX must refuse ("..",
 * outside the write scope, a symbolic link out of the project), makes one edit in scope and answers with the
 * result JSON. The turn commits with that edit as its changed file, and nothing else is written.
 */

interface Provider {
  setScenario(name: string): void;
  workspaceToolResults: string[];
  offeredTools: number[];
  prompts: string[];
}
interface TurnResult {
  ok: boolean;
  status: string;
  result_kind: string | null;
  message: string;
  turn_key: string | null;
  quota_slot_spend_count: number;
}

const AGENT = 'lm-tools';
const GOAL = 'tools-note';
const ONE_SHOT_AGENT = 'lm-one-shot';
const ONE_SHOT_GOAL = 'one-shot-note';
const root = (): string => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
const registryPath = (): string => join(root(), '.loopx', 'registry.json');

/** A goal of its own (no earlier turn of another agent holds its todo) with one vscode-lm agent. */
async function createLmGoal(goalId: string, agentId: string, family: string): Promise<void> {
  const env = editorEnvironment(registryPath());
  const created = await runOperation(
    createGoal,
    { goalId, objective: 'Write the LM note through the tools.', todo: ['Write the LM note'] },
    env,
  );
  assert.equal(created.ok, true, JSON.stringify(created));
  const configured = await runOperation(
    configureGoal,
    {
      goalId,
      registeredAgent: [agentId],
      writeScope: ['notes/**'],
      agentProfileJson: [
        JSON.stringify({
          agent_id: agentId,
          executor: { preset: 'vscode-lm', vendor: 'loopx-test', family },
        }),
      ],
    },
    env,
    'apply',
  );
  assert.equal((configured as { ok?: boolean }).ok, true, JSON.stringify(configured));
  // The demo goal's check validates this goal's turns too.
  const registry = JSON.parse(readFileSync(registryPath(), 'utf8')) as { goals: Record<string, unknown>[] };
  const demo = registry.goals.find((goal) => goal['id'] === 'tidy-notes');
  const mine = registry.goals.find((goal) => goal['id'] === goalId);
  assert.ok(demo && mine, 'the goals are not in the registry');
  mine['validation_command'] = demo['validation_command'];
  writeFileSync(registryPath(), JSON.stringify(registry, null, 2));
}

describe('The vscode-lm agent with workspace tools (real VS Code host)', function () {
  this.timeout(90_000);
  let provider: Provider;
  let away: string;

  before(async () => {
    await createLmGoal(GOAL, AGENT, 'deterministic');
    await createLmGoal(ONE_SHOT_GOAL, ONE_SHOT_AGENT, 'one-shot');
    // A folder outside the project, reachable from inside it only through a symbolic link.
    away = mkdtempSync(join(tmpdir(), 'loopx-away-'));
    symlinkSync(away, join(root(), 'notes', 'away'));
    rmSync(join(root(), 'notes', 'lm-note.md'), { force: true });
    const loopx = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(loopx);
    await loopx.activate();
    await vscode.commands.executeCommand('loopx.refresh');
    const extension = vscode.extensions.getExtension<Provider>('loopx-tests.loopx-lm-provider');
    assert.ok(extension, 'the test provider extension is not loaded');
    provider = await extension.activate();
  });

  after(() => {
    provider.setScenario('edit');
    rmSync(join(root(), 'notes', 'away'), { force: true });
    rmSync(away, { recursive: true, force: true });
  });

  it('reads, lists and edits through the tools; refused edits go back to the model; the turn commits the one edit', async () => {
    provider.setScenario('workspace-tools');
    const checker = join(root(), 'scripts', 'check-notes.js');
    const checkerBefore = readFileSync(checker, 'utf8');
    const result = (await runOperation(
      turnRunOnce,
      { goalId: GOAL, agentId: AGENT, execute: true },
      { ...editorEnvironment(registryPath()), executorFactory: editorExecutorFactory() },
    )) as unknown as TurnResult;
    assert.equal(result.ok, true, result.message);
    assert.equal(result.result_kind, 'validated_progress');
    assert.equal(result.quota_slot_spend_count, 1);

    // The model saw each tool's answer: the note, the listing, three refusals, the staged edit.
    const seen = provider.workspaceToolResults;
    assert.equal(seen.length, 6, JSON.stringify(seen));
    assert.equal(seen[0], readFileSync(join(root(), 'notes', 'bread.md'), 'utf8'));
    assert.match(seen[1] ?? '', /^notes\/bikes\.md$/m);
    assert.doesNotMatch(seen[1] ?? '', /away/, 'the listing followed the link out of the project');
    assert.match(seen[2] ?? '', /^Refused: "\.\.\/escaped\.md" is refused: give a path relative to the project/);
    assert.match(seen[3] ?? '', /^Refused: scripts\/check-notes\.js is outside the goal's write scope \(notes\/\*\*\)/);
    assert.match(seen[4] ?? '', /^Refused: notes\/away\/escaped\.md is refused: it leads out of the project/);
    assert.match(seen[5] ?? '', /^staged the edit of notes\/lm-note\.md/);

    // The edit is in the file; the refused ones wrote nothing.
    const title = readFileSync(join(root(), 'notes', 'bread.md'), 'utf8').split('\n')[0] ?? '';
    assert.equal(
      readFileSync(join(root(), 'notes', 'lm-note.md'), 'utf8'),
      `# LM note\n\nRead ${title}; 3 notes listed.\n`,
    );
    assert.equal(readFileSync(checker, 'utf8'), checkerBefore);
    assert.equal(existsSync(join(dirname(root()), 'escaped.md')), false);
    assert.deepEqual(readdirSync(away), []);

    // The committed turn names the edit as its changed file (the model listed none itself).
    assert.ok(result.turn_key, 'the turn has no key');
    const journal = await runOperation(
      turnInspectJournal,
      { goalId: GOAL, turnKey: result.turn_key },
      editorEnvironment(registryPath()),
    );
    const text = JSON.stringify(journal);
    assert.match(text, /"changed_files":\["notes\/lm-note\.md"\]/, text.slice(0, 2000));
    assert.match(text, /workspace tool calls: read_file, list_files, apply_edit/);
  });

  it('a model without tool calling gets the one-shot prompt, no tools, and its whole-file edit is applied', async () => {
    provider.setScenario('edit');
    rmSync(join(root(), 'notes', 'lm-note.md'), { force: true });
    const requests = provider.offeredTools.length;
    const result = (await runOperation(
      turnRunOnce,
      { goalId: ONE_SHOT_GOAL, agentId: ONE_SHOT_AGENT, execute: true },
      { ...editorEnvironment(registryPath()), executorFactory: editorExecutorFactory() },
    )) as unknown as TurnResult;
    assert.equal(result.ok, true, result.message);
    assert.deepEqual(provider.offeredTools.slice(requests), [0], 'one request, offering no tool');
    assert.match(provider.prompts.at(-1) ?? '', /You cannot run commands or edit files yourself/);
    assert.equal(
      readFileSync(join(root(), 'notes', 'lm-note.md'), 'utf8'),
      '# LM note\n\n## Related\n- [Bread](bread.md)\n',
    );
  });
});
