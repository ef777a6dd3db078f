import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createDemoExecutor } from '../../../src/core/executors/config';
import { demoAgentArgv, performDemoTurn } from '../../../src/core/executors/demoAgent';
import { runValidation } from '../../../src/core/executors/validation';
import { readValidationCommand } from '../../../src/core/registry/validationCommand';
import type { ExecutorOutcome, ExecutorSuccess } from '../../../src/core/executors/types';
import { isLoopxError } from '../../../src/core/errors';
import { findRawRegistryGoal, readRegistrySync } from '../../../src/core/registry/read';
import { checkHostResult } from '../../../src/core/protocol/contract';
import { DEMO_AGENT_SOURCE_ARGV, demoRequest, demoWorkspace, runOptions, tempDir } from './helpers';

function success(outcome: ExecutorOutcome): ExecutorSuccess {
  if (!outcome.ok)
    assert.fail(`expected a result, got ${outcome.reason}: ${outcome.message}\n${outcome.stderr_excerpt}`);
  return outcome;
}

function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true }).map(String).sort()) {
    const full = path.join(dir, entry);
    if (fs.statSync(full).isFile()) files[entry] = fs.readFileSync(full, 'utf8');
  }
  return files;
}

function goalValidation(workspace: string): string[] {
  const goal = findRawRegistryGoal(readRegistrySync(path.join(workspace, '.loopx', 'registry.json')), 'tidy-notes');
  const argv = goal === undefined ? null : readValidationCommand(goal);
  assert.ok(argv !== null);
  return argv;
}

