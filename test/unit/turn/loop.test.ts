import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseStateDocument } from '../../../src/core/state/document';
import { TurnEventEmitter, TurnEventSchema, type TurnEvent } from '../../../src/core/turn/events';
import { ACTIVE_DIR, listActiveJournals, listJournals, turnsDir } from '../../../src/core/turn/journal';
import { runLoop, type RunLoopOptions } from '../../../src/core/turn/loop';
import { runOnce } from '../../../src/core/turn/runOnce';
import {
  AGENT,
  removeTempDirs,
  clock,
  demo,
  demoExecutorFactory,
  goalOf,
  fixtureRun,
  lastJson,
  newSpends,
  reservations,
  runTurnProcess,
  type Demo,
} from './helpers';
import { waitUntil } from '../../support/waitFor';

after(removeTempDirs);

const NODE = process.execPath;
const MULTI = { mode: 'multi_subagent', allowed: true, max_children: 2 };

function loopOptions(d: Demo, extra: Partial<RunLoopOptions> = {}): RunLoopOptions {
  return {
    goal: goalOf(d.registryPath),
    agentIds: ['demo'],
    clock,
    env: { PATH: process.env['PATH'] ?? '' },
    ...extra,
  };
}

/** Lets codex-main's claim go, so both agents compete for the same todos. */
function releaseClaim(d: Demo): void {
  fs.writeFileSync(d.statePath, fs.readFileSync(d.statePath, 'utf8').replace(' claimed_by=codex-main', ''));
}

/** The most turns that were running at the same moment, from the events. */
function peakConcurrency(events: readonly TurnEvent[]): number {
  let running = 0;
  let peak = 0;
  for (const e of events) {
    if (e.type === 'turn_started') peak = Math.max(peak, ++running);
    if (e.type === 'turn_ended') running--;
  }
  return peak;
}

describe('turn loop', function () {
  this.timeout(60_000);

  it('runs the demo goal with the demo agent until the user gate, skipping the todo codex-main claimed', async () => {
    const d = demo();
    const emitter = new TurnEventEmitter();
    const events: TurnEvent[] = [];
    emitter.on((e) => events.push(TurnEventSchema.parse(e)));
    const result = await runLoop(loopOptions(d, { onEvent: emitter.emit, executorFactory: demoExecutorFactory }));
    assert.equal(result.stop_reason, 'user_action', result.message);
    assert.equal(result.disposition, 'user_action_required');
    assert.deepEqual(
      result.turns.map((t) => [t.todo_id, t.status]),
      [
        ['todo_related', 'committed'],
        ['todo_index', 'committed'],
      ],
    );
    assert.equal(result.spend_count, 2);
    assert.match(result.message, /todo_gate_publish/);
    assert.match(result.message, /skipped todo_links \(claimed by codex-main\)/);
    assert.ok(result.skipped_todos.some((s) => s.todo_id === 'todo_links' && s.reason === 'claimed_by_other_agent'));
    const stopped = events.at(-1);
    assert.equal(stopped?.type, 'loop_stopped');
    assert.equal(events.filter((e) => e.type === 'turn_ended').length, 2);
    assert.equal((await newSpends(d)).length, 2);
    assert.ok(fs.existsSync(`${d.workspace}/notes/index.md`), 'the demo agent really wrote the index');
  });

  it('stops on the budget before a turn whose estimated cost no longer fits max_cost_usd', async () => {
    const d = demo((goal) => {
      (goal['quota'] as Record<string, unknown>)['max_cost_usd'] = 0.015;
    });
    const result = await runLoop(loopOptions(d, { hostAdapterCommand: [NODE, AGENT, 'complete'] }));
    assert.equal(result.stop_reason, 'budget', result.message);
    // The agent reports $0.01 a turn: after one, the average ($0.01) no longer fits the $0.005 left,
    // so the second turn is refused at admission instead of overspending to $0.02.
    assert.equal(result.turn_count, 2);
    assert.equal(result.spend_count, 1);
    assert.match(result.message, /max_cost_usd/);
    const spent = (await newSpends(d)).map((r) => (r as { usage?: { cost_usd?: number } }).usage?.cost_usd ?? 0);
    assert.deepEqual(spent, [0.01]);
  });

  it('stops after --max-turns turns', async () => {
    const d = demo();
    const result = await runLoop(loopOptions(d, { hostAdapterCommand: [NODE, AGENT, 'complete'], maxTurns: 1 }));
    assert.equal(result.stop_reason, 'max_turns');
    assert.equal(result.turn_count, 1);
  });

  it('stops on a failed turn whose next step is a retry, and on a repair result', async () => {
    const failed = await runLoop(loopOptions(demo(), { hostAdapterCommand: [NODE, AGENT, 'exit1'] }));
    assert.equal(failed.stop_reason, 'error');
    assert.equal(failed.ok, false);
    const last = failed.turns.at(-1);
    assert.deepEqual(last?.next_steps, [{ kind: 'retry', turn_key: last?.turn_key }]);
    assert.match(failed.message, /can be retried/);
    const repair = await runLoop(loopOptions(demo(), { hostAdapterCommand: [NODE, AGENT, 'repair'] }));
    assert.equal(repair.stop_reason, 'repair');
    assert.equal(repair.spend_count, 1, 'a validated repair_required result is material: written back and spent');
  });

  it('cancellation mid-loop stops after the current phase: nothing half-written, the turn resumable, no slot held', async () => {
    const d = demo();
    const controller = new AbortController();
    let ended = 0;
    const onEvent = (e: TurnEvent): void => {
      if (e.type === 'turn_ended') ended++;
      // Cancel while the second turn's agent is working.
      if (e.type === 'phase_done' && e.phase === 'admission' && ended === 1) setTimeout(() => controller.abort(), 200);
    };
    const result = await runLoop(
      loopOptions(d, { hostAdapterCommand: [NODE, AGENT, 'slow', '3000'], signal: controller.signal, onEvent }),
    );
    assert.equal(result.stop_reason, 'cancelled');
    assert.deepEqual(
      result.turns.map((t) => t.status),
      ['committed', 'cancelled'],
    );
    assert.equal((await newSpends(d)).length, 1);
    assert.deepEqual(reservations(d), []);
    const journals = await listJournals(d.runtimeGoalDir);
    assert.deepEqual(journals.map((j) => j.status).sort(), ['committed', 'in_progress']);
    assert.equal(
      parseStateDocument(fs.readFileSync(d.statePath, 'utf8')).todos.find((t) => t.todoId === 'todo_index')?.status,
      'open',
    );
  });
});

