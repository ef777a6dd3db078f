import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createCommandExecutor } from '../../../src/core/executors/command';
import { buildAgentEnv, outputExcerpt, runBoundedProcess } from '../../../src/core/executors/process';
import type { ExecutorFailure, ExecutorOutcome, ExecutorSuccess } from '../../../src/core/executors/types';
import { demoRequest, demoWorkspace, isAlive, runOptions, SCRIPTED_AGENT, tempDir } from './helpers';
import { waitUntil } from '../../support/waitFor';

function agent(mode: string, arg?: string): ReturnType<typeof createCommandExecutor> {
  return createCommandExecutor([process.execPath, SCRIPTED_AGENT, mode, ...(arg === undefined ? [] : [arg])], {
    killGraceMs: 500,
  });
}

function expectSuccess(outcome: ExecutorOutcome): ExecutorSuccess {
  if (!outcome.ok) assert.fail(`expected a result, got ${outcome.reason}: ${outcome.message}`);
  return outcome;
}

function expectFailure(outcome: ExecutorOutcome, reason: ExecutorFailure['reason']): ExecutorFailure {
  if (outcome.ok) assert.fail(`expected host_failure/${reason}, got a ${outcome.result_kind} result`);
  assert.equal(outcome.reason, reason, outcome.message);
  assert.equal(outcome.result_kind, 'host_failure');
  assert.equal(outcome.failed_phase, 'host_execute');
  return outcome;
}

