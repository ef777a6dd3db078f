import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { parseRolloutEvents, rolloutEventId, rolloutEventLogPath } from '../../../src/core/evidence/rolloutLog';
import { expectSuccess, REPO_ROOT, startTogether } from '../../support/barrier';
import { makeWorkspace, NOW, readIndexRows, type Workspace } from '../quota/helpers';
import { ONE_TODO } from './helpers';

/**
 * Real processes: the CLI bundled as `node out/cli.js` would run it (with the test crash hook
 * left in, as in the turn crash tests), and writers of the event log started behind a barrier.
 */

let cli = '';

before(async function () {
  this.timeout(120_000);
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-hb-cli-'));
  await esbuild.build({
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    logLevel: 'warning',
    entryPoints: [path.join(REPO_ROOT, 'src/cli/main.ts')],
    outfile: path.join(outDir, 'cli.js'),
  });
  cli = path.join(outDir, 'cli.js');
});

function loopx(ws: Workspace, args: string[], env: NodeJS.ProcessEnv = {}) {
  const run = spawnSync(process.execPath, [cli, '--registry', ws.registryPath, '--format', 'json', ...args], {
    cwd: ws.dir,
    env: { PATH: process.env['PATH'], HOME: ws.dir, LOOPX_NOW: NOW, ...env },
    encoding: 'utf8',
  });
  return { code: run.status, signal: run.signal, stdout: run.stdout, stderr: run.stderr };
}

const STEPS = (turn: string): string[][] => [
  ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'agent-a', '--turn-instance-id', turn],
  [
    'refresh-state',
    '--goal-id',
    'g',
    '--agent-id',
    'agent-a',
    '--classification',
    'validated_progress',
    '--delivery-outcome',
    'outcome_progress',
    '--turn-instance-id',
    turn,
  ],
  ['quota', 'spend-slot', '--goal-id', 'g', '--agent-id', 'agent-a', '--turn-instance-id', turn, '--execute'],
];

function logEvents(ws: Workspace): Record<string, unknown>[] {
  return parseRolloutEvents(fs.readFileSync(rolloutEventLogPath(ws.runtimeRoot, 'g'), 'utf8')).events;
}

function assertOneChain(ws: Workspace, turn: string): void {
  const rows = readIndexRows(ws);
  assert.equal(rows.filter((r) => r['classification'] === 'quota_slot_spent').length, 1, 'exactly one spend');
  assert.equal(rows.filter((r) => r['classification'] === 'validated_progress').length, 1, 'exactly one writeback');
  const events = logEvents(ws).filter((e) => e['run_id'] === turn);
  assert.deepEqual(
    events.map((e) => e['event_kind']),
    ['quota_should_run', 'refresh_state', 'quota_spend'],
  );
  const bound = new Set(events.map((e) => (e['details'] as Record<string, unknown>)['todo_id']));
  assert.deepEqual([...bound], ['todo_parser'], 'one bound todo across the chain');
}

describe('heartbeat replay with real processes', function () {
  this.timeout(300_000);

  it('the same heartbeat replayed 20 times spends exactly once and binds one todo', () => {
    const ws = makeWorkspace();
    for (let i = 0; i < 20; i++) {
      for (const step of STEPS('T')) {
        const run = loopx(ws, step);
        assert.equal(run.code, 0, `${step.join(' ')} (round ${i}): ${run.stderr}${run.stdout}`);
      }
    }
    assertOneChain(ws, 'T');
  });

  for (const checkpoint of ['should_run:receipt', 'refresh_state:effect', 'spend_slot:effect']) {
    it(`killed at ${checkpoint} (written, answer or event not yet) and retried: one spend, one chain`, () => {
      const ws = makeWorkspace();
      let crashes = 0;
      for (const step of STEPS('K')) {
        const crashed = loopx(ws, step, { LOOPX_TEST_CRASH_AT_PHASE: checkpoint });
        if (crashed.signal === 'SIGKILL') {
          crashes++;
          const retry = loopx(ws, step);
          assert.equal(retry.code, 0, retry.stderr + retry.stdout);
          const answer = JSON.parse(retry.stdout) as Record<string, unknown>;
          // should-run says so on its receipt; the writes say idempotent_replay.
          const replayed =
            step[1] === 'should-run'
              ? (answer['heartbeat_receipt'] as Record<string, unknown>)['replayed']
              : answer['idempotent_replay'];
          assert.equal(replayed, true, retry.stdout);
        } else assert.equal(crashed.code, 0, crashed.stderr + crashed.stdout);
      }
      assert.equal(crashes, 1, 'the checkpoint was reached once');
      // And the whole heartbeat once more, as a scheduler retrying after the crash would.
      for (const step of STEPS('K')) assert.equal(loopx(ws, step).code, 0);
      assertOneChain(ws, 'K');
    });
  }

  it('4 processes appending 50 events each behind a barrier: 200 lines, none lost, every line valid', async () => {
    const ws = makeWorkspace();
    const goalDir = path.join(ws.runtimeRoot, 'goals', 'g');
    const script = path.join(REPO_ROOT, 'test', 'unit', 'evidence', 'workers', 'appendWorker.ts');
    const workers = await startTogether(
      ['w1', 'w2', 'w3', 'w4'].map((w) => ({ script, args: [goalDir, 'g', w, '50'] })),
    );
    for (const worker of workers) await expectSuccess(worker);
    const text = fs.readFileSync(rolloutEventLogPath(ws.runtimeRoot, 'g'), 'utf8');
    const parsed = parseRolloutEvents(text);
    assert.equal(parsed.skipped.length, 0);
    assert.equal(parsed.events.length, 200);
    assert.equal(new Set(parsed.events.map((e) => e.run_id)).size, 200);
    for (const event of parsed.events) assert.equal(event.event_id, rolloutEventId(event));
  });
});

