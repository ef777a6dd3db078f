import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadedQuotaSummary } from '../../support/quotaSummary';
import { parseStateDocument } from '../../../src/core/state/document';
import { readJournal } from '../../../src/core/turn/journal';
import { TurnEventSchema, type TurnEvent } from '../../../src/core/turn/events';
import { runOnce, TurnRunResultSchema } from '../../../src/core/turn/runOnce';
import { AGENT, removeTempDirs, clock, demo, fixtureRun, newSpends, reservations, runRows, type Demo } from './helpers';

after(removeTempDirs);

function todo(d: Demo, todoId: string) {
  const item = parseStateDocument(fs.readFileSync(d.statePath, 'utf8')).todos.find((t) => t.todoId === todoId);
  assert.ok(item, `todo ${todoId} is in the state file`);
  return item;
}

/** Every file under the workspace with its content, to prove a call wrote nothing. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true }).map(String).sort()) {
    const full = path.join(dir, entry);
    out[entry] = fs.statSync(full).isDirectory() ? '<dir>' : fs.readFileSync(full, 'utf8');
  }
  return out;
}

const NODE = process.execPath;

describe('turn run-once (spec §3.4–§3.9)', () => {
  it('without --execute is a preview: it plans the turn and invokes and writes nothing', async () => {
    const d = demo();
    const before = tree(d.workspace);
    const result = await runOnce({ ...fixtureRun(d, 'complete'), execute: false });
    assert.equal(result.status, 'preview');
    assert.equal(result.todo_id, 'todo_related');
    assert.equal(result.plan?.host_request?.selected_todo?.todo_id, 'todo_related');
    assert.deepEqual(result.effects, {
      host_invoked: false,
      state_written: false,
      quota_spent: false,
      scheduler_acknowledged: false,
    });
    assert.deepEqual(tree(d.workspace), before);
  });

  it('commits a turn: reserve, host, typed result, validation, writeback, exactly one spend with the reported usage, scheduler', async () => {
    const d = demo((goal) => {
      (goal['quota'] as Record<string, unknown>)['max_cost_usd'] = 5;
    });
    const events: TurnEvent[] = [];
    const result = TurnRunResultSchema.parse(
      await runOnce(
        fixtureRun(d, 'complete', { turnInstanceId: 'turn-a', onEvent: (e) => events.push(TurnEventSchema.parse(e)) }),
      ),
    );
    assert.equal(result.status, 'committed', result.message);
    assert.equal(result.result_kind, 'validated_completion');
    assert.deepEqual(result.effects, {
      host_invoked: true,
      state_written: true,
      quota_spent: true,
      scheduler_acknowledged: true,
    });
    assert.equal(result.validation?.status, 'passed');
    assert.equal(result.receipt?.status, 'committed');
    assert.equal(result.settlement_identity?.effect_id, 'tidy-notes:demo:todo_related:turn-a');
    assert.equal(result.quota_slot_spend_count, 1);
    assert.deepEqual(result.scheduler, { owner: 'outer_controller_owned', phase: 'completed' });
    assert.deepEqual(
      events.map((e) => (e.type === 'phase_done' ? e.phase : e.type)),
      [
        'turn_started',
        'admission',
        'host_execute',
        'typed_result',
        'validation',
        'durable_writeback',
        'quota_spend',
        'scheduler_apply',
        'scheduler_ack',
        'turn_ended',
      ],
    );

    const related = todo(d, 'todo_related');
    assert.equal(related.status, 'done');
    assert.equal(related.meta['evidence'], 'fixture did it');
    assert.equal(related.meta['no_followup'], 'true');
    assert.match(fs.readFileSync(d.statePath, 'utf8'), /## Next Action\n\n- Run the next turn\.\n/);

    const spends = await newSpends(d);
    assert.equal(spends.length, 1);
    const spend = JSON.parse(fs.readFileSync(path.join(d.workspace, spends[0]?.json_path ?? ''), 'utf8')) as Record<
      string,
      unknown
    >;
    assert.deepEqual(
      (spend['settlement_identity'] as Record<string, unknown>)['effect_id'],
      'tidy-notes:demo:todo_related:turn-a',
    );
    const usage = spend['usage'] as Record<string, unknown>;
    assert.equal(usage['tokens'], 1200);
    assert.equal(usage['cost_usd'], 0.01);
    assert.equal(usage['estimated'], false);
    assert.equal(typeof usage['minutes'], 'number');
    assert.equal((spend['quota_event'] as Record<string, unknown>)['turn_instance_id'], 'turn-a');

    const run = (await runRows(d)).find(
      (r) =>
        r.classification === 'validated_completion' && (r as Record<string, unknown>)['turn_instance_id'] === 'turn-a',
    );
    assert.ok(run, 'an accountable run record of the turn');
    const record = JSON.parse(fs.readFileSync(path.join(d.workspace, run.json_path ?? ''), 'utf8')) as Record<
      string,
      unknown
    >;
    assert.equal(record['host_classification'], 'fixture_progress');
    assert.equal(record['delivery_outcome'], 'outcome_progress');
    assert.deepEqual(
      (record['settlement_identity'] as Record<string, unknown>)['effect_id'],
      'tidy-notes:demo:todo_related:turn-a',
    );
    assert.deepEqual(reservations(d), []);

    const summary = await loadedQuotaSummary({ registryPath: d.registryPath, goalId: 'tidy-notes', clock });
    assert.equal(summary.budgets.max_cost_usd.used, 0.01, 'the spend feeds the cost budget');
    assert.equal(summary.budgets.max_tokens.used, 1200);

    const journal = await readJournal(result.journal_path ?? '');
    assert.equal(journal?.status, 'committed');
    assert.equal(journal?.completed_phases.length, 7);
    // The estimate admission held stays in the journal once settled (with no profile estimate and
    // no history: the whole $5 budget), so an overrun of it can be told from an overspend.
    assert.deepEqual(journal?.reservation, { status: 'settled', expires_at: null, estimate: { cost_usd: 5 } });
  });

  it('replays a finished turn: its recorded outcome, all effects false, nothing new written', async () => {
    const d = demo();
    const first = await runOnce(fixtureRun(d, 'complete'));
    const before = tree(d.workspace);
    const replay = await runOnce(fixtureRun(d, 'exit1', { resumeTurnKey: first.turn_key ?? '' }));
    assert.equal(replay.replayed, true);
    assert.equal(replay.status, 'committed');
    assert.deepEqual(replay.effects, {
      host_invoked: false,
      state_written: false,
      quota_spent: false,
      scheduler_acknowledged: false,
    });
    assert.equal(replay.quota_slot_spend_count, 1);
    assert.deepEqual(tree(d.workspace), before);
  });

  it('writes a successor todo, or keeps a progressed todo open and claimed by the agent', async () => {
    const d = demo();
    const done = await runOnce(fixtureRun(d, 'successor'));
    assert.equal(done.status, 'committed');
    const successorId = todo(d, 'todo_related').meta['successor_todo_ids'] ?? '';
    assert.match(todo(d, successorId).text, /Follow up on the fixture work/);

    const progressed = await runOnce(fixtureRun(d, 'progress'));
    assert.equal(progressed.status, 'committed');
    assert.equal(progressed.todo_id, 'todo_index');
    assert.equal(todo(d, 'todo_index').status, 'open');
    assert.equal(todo(d, 'todo_index').meta['claimed_by'], 'demo');
    assert.equal((await newSpends(d)).length, 2);
  });

  it('case 33: host writes an artifact, the validator checks it: committed, rows [classification, quota_slot_spent]; a resume replays with no effects', async () => {
    const d = demo();
    const validator = [NODE, '-e', "process.exit(require('fs').existsSync('out/artifact.txt') ? 0 : 3)"];
    const rowsBefore = (await runRows(d)).length;
    const result = await runOnce(
      fixtureRun(d, 'x', {
        hostAdapterCommand: [NODE, AGENT, 'artifact', 'out/artifact.txt'],
        validationCommand: validator,
      }),
    );
    assert.equal(result.status, 'committed', result.message);
    assert.equal(result.validation?.status, 'passed');
    assert.deepEqual(result.validation?.command, validator);
    assert.deepEqual(result.effects, {
      host_invoked: true,
      state_written: true,
      quota_spent: true,
      scheduler_acknowledged: true,
    });
    assert.deepEqual(result.scheduler, { owner: 'outer_controller_owned', phase: 'completed' });
    const rows = await runRows(d);
    assert.deepEqual(
      rows
        .slice(0, rows.length - rowsBefore)
        .map((r) => r.classification)
        .reverse(),
      ['validated_progress', 'quota_slot_spent'],
    );
    const again = await runOnce(
      fixtureRun(d, 'x', { resumeTurnKey: result.turn_key ?? '', validationCommand: validator }),
    );
    assert.equal(again.status, 'committed');
    assert.deepEqual(again.effects, {
      host_invoked: false,
      state_written: false,
      quota_spent: false,
      scheduler_acknowledged: false,
    });
    assert.equal((await runRows(d)).length, rows.length);
  });

  it('case 34: a validator exiting 9 with recovery replan_required fails the turn: state unchanged, no spend, slot released', async () => {
    const d = demo();
    const state = fs.readFileSync(d.statePath, 'utf8');
    const result = await runOnce(
      fixtureRun(d, 'complete', {
        validationCommand: [NODE, '-e', 'process.exit(9)'],
        validationFailureKind: 'replan_required',
      }),
    );
    assert.equal(result.ok, false);
    assert.equal(result.status, 'failed');
    assert.equal(result.result_kind, 'validation_failed');
    assert.equal(result.validation?.recovery_kind, 'replan_required');
    assert.equal(result.validation?.exit_code, 9);
    assert.deepEqual(result.receipt?.completed_phases, ['host_execute', 'typed_result']);
    assert.equal(result.receipt?.failed_phase, 'validation');
    assert.equal(fs.readFileSync(d.statePath, 'utf8'), state);
    assert.deepEqual(await newSpends(d), []);
    assert.deepEqual(reservations(d), []);
    // Ours: the failure is evidence (a non-accountable agent-lane record), never a delivery.
    const failures = (await runRows(d)).filter((r) => r.classification === 'validation_failed');
    assert.equal(failures.length, 1);
    assert.equal(failures[0]?.progress_scope, 'agent_lane');
  });

  it('case 35: a validator reporting progress with exit 10 commits the turn with one spend', async () => {
    const d = demo();
    const result = await runOnce(
      fixtureRun(d, 'complete', {
        validationCommand: [NODE, '-e', 'console.log(JSON.stringify({status:"progress"})); process.exit(10)'],
      }),
    );
    assert.equal(result.status, 'committed', result.message);
    assert.equal(result.validation?.status, 'progress');
    assert.equal(result.quota_slot_spend_count, 1);
  });

  it('retries a failed validation from its last safe phase: the host result is kept, the agent does not run again', async () => {
    const d = demo();
    const counter = path.join(d.workspace, 'host-runs.txt');
    const marker = path.join(d.workspace, 'ready.flag');
    const validator = [NODE, '-e', `process.exit(require('fs').existsSync(${JSON.stringify(marker)}) ? 0 : 1)`];
    const options = fixtureRun(d, 'x', {
      hostAdapterCommand: [NODE, AGENT, 'count', counter],
      validationCommand: validator,
    });
    const failed = await runOnce(options);
    assert.equal(failed.status, 'failed');
    fs.writeFileSync(marker, 'ok');
    const retried = await runOnce({ ...options, resumeTurnKey: failed.turn_key ?? '', retryFailedTurn: true });
    assert.equal(retried.status, 'committed', retried.message);
    assert.equal(retried.resumed, true);
    assert.equal(retried.effects.host_invoked, false);
    assert.equal(fs.readFileSync(counter, 'utf8'), 'run\n', 'the agent ran once');
    assert.equal((await newSpends(d)).length, 1);
    const journal = await readJournal(retried.journal_path ?? '');
    assert.equal(journal?.attempts, 2);
    // A failed turn is not retried without asking.
    const replay = await runOnce({ ...options, resumeTurnKey: failed.turn_key ?? '' });
    assert.equal(replay.replayed, true);
  });

  it('host failures (non-zero exit, malformed result) are recorded with the scrubbed output, release the slot and never spend; a retry re-runs the host', async () => {
    const d = demo();
    const crashed = await runOnce(fixtureRun(d, 'exit1'));
    assert.equal(crashed.status, 'failed');
    assert.equal(crashed.result_kind, 'host_failure');
    assert.equal(crashed.failure?.reason, 'non_zero_exit');
    assert.match(crashed.failure?.output_excerpt ?? '', /partial output before the crash/);
    assert.match(crashed.failure?.output_excerpt ?? '', /agent error: boom/);
    assert.deepEqual(crashed.receipt?.completed_phases, []);
    assert.equal(crashed.receipt?.failed_phase, 'host_execute');

    const garbage = await runOnce(
      fixtureRun(d, 'garbage', { resumeTurnKey: crashed.turn_key ?? '', retryFailedTurn: true }),
    );
    assert.equal(garbage.failure?.reason, 'malformed_result');
    const record = (await runRows(d)).find(
      (r) => r.classification === 'host_failure' && (r as Record<string, unknown>)['turn_attempt'] === 2,
    );
    assert.ok(record, 'one failure record per attempt');
    const text = fs.readFileSync(path.join(d.workspace, record.json_path ?? ''), 'utf8');
    assert.match(text, /forgot the JSON/);
    assert.doesNotMatch(text, /\/home\/someone/, 'absolute paths are scrubbed');
    assert.deepEqual(await newSpends(d), []);
    assert.deepEqual(reservations(d), []);
    assert.equal(todo(d, 'todo_related').status, 'open');

    const fixed = await runOnce(
      fixtureRun(d, 'complete', { resumeTurnKey: crashed.turn_key ?? '', retryFailedTurn: true }),
    );
    assert.equal(fixed.status, 'committed');
    assert.equal(fixed.effects.host_invoked, true);
    assert.equal((await newSpends(d)).length, 1);
  });

  it('a hanging agent is killed at its timeout and becomes a recorded host_failure with no spend', async () => {
    const d = demo((goal) => {
      (goal['coordination'] as Record<string, unknown>)['agent_profiles'] = {
        demo: { executor: { preset: 'command', command: [NODE, AGENT, 'hang'], timeout_minutes: 0.01 } },
      };
    });
    const result = await runOnce({ ...fixtureRun(d, 'hang'), hostAdapterCommand: undefined });
    assert.equal(result.status, 'failed');
    assert.equal(result.failure?.reason, 'timeout');
    assert.deepEqual(await newSpends(d), []);
    assert.deepEqual(reservations(d), []);
    assert.ok((await runRows(d)).some((r) => r.classification === 'host_failure'));
  });

  it('a question for the user stops the turn: the todo is parked behind a new gate, nothing is spent, a replay asks nothing twice', async () => {
    const d = demo();
    const asked = await runOnce(fixtureRun(d, 'ask'));
    assert.equal(asked.status, 'stopped');
    assert.equal(asked.result_kind, 'user_action_required');
    assert.deepEqual(asked.receipt?.completed_phases, ['host_execute', 'typed_result']);
    assert.equal(asked.receipt?.status, 'stopped');
    assert.equal(asked.effects.quota_spent, false);
    assert.equal(todo(d, 'todo_related').status, 'blocked');
    const gates = parseStateDocument(fs.readFileSync(d.statePath, 'utf8')).todos.filter(
      (t) => t.role === 'user' && t.meta['task_class'] === 'user_gate' && t.meta['unblocks_todo_id'] === 'todo_related',
    );
    assert.equal(gates.length, 1);
    assert.match(gates[0]?.text ?? '', /May I delete the old drafts folder\?/);
    assert.equal(gates[0]?.meta['blocks_agent'], 'demo');
    assert.deepEqual(await newSpends(d), []);
    assert.deepEqual(reservations(d), []);
    const state = fs.readFileSync(d.statePath, 'utf8');
    await runOnce(fixtureRun(d, 'ask', { resumeTurnKey: asked.turn_key ?? '' }));
    assert.equal(fs.readFileSync(d.statePath, 'utf8'), state);
    // The next turn takes the next todo.
    const next = await runOnce({ ...fixtureRun(d, 'complete'), execute: false });
    assert.equal(next.todo_id, 'todo_index');
  });

  it('a wait result stops the turn without writing the state or spending', async () => {
    const d = demo();
    const state = fs.readFileSync(d.statePath, 'utf8');
    const result = await runOnce(fixtureRun(d, 'wait'));
    assert.equal(result.status, 'stopped');
    assert.equal(result.result_kind, 'wait');
    assert.equal(fs.readFileSync(d.statePath, 'utf8'), state);
    assert.deepEqual(await newSpends(d), []);
  });

  it('admission never exceeds the quota: with every slot used there is no turn', async () => {
    // The demo history holds one spend in the window; one allowed slot is then used up.
    const d = demo((goal) => {
      (goal['quota'] as Record<string, unknown>)['allowed_slots'] = 1;
    });
    const result = await runOnce(fixtureRun(d, 'complete'));
    // The demo's open user gate puts the goal at the operator gate, where LoopX's safe bypass would run one
    // non-gated todo whatever the slots say; our reservation still refuses it (docs/compatibility.md).
    assert.equal(result.plan?.decision.state, 'operator_gate');
    assert.equal(result.status, 'stopped');
    assert.match(result.message, /quota refused: 1 spent \+ 0 reserved \+ 1 requested exceeds the 1 allowed slots/);
    assert.equal(result.effects.host_invoked, false);
    assert.deepEqual(await newSpends(d), []);
  });

  it('an unfinished turn of the agent (cancelled mid-host) is resumed before a new one starts', async () => {
    const d = demo();
    const controller = new AbortController();
    const pending = runOnce(
      fixtureRun(d, 'x', { hostAdapterCommand: [NODE, AGENT, 'slow', '5000'], signal: controller.signal }),
    );
    setTimeout(() => controller.abort(), 400);
    const cancelled = await pending;
    assert.equal(cancelled.status, 'cancelled');
    assert.deepEqual(reservations(d), [], 'the slot is released when the work was not accepted');
    assert.equal((await readJournal(cancelled.journal_path ?? ''))?.status, 'in_progress');
    const resumed = await runOnce(fixtureRun(d, 'complete'));
    assert.equal(resumed.turn_key, cancelled.turn_key);
    assert.equal(resumed.resumed, true);
    assert.equal(resumed.status, 'committed');
    assert.equal((await newSpends(d)).length, 1);
  });
});