describe('turn concurrency (spawn policy)', function () {
  this.timeout(60_000);

  it('without spawning, a second turn of the goal while one runs is told to wait (busy), then runs', async () => {
    const d = demo();
    const first = runOnce(fixtureRun(d, 'x', { hostAdapterCommand: [NODE, AGENT, 'slow', '1500'] }));
    await waitUntil(
      async () => (await listJournals(d.runtimeGoalDir)).some((j) => j.status === 'in_progress'),
      'a journal in progress',
    );
    const second = await runOnce(fixtureRun(d, 'complete', { agentId: 'codex-main' }));
    assert.equal(second.status, 'busy');
    assert.equal(second.effects.host_invoked, false);
    assert.match(second.message, /allows 1 at once/);
    assert.equal((await first).status, 'committed');
    const after = await runOnce(fixtureRun(d, 'complete', { agentId: 'codex-main' }));
    assert.equal(after.status, 'committed');
  });

  it('with spawning, up to max_children turns run at once on distinct todos by distinct agents; the same agent never twice', async () => {
    const d = demo((goal) => {
      goal['spawn_policy'] = MULTI;
    });
    releaseClaim(d);
    const slow = [NODE, AGENT, 'slow', '1500'];
    const a = runOnce(fixtureRun(d, 'x', { hostAdapterCommand: slow }));
    await waitUntil(async () => (await listJournals(d.runtimeGoalDir)).length === 1, 'one journal');
    const sameAgent = await runOnce(fixtureRun(d, 'complete'));
    assert.equal(sameAgent.status, 'busy');
    const b = await runOnce(fixtureRun(d, 'x', { agentId: 'codex-main', hostAdapterCommand: slow }));
    const first = await a;
    assert.equal(first.status, 'committed');
    assert.equal(b.status, 'committed');
    assert.notEqual(first.todo_id, b.todo_id);
    assert.deepEqual([first.todo_id, b.todo_id].sort(), ['todo_index', 'todo_related']);
    assert.equal((await newSpends(d)).length, 2);
  });

  it('a turn being admitted (its marker written, its journal not yet) stays visible: a peer listing then does not remove the marker', async () => {
    // The race behind two agents taking one todo: a peer's listing removed the marker between the two writes.
    const d = demo();
    const marker = path.join(turnsDir(d.runtimeGoalDir), ACTIVE_DIR, 'a'.repeat(64));
    fs.mkdirSync(path.dirname(marker), { recursive: true });
    fs.writeFileSync(marker, '{}\n');
    assert.deepEqual(await listActiveJournals(d.runtimeGoalDir), []);
    assert.equal(fs.existsSync(marker), true, 'a fresh marker whose journal is not written yet is kept');
    assert.deepEqual(await listActiveJournals(d.runtimeGoalDir, Date.now() + 11 * 60_000), []);
    assert.equal(fs.existsSync(marker), false, 'a marker left by a crash between the two writes is removed once stale');
  });

  it('runLoop with two agents: one turn at a time without spawning, two at once with it', async () => {
    for (const [policy, expectedPeak] of [
      [undefined, 1],
      [MULTI, 2],
    ] as const) {
      const d = demo((goal) => {
        if (policy !== undefined) goal['spawn_policy'] = policy;
      });
      releaseClaim(d);
      const events: TurnEvent[] = [];
      const result = await runLoop(
        loopOptions(d, {
          agentIds: ['demo', 'codex-main'],
          hostAdapterCommand: [NODE, AGENT, 'slow', '600'],
          onEvent: (e) => events.push(e),
        }),
      );
      assert.equal(peakConcurrency(events), expectedPeak);
      assert.equal(result.max_concurrent_turns, expectedPeak);
      // Together they finish every open agent todo no gate holds for them: related, index, links, and publish,
      // whose gate names demo's lane only (blocks_agent=demo), so codex-main takes it, as the original does.
      assert.deepEqual(result.turns.map((t) => t.todo_id).sort(), [
        'todo_index',
        'todo_links',
        'todo_publish',
        'todo_related',
      ]);
      assert.equal(result.turns.find((t) => t.todo_id === 'todo_publish')?.agent_id, 'codex-main');
      assert.equal(result.spend_count, 4);
      assert.equal(new Set(result.turns.map((t) => t.settlement_identity?.effect_id)).size, 4);
    }
  });

  it('across processes: two processes starting turns at once under a limit of 1 run exactly one', async () => {
    const d = demo();
    const input = { registryPath: d.registryPath, hostAdapterCommand: [NODE, AGENT, 'slow', '1500'] };
    const [one, two] = await Promise.all([runTurnProcess(input), runTurnProcess({ ...input, agentId: 'codex-main' })]);
    const statuses = [lastJson(one.stdout)['status'], lastJson(two.stdout)['status']].sort();
    assert.deepEqual(statuses, ['busy', 'committed']);
    assert.equal((await newSpends(d)).length, 1);
  });
});