/** `quota should-run` for `agent` with turn id `turn`, from a real process behind the start barrier. */
function shouldRunWorker(ws: Workspace, agent: string, turn: string) {
  return {
    script: path.join(REPO_ROOT, 'test', 'unit', 'evidence', 'workers', 'cliWorker.ts'),
    args: [
      ws.dir,
      NOW,
      ...['--registry', ws.registryPath, '--format', 'json', 'quota', 'should-run', '--goal-id', 'g'],
      ...['--agent-id', agent, '--turn-instance-id', turn],
    ],
  };
}

async function raceShouldRun(ws: Workspace, runs: [string, string][]): Promise<Record<string, unknown>[]> {
  const workers = await startTogether(runs.map(([agent, turn]) => shouldRunWorker(ws, agent, turn)));
  const answers: Record<string, unknown>[] = [];
  for (const worker of workers) {
    await expectSuccess(worker);
    answers.push(JSON.parse(worker.stdout()) as Record<string, unknown>);
  }
  return answers;
}

const receiptOf = (answer: Record<string, unknown>) => answer['heartbeat_receipt'] as Record<string, unknown> | null;
const receiptEvents = (ws: Workspace) => logEvents(ws).filter((e) => e['event_kind'] === 'quota_should_run');

describe('concurrent heartbeat receipts (real processes behind a start barrier)', function () {
  this.timeout(300_000);

  it('the same T from two processes at once: exactly one receipt, both answer the same bound todo', async () => {
    const ws = makeWorkspace({}, ONE_TODO);
    const answers = await raceShouldRun(ws, [
      ['agent-a', 'T-same'],
      ['agent-a', 'T-same'],
    ]);
    assert.equal(receiptEvents(ws).length, 1, 'one receipt in the log');
    const receipts = answers.map(receiptOf);
    assert.deepEqual(
      receipts.map((r) => r?.['todo_id']),
      ['todo_parser', 'todo_parser'],
    );
    assert.equal(receipts[0]?.['event_id'], receipts[1]?.['event_id'], 'the same receipt');
    assert.deepEqual(receipts.map((r) => r?.['replayed']).sort(), [false, true], 'one wrote it, one replayed it');
    assert.deepEqual(
      answers.map((a) => (a['selected_todo'] as Record<string, unknown> | null)?.['todo_id']),
      ['todo_parser', 'todo_parser'],
    );
  });

  // The original's rule: the guard never selects a todo claimed by another agent (spec §3.2) nor, in any
  // mode, one another agent holds a task lease on (§6.3); should-run itself claims nothing.
  const claimed = ONE_TODO.replace('task_class=advancement_task', 'task_class=advancement_task claimed_by=agent-a');

  it('two agents with two T on a todo claimed by one: only the claimant binds it', async () => {
    const ws = makeWorkspace({}, claimed);
    const [a, b] = await raceShouldRun(ws, [
      ['agent-a', 'T-a'],
      ['agent-b', 'T-b'],
    ]);
    assert.equal(receiptOf(a ?? {})?.['todo_id'], 'todo_parser');
    assert.notEqual(receiptOf(b ?? {})?.['todo_id'], 'todo_parser', JSON.stringify(b));
    const bound = receiptEvents(ws).filter(
      (e) => (e['details'] as Record<string, unknown>)['todo_id'] === 'todo_parser',
    );
    assert.deepEqual(
      bound.map((e) => [e['agent_id'], e['run_id']]),
      [['agent-a', 'T-a']],
    );
  });

  it('two agents with two T on a todo one of them leases (hard_lease): only the holder binds it', async () => {
    const ws = makeWorkspace({ handoff_mode: 'hard_lease' }, ONE_TODO);
    const lease = loopx(ws, [
      ...['task-lease', 'acquire', '--goal-id', 'g', '--todo-id', 'todo_parser'],
      ...['--owner', 'agent-b', '--idempotency-key', 'hb-race'],
    ]);
    assert.equal(lease.code, 0, lease.stderr + lease.stdout);
    const [a, b] = await raceShouldRun(ws, [
      ['agent-a', 'T-a'],
      ['agent-b', 'T-b'],
    ]);
    assert.equal(receiptOf(b ?? {})?.['todo_id'], 'todo_parser');
    assert.notEqual(receiptOf(a ?? {})?.['todo_id'], 'todo_parser', JSON.stringify(a));
    const bound = receiptEvents(ws).filter(
      (e) => (e['details'] as Record<string, unknown>)['todo_id'] === 'todo_parser',
    );
    assert.deepEqual(
      bound.map((e) => [e['agent_id'], e['run_id']]),
      [['agent-b', 'T-b']],
    );
  });
});
