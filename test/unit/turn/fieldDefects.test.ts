import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createClaudeCodeExecutor } from '../../../src/core/executors/claudeCode';
import { FAILED_TURN_USAGE_FIELD } from '../../../src/core/quota/ledger';
import { loadedQuotaSummary } from '../../support/quotaSummary';
import { parseStateDocument } from '../../../src/core/state/document';
import { runOnce } from '../../../src/core/turn/runOnce';
import type { RunOnceOptions } from '../../../src/core/turn/runOnce';
import * as evidenceLogOps from '../../../src/core/ops/evidenceLog';
import * as quotaOps from '../../../src/core/ops/quota';
import * as refreshOps from '../../../src/core/ops/refresh';
import * as todoOps from '../../../src/core/ops/todo';
import * as turnOps from '../../../src/core/ops/turn';
import { fakeToolBin, FIXTURES } from '../executors/helpers';
import { removeTempDirs, clock, demo, goalOf, newSpends, reservations, runRows, tempDir, type Demo } from './helpers';

/**
 * Issue 28's field defects at the turn: a fake `claude` (test/fixtures/executors/bin/fake-tool.js)
 * prints Claude Code's real result envelope, answering the turn LoopX started.
 */

after(removeTempDirs);

const PASSING_VALIDATOR = [process.execPath, '-e', 'process.exit(0)'];

function claudeTurn(d: Demo, sample: string, extra: Record<string, string> = {}): RunOnceOptions & { record: string } {
  const record = path.join(tempDir(), 'record.json');
  return {
    record,
    goal: goalOf(d.registryPath),
    agentId: 'demo',
    clock,
    execute: true,
    validationCommand: PASSING_VALIDATOR,
    env: {
      PATH: `${fakeToolBin('claude')}${path.delimiter}${process.env['PATH'] ?? ''}`,
      HOME: tempDir('loopx-home-'),
      FAKE_SAMPLE: path.join(FIXTURES, sample),
      FAKE_RECORD: record,
      FAKE_ANSWER_TURN: '1',
      FAKE_EXIT_CODE: '0',
      ...extra,
    },
    executorFactory: () => createClaudeCodeExecutor({ envAllowlist: ['FAKE_*'], changeSlackMs: 0 }),
  };
}

function todoStatus(d: Demo, todoId: string): string | undefined {
  // `in_progress` keeps a todo open (claimed by the agent); done and parked todos change status.
  return parseStateDocument(fs.readFileSync(d.statePath, 'utf8')).todos.find((t) => t.todoId === todoId)?.status;
}