describe('command executor', () => {
  let workspace: string;
  before(() => {
    workspace = demoWorkspace();
  });

  it('returns the validated result after leading log lines, with the agent-reported usage', async () => {
    const request = await demoRequest(workspace);
    const outcome = expectSuccess(await agent('ok').run(request, runOptions(workspace)));
    assert.equal(outcome.result_kind, 'validated_progress');
    assert.equal(outcome.result.turn_key, request.turn_key);
    assert.equal(outcome.result.delivery_batch_scale, 'single_surface', 'the alias single_segment is normalized');
    assert.deepEqual(outcome.result.todo, { todo_id: 'todo_related', disposition: 'in_progress' });
    assert.deepEqual(outcome.usage, {
      input_tokens: 1200,
      output_tokens: 300,
      cost_usd: 0.0081,
      estimated: false,
      source: 'agent_reported',
    });
    assert.equal(outcome.exit_code, 0);
    assert.match(outcome.output_excerpt, /^agent: starting/);
  });

  it('carries agent output as inert text: no shell ever sees it', async () => {
    const marker = path.join(tempDir(), 'still-here.txt');
    fs.writeFileSync(marker, 'x');
    const payload = `$(rm -rf ${marker}) \`rm -rf ${marker}\` <script>alert(1)</script>`;
    const outcome = expectSuccess(
      await agent('inert', payload).run(await demoRequest(workspace), runOptions(workspace)),
    );
    assert.equal(outcome.result.summary, payload);
    assert.deepEqual(outcome.result.evidence, [payload]);
    assert.ok(fs.existsSync(marker), 'the text was never executed');
  });

  it('fails with malformed_result on output that is not JSON, and on no output at all', async () => {
    const request = await demoRequest(workspace);
    const garbage = expectFailure(await agent('garbage').run(request, runOptions(workspace)), 'malformed_result');
    assert.match(garbage.message, /no line of the agent's stdout is a JSON object/);
    assert.match(garbage.output_excerpt, /I finished the work/);
    const silent = expectFailure(await agent('silent').run(request, runOptions(workspace)), 'malformed_result');
    assert.match(silent.message, /printed nothing on stdout/);
  });

  it('fails with contract_violation naming the fields', async () => {
    const outcome = expectFailure(
      await agent('violation').run(await demoRequest(workspace), runOptions(workspace)),
      'contract_violation',
    );
    const problems = outcome.problems.join('\n');
    assert.match(problems, /result_kind/);
    assert.match(problems, /next_action/);
    assert.match(problems, /surprise/);
  });

  it('fails with contract_violation when the turn key or the todo does not match the request', async () => {
    const request = await demoRequest(workspace);
    const key = expectFailure(await agent('wrong-key').run(request, runOptions(workspace)), 'contract_violation');
    assert.match(key.problems.join('\n'), /turn_key: sha256:e+ does not match/);
    const todo = expectFailure(await agent('wrong-todo').run(request, runOptions(workspace)), 'contract_violation');
    assert.match(todo.problems.join('\n'), /todo_index is not the selected todo todo_related/);
  });

  it('fails with result_too_large for a result over 12,000 bytes and for output over the cap', async () => {
    const request = await demoRequest(workspace);
    const big = expectFailure(await agent('large-result').run(request, runOptions(workspace)), 'result_too_large');
    assert.match(big.message, /at most 12000/);
    const flood = expectFailure(await agent('flood').run(request, runOptions(workspace)), 'result_too_large');
    assert.match(flood.message, /more than 1048576 bytes to stdout/);
    assert.ok(flood.output_excerpt.length < 3000, 'the excerpt is bounded');
    assert.match(flood.output_excerpt, /more bytes not shown/);
  });

  it('fails with non_zero_exit even when a valid result was printed', async () => {
    const outcome = expectFailure(
      await agent('exit3').run(await demoRequest(workspace), runOptions(workspace)),
      'non_zero_exit',
    );
    assert.equal(outcome.exit_code, 3);
    assert.match(outcome.message, /exited with code 3/);
    assert.match(outcome.stderr_excerpt, /something went wrong/);
  });

  it('fails with spawn_failed when the command does not exist', async () => {
    const executor = createCommandExecutor(['loopx-no-such-agent-binary']);
    const outcome = expectFailure(
      await executor.run(await demoRequest(workspace), runOptions(workspace)),
      'spawn_failed',
    );
    assert.match(outcome.message, /loopx-no-such-agent-binary/);
  });

  it('on timeout kills the whole process tree: the agent and the grandchild it started', async () => {
    const pids = path.join(tempDir(), 'pids.json');
    const outcome = expectFailure(
      await agent('tree', pids).run(await demoRequest(workspace), runOptions(workspace, undefined, 1500)),
      'timeout',
    );
    const { child, grandchild } = JSON.parse(fs.readFileSync(pids, 'utf8')) as { child: number; grandchild: number };
    await waitUntil(() => !isAlive(child), `agent ${child} is gone`, 10_000);
    await waitUntil(() => !isAlive(grandchild), `grandchild ${grandchild} is gone`, 10_000);
    assert.match(outcome.message, /every process it started were stopped/);
  });

  it('stops the agent when the turn is cancelled', async () => {
    const pidFile = path.join(tempDir(), 'pid');
    const controller = new AbortController();
    const running = agent('sleep', pidFile).run(await demoRequest(workspace), {
      ...runOptions(workspace),
      signal: controller.signal,
    });
    const started = (): boolean => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8') !== '';
    await waitUntil(started, 'the agent started', 10_000);
    controller.abort();
    const outcome = expectFailure(await running, 'cancelled');
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    await waitUntil(() => !isAlive(pid), 'the agent is gone', 10_000);
    assert.equal(outcome.exit_code, null);
  });

  it('passes only the allowlisted environment: never a secret of the parent', async () => {
    const envFile = path.join(tempDir(), 'env.json');
    const executor = createCommandExecutor([process.execPath, SCRIPTED_AGENT, 'env', envFile], {
      envAllowlist: ['AGENT_MODEL'],
    });
    const parentEnv = {
      PATH: process.env['PATH'] ?? '',
      HOME: os.homedir(),
      LANG: 'C.UTF-8',
      AGENT_MODEL: 'small',
      SECRET_TOKEN: 'do-not-leak',
      AWS_SECRET_ACCESS_KEY: 'nope',
    };
    expectSuccess(await executor.run(await demoRequest(workspace), runOptions(workspace, parentEnv)));
    const seen = JSON.parse(fs.readFileSync(envFile, 'utf8')) as Record<string, string>;
    assert.equal(seen['SECRET_TOKEN'], undefined);
    assert.equal(seen['AWS_SECRET_ACCESS_KEY'], undefined);
    assert.equal(seen['AGENT_MODEL'], 'small');
    assert.equal(seen['LANG'], 'C.UTF-8');
    assert.equal(seen['LOOPX_GOAL_ID'], 'tidy-notes');
    assert.equal(seen['LOOPX_TODO_ID'], 'todo_related');
    assert.equal(seen['LOOPX_TURN'], 'turn-0002');
    const unexpected = Object.keys(seen).filter(
      (k) => !['PATH', 'HOME', 'LANG', 'AGENT_MODEL'].includes(k) && !k.startsWith('LOOPX_'),
    );
    // Node itself may add nothing but these when it starts; anything else leaked from the parent.
    assert.deepEqual(
      unexpected.filter((k) => k in parentEnv),
      [],
    );
  });
});

describe('bounded process helpers', () => {
  it('buildAgentEnv copies only allowlisted names and skips invalid ones', () => {
    const env = buildAgentEnv({ PATH: '/bin', HOME: '/h', SECRET: 's', 'BAD-NAME': 'x' }, ['BAD-NAME', 'MISSING'], {
      LOOPX_TURN: 't',
    });
    assert.deepEqual(env, { PATH: '/bin', HOME: '/h', LOOPX_TURN: 't' });
  });

  it('outputExcerpt keeps the first bytes, never splits a character and scrubs paths and keys', () => {
    const text = `é${'a'.repeat(10)} /home/someone/project/secret.txt sk-ant-${'x'.repeat(30)}`;
    const excerpt = outputExcerpt(Buffer.from(text), Buffer.byteLength(text), {
      projectRoots: [],
      homeDir: '/home/someone',
    });
    assert.match(excerpt, /<home>\/project\/secret\.txt/);
    assert.match(excerpt, /\[redacted:anthropic_key\]/);
    const cut = outputExcerpt(Buffer.from('ééé'), 6, { projectRoots: [], homeDir: '/h' }, 3);
    assert.equal(cut.split('\n')[0], 'é');
  });

  it('runs an argv without a shell: metacharacters reach the program as plain arguments', async () => {
    const run = await runBoundedProcess({
      argv: [
        process.execPath,
        '-e',
        'process.stdout.write(JSON.stringify(process.argv.slice(1)))',
        '$(echo hi)',
        '; ls',
        '| cat',
      ],
      cwd: os.tmpdir(),
      env: { PATH: process.env['PATH'] ?? '' },
      timeoutMs: 20_000,
    });
    assert.equal(run.end, 'exited');
    assert.deepEqual(JSON.parse(run.stdout.toString('utf8')), ['$(echo hi)', '; ls', '| cat']);
  });
});