describe('demo agent', () => {
  const demo = createDemoExecutor(DEMO_AGENT_SOURCE_ARGV);

  it('runs as a real process, adds Related sections to the notes, and the goal validator passes', async () => {
    const workspace = demoWorkspace();
    const request = await demoRequest(workspace);
    const outcome = success(await demo.run(request, runOptions(workspace)));
    assert.equal(outcome.executor, 'demo');
    assert.equal(outcome.result_kind, 'validated_completion');
    assert.deepEqual(outcome.result.changed_files, ['notes/bikes.md', 'notes/bread.md', 'notes/gardening.md']);
    assert.equal(outcome.result.todo?.disposition, 'done');
    assert.equal(outcome.usage?.estimated, true, 'the demo agent labels its usage as an estimate');
    assert.ok((outcome.usage?.input_tokens ?? 0) > 0);
    const gardening = fs.readFileSync(path.join(workspace, 'notes', 'gardening.md'), 'utf8');
    assert.match(gardening, /## Related\n\n- \[Bike maintenance\]\(bikes\.md\)\n- \[Sourdough bread\]\(bread\.md\)\n$/);
    assert.match(
      fs.readFileSync(path.join(workspace, 'notes', 'bread.md'), 'utf8'),
      /## Related\n\n- \[Gardening\]\(gardening\.md\)\n$/,
    );

    const validation = await runValidation({
      argv: goalValidation(workspace),
      cwd: workspace,
      env: runOptions(workspace).env,
      timeoutMs: 20_000,
    });
    assert.equal(validation.ok, true, validation.output_excerpt);
    assert.equal(validation.exit_code, 0);
    assert.match(validation.output_excerpt, /all notes have a level-one title/);
  });

  it('is idempotent: a second turn on the same todo changes nothing', async () => {
    const workspace = demoWorkspace();
    const request = await demoRequest(workspace);
    success(await demo.run(request, runOptions(workspace)));
    const after = snapshot(path.join(workspace, 'notes'));
    const again = success(await demo.run(request, runOptions(workspace)));
    assert.deepEqual(again.result.changed_files, []);
    assert.deepEqual(snapshot(path.join(workspace, 'notes')), after);
    assert.equal(again.result.delivery_outcome, 'surface_only');
  });

  it('writes notes/index.md listing every note by tag, once', async () => {
    const workspace = demoWorkspace();
    const request = await demoRequest(workspace, { todoId: 'todo_index' });
    const first = performDemoTurn(workspace, request);
    assert.deepEqual(first.changed_files, ['notes/index.md']);
    const index = fs.readFileSync(path.join(workspace, 'notes', 'index.md'), 'utf8');
    assert.match(index, /^# Notes index/);
    assert.match(index, /## home\n\n- \[Gardening\]\(gardening\.md\)\n- \[Sourdough bread\]\(bread\.md\)/);
    assert.match(index, /## tools\n\n- \[Bike maintenance\]\(bikes\.md\)/);
    assert.deepEqual(performDemoTurn(workspace, request).changed_files, []);
    assert.ok(checkHostResult(first, request).ok);
  });

  it('fixes a broken relative link and leaves working ones alone', async () => {
    const workspace = demoWorkspace();
    const bread = path.join(workspace, 'notes', 'bread.md');
    fs.appendFileSync(bread, '\nSee also [the garden](Gardening) and [bikes](bikes.md).\n');
    const request = await demoRequest(workspace, { agentId: 'codex-main', todoId: 'todo_links' });
    const result = performDemoTurn(workspace, request);
    assert.deepEqual(result.changed_files, ['notes/bread.md']);
    assert.match(fs.readFileSync(bread, 'utf8'), /\[the garden\]\(gardening\.md\) and \[bikes\]\(bikes\.md\)/);
    assert.deepEqual(performDemoTurn(workspace, request).changed_files, []);
  });

  it('does not publish while the gate holds the todo back, and asks for a human on unknown todos', async () => {
    const workspace = demoWorkspace();
    const before = snapshot(workspace);
    const gated = performDemoTurn(workspace, await demoRequest(workspace, { todoId: 'todo_publish' }));
    assert.equal(gated.result_kind, 'user_action_required');
    assert.equal(gated.todo?.disposition, 'needs_user');
    assert.match(gated.todo?.disposition === 'needs_user' ? gated.todo.question : '', /todo_gate_publish/);

    const request = await demoRequest(workspace);
    const unknown = performDemoTurn(workspace, {
      ...request,
      selected_todo: {
        ...request.selected_todo!,
        todo_id: 'todo_taxes',
        title: 'File the quarterly taxes.',
        text: '[P1] File the quarterly taxes.',
      },
    });
    assert.equal(unknown.result_kind, 'user_action_required');
    assert.equal(unknown.todo?.disposition, 'blocked');
    assert.match(
      unknown.todo?.disposition === 'blocked' ? unknown.todo.question : '',
      /cannot do "File the quarterly taxes\."/,
    );
    assert.deepEqual(snapshot(workspace), before, 'nothing was edited');
  });

  it('builds the argv of the bundled agent', () => {
    assert.deepEqual(demoAgentArgv('/opt/loopx/out'), [process.execPath, path.join('/opt/loopx/out', 'demoAgent.js')]);
  });

  it('points the next action past the todo it just finished', async () => {
    const workspace = demoWorkspace();
    const result = performDemoTurn(workspace, await demoRequest(workspace));
    assert.equal(result.next_action, 'Run the next turn on the next open todo of the goal.');
  });

  it('publishes to the stand-in wiki once no gate holds the todo back', async () => {
    const workspace = demoWorkspace();
    const request = await demoRequest(workspace, { todoId: 'todo_publish' });
    const result = performDemoTurn(workspace, { ...request, open_gates: [] });
    assert.deepEqual(result.changed_files, ['wiki-export/knowledge-base.md']);
    assert.match(
      fs.readFileSync(path.join(workspace, 'wiki-export', 'knowledge-base.md'), 'utf8'),
      /## Sourdough bread/,
    );
  });
});

describe('independent validation runner', () => {
  it('reports a failing validator with its exit code and output', async () => {
    const workspace = demoWorkspace();
    fs.writeFileSync(path.join(workspace, 'notes', 'untitled.md'), 'no title here\n');
    const run = await runValidation({
      argv: goalValidation(workspace),
      cwd: workspace,
      env: runOptions(workspace).env,
      timeoutMs: 20_000,
    });
    assert.equal(run.ok, false);
    assert.equal(run.exit_code, 1);
    assert.equal(run.end, 'exited');
    assert.match(run.output_excerpt, /notes without a level-one title: untitled\.md/);
  });

  it('stops a validator that runs too long', async () => {
    const run = await runValidation({
      argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'],
      cwd: tempDir(),
      env: runOptions('.').env,
      timeoutMs: 500,
      killGraceMs: 200,
    });
    assert.equal(run.ok, false);
    assert.equal(run.end, 'timeout');
  });

  it('refuses a shell-string validation command', () => {
    assert.throws(
      () => readValidationCommand({ id: 'g', validation_command: 'npm test && rm -rf /' }),
      (error: unknown) => isLoopxError(error, 'validation_command_invalid') && /not a shell string/.test(error.message),
    );
    assert.equal(readValidationCommand({ id: 'g' }), null);
  });
});