describe('issue 28 field defects: the turn', () => {
  describe("3. a failed turn's spend counts against the budget", () => {
    it('error_max_budget_usd ($3.50, exit 1): usage, cost and session on the failed record, counted by the quota, no slot', async () => {
      const d = demo((goal) => {
        (goal['quota'] as Record<string, unknown>)['max_cost_usd'] = 3;
      });
      const failed = await runOnce(claudeTurn(d, 'claude-code/error-max-budget.json', { FAKE_EXIT_CODE: '1' }));
      assert.equal(failed.status, 'failed');
      assert.equal(failed.failure?.reason, 'non_zero_exit');
      assert.match(failed.failure?.message ?? '', /error_max_budget_usd/);
      assert.equal(failed.failure?.usage?.cost_usd, 3.5);
      assert.equal(failed.failure?.session_id, '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b');
      assert.equal(failed.usage?.['cost_usd'], 3.5, "the turn's result shows what it used");
      assert.match(failed.message, /counts against the goal's budgets/);

      const row = (await runRows(d)).find((r) => r.classification === 'host_failure') as Record<string, unknown>;
      assert.equal((row[FAILED_TURN_USAGE_FIELD] as { cost_usd?: number }).cost_usd, 3.5, 'the index row carries it');
      assert.deepEqual(await newSpends(d), [], 'no slot was spent');
      assert.deepEqual(reservations(d), [], 'the slot was released');

      const summary = await loadedQuotaSummary({ registryPath: d.registryPath, goalId: 'tidy-notes', clock });
      assert.equal(summary.budgets.max_cost_usd.used, 3.5, 'quota status shows the failed spend');
      assert.equal(summary.budgets.max_cost_usd.limit, 3);
      assert.ok((summary.budgets.max_cost_usd.ratio ?? 0) > 1, 'over its budget');

      const next = await runOnce(claudeTurn(d, 'claude-code/success.json'));
      assert.equal(next.status, 'stopped', next.message);
      assert.match(next.message, /not admitted: .*max_cost_usd budget is used up \(3\.5 spent/);
    });

    it('no JSON result (exit 0, $0.18734): the failed turn counts its cost and tokens', async () => {
      const d = demo();
      const failed = await runOnce(claudeTurn(d, 'claude-code/no-result-object.json'));
      assert.equal(failed.failure?.reason, 'malformed_result');
      const summary = await loadedQuotaSummary({ registryPath: d.registryPath, goalId: 'tidy-notes', clock });
      assert.equal(summary.budgets.max_cost_usd.used, 0.18734);
    });
  });

  describe('4. resume reaches the CLI', () => {
    it('the second turn on an in-progress todo plans resume with the first session, and claude gets --resume <id>', async () => {
      const d = demo();
      const first = claudeTurn(d, 'claude-code/progress.json');
      const progressed = await runOnce(first);
      assert.equal(progressed.status, 'committed', progressed.message);
      assert.ok(!JSON.parse(fs.readFileSync(first.record, 'utf8')).argv.includes('--resume'));

      const second = claudeTurn(d, 'claude-code/progress.json');
      const resumed = await runOnce(second);
      assert.equal(resumed.plan?.session.action, 'resume');
      assert.equal(resumed.plan?.session.session_id, '7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d0e');
      const argv = (JSON.parse(fs.readFileSync(second.record, 'utf8')) as { argv: string[] }).argv;
      assert.deepEqual(argv.slice(0, 5), [
        '-p',
        '--output-format',
        'json',
        '--resume',
        '7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d0e',
      ]);
    });
  });

  describe('7. denied writes are not committed as done', () => {
    it('a Write in permission_denials claimed in changed_files fails validation with the reason; the todo stays open, nothing spent', async () => {
      const d = demo();
      const turn = await runOnce(claudeTurn(d, 'claude-code/denied-write.json'));
      assert.equal(turn.status, 'failed', turn.message);
      assert.equal(turn.failure?.reason, 'claimed_changes_unverified');
      assert.equal(turn.receipt?.failed_phase, 'validation');
      assert.match(
        turn.failure?.message ?? '',
        /notes\/index\.md: claimed as changed but the agent's Write of it was denied/,
      );
      assert.equal(todoStatus(d, 'todo_related'), 'open');
      assert.deepEqual(await newSpends(d), []);
      assert.equal(fs.existsSync(path.join(d.workspace, 'notes', 'index.md')), false);
    });

    it('a claimed change the working tree does not show fails validation; the files really written commit', async () => {
      const d = demo();
      const stale = await runOnce(claudeTurn(d, 'claude-code/success.json', { FAKE_TOUCH: 'notes/bikes.md' }));
      assert.equal(stale.failure?.reason, 'claimed_changes_unverified');
      assert.match(
        stale.failure?.message ?? '',
        /notes\/bread\.md: claimed as changed but it was not modified during the turn/,
      );
      const retried = await runOnce({
        ...claudeTurn(d, 'claude-code/success.json', {
          FAKE_TOUCH: 'notes/bikes.md,notes/bread.md,notes/gardening.md',
        }),
        resumeTurnKey: stale.turn_key ?? '',
        retryFailedTurn: true,
      });
      assert.equal(retried.status, 'committed', retried.message);
      assert.equal(retried.effects.host_invoked, true, 'a retry runs the agent again');
    });
  });
});

describe('issue 28 defect 9: an empty --turn-instance-id is a usage error everywhere', () => {
  it('every operation that takes a turn id refuses "" and "  " (never "no turn")', () => {
    const ops = [evidenceLogOps, refreshOps, quotaOps, todoOps, turnOps];
    const withTurn = ops
      .flatMap((module) => Object.values(module))
      .filter(
        (
          op,
        ): op is {
          key: string;
          args: { shape: Record<string, { safeParse: (v: unknown) => { success: boolean } }> };
        } =>
          typeof op === 'object' &&
          op !== null &&
          'args' in op &&
          'key' in op &&
          'turnInstanceId' in (op as { args: { shape: object } }).args.shape,
      );
    assert.ok(withTurn.length >= 6, `found ${withTurn.map((op) => op.key).join(', ')}`);
    for (const op of withTurn) {
      const field = op.args.shape['turnInstanceId'];
      assert.ok(field !== undefined);
      for (const blank of ['', '  '])
        assert.equal(field.safeParse(blank).success, false, `${op.key} takes ${JSON.stringify(blank)}`);
      assert.equal(field.safeParse('2026-12-01T06:00:00Z').success, true, op.key);
    }
  });
});
