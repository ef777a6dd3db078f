import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseRolloutEvents, ROLLOUT_EVENT_LOG_FILE } from '../../../src/core/evidence/rolloutLog';
import { parseStateDocument } from '../../../src/core/state/document';
import { listJournals } from '../../../src/core/turn/journal';
import { CRASH_AT_PHASE_ENV } from '../../../src/core/turn/crashHook';
import { TURN_PHASES } from '../../../src/core/protocol/contract';
import {
  AGENT,
  removeTempDirs,
  demo,
  lastJson,
  newSpends,
  reservations,
  runRows,
  runTurnProcess,
  tempDir,
} from './helpers';

after(removeTempDirs);

/**
 * Crash at every phase, with real processes: a child runs one turn and SIGKILLs itself at the
 * checkpoint (test hook LOOPX_TEST_CRASH_AT_PHASE), then a fresh process resumes the turn from its
 * journal. Every time: one committed turn, exactly one spend, one accountable run record, one
 * successor todo, no reservation left; and the agent ran exactly once (it appends a line per run to
 * a counter file) and the resumed process ran only the phases the crashed one had not journaled.
 */
const CHECKPOINTS = [
  'admission',
  'host_execute',
  'typed_result',
  'validation',
  'durable_writeback:effect',
  'durable_writeback',
  'quota_spend:effect',
  'quota_spend',
  'scheduler_apply',
  'scheduler_ack',
];

describe('turn crash and resume (real processes)', function () {
  this.timeout(60_000);

  for (const checkpoint of CHECKPOINTS) {
    it(`a SIGKILL at ${checkpoint} resumes in a fresh process to one committed turn and exactly one spend`, async () => {
      const d = demo();
      const agentRuns = path.join(tempDir('loopx-agent-runs-'), 'runs.txt');
      const input = {
        registryPath: d.registryPath,
        hostAdapterCommand: [process.execPath, AGENT, 'successor', agentRuns],
      };
      const runCount = (): number =>
        (fs.existsSync(agentRuns) ? fs.readFileSync(agentRuns, 'utf8') : '').split('\n').length - 1;
      const crashed = await runTurnProcess(input, { [CRASH_AT_PHASE_ENV]: checkpoint });
      // The hook is live here: these tests run the TypeScript source (tsx), not a shipped bundle, which compiles it out.
      assert.equal(crashed.signal, 'SIGKILL', `the child should die at ${checkpoint}: ${crashed.stderr}`);
      assert.equal(
        runCount(),
        checkpoint === 'admission' ? 0 : 1,
        'the agent ran before the crash only if it got that far',
      );
      // The scheduler phases and the commit share one journal write: a crash after it finds the turn finished.
      const finishedAtCrash = checkpoint.startsWith('scheduler_');
      const journals = await listJournals(d.runtimeGoalDir);
      assert.equal(journals.length, 1);
      assert.equal(journals[0]?.status, finishedAtCrash ? 'committed' : 'in_progress');
      const journaledAtCrash = [...(journals[0]?.completed_phases ?? [])];

      // The next run resumes the unfinished turn by itself; an explicit --resume-turn-key does the same (or replays).
      const explicit = finishedAtCrash || checkpoint === 'validation';
      const resumed = await runTurnProcess(explicit ? { ...input, resumeTurnKey: journals[0]?.turn_key } : input);
      assert.equal(resumed.code, 0, resumed.stderr);
      const result = lastJson(resumed.stdout);
      assert.equal(result['status'], 'committed', String(result['message']));
      assert.equal(result[finishedAtCrash ? 'replayed' : 'resumed'], true);
      assert.equal(result['turn_key'], journals[0]?.turn_key);
      assert.equal(result['quota_slot_spend_count'], 1);
      const turnId = String(result['turn_instance_id']);
      const logText = fs.readFileSync(path.join(d.runtimeGoalDir, ROLLOUT_EVENT_LOG_FILE), 'utf8');
      assert.deepEqual(
        parseRolloutEvents(logText)
          .events.filter((e) => e.run_id === turnId)
          .map((e) => e.event_kind),
        ['quota_should_run', 'refresh_state', 'quota_spend'],
        'each phase event is in the rollout log exactly once across the crash and the resume',
      );

      assert.equal(runCount(), 1, 'the agent ran exactly once across the crash and the resume');
      const ranOnResume = result['phases_run_here'] as string[];
      assert.deepEqual(
        ranOnResume.filter((phase) => journaledAtCrash.includes(phase as (typeof TURN_PHASES)[number])),
        [],
        `phases journaled before the crash (${journaledAtCrash.join(', ')}) ran again`,
      );
      const history = (await listJournals(d.runtimeGoalDir))[0]?.completed_phases ?? [];
      assert.deepEqual(history, [...TURN_PHASES], 'every phase once, in order, in the journal');
      assert.deepEqual(
        [...journaledAtCrash, ...ranOnResume.filter((p) => (TURN_PHASES as readonly string[]).includes(p))],
        [...TURN_PHASES],
        'the crashed run and the resume together ran each phase exactly once',
      );

      assert.equal((await newSpends(d)).length, 1, 'exactly one spend');
      const delivery = (await runRows(d)).filter((r) => r.classification === 'validated_completion');
      assert.equal(delivery.length, 1, 'exactly one accountable run record');
      const doc = parseStateDocument(fs.readFileSync(d.statePath, 'utf8'));
      assert.deepEqual(doc.issues, []);
      assert.equal(doc.todos.find((t) => t.todoId === 'todo_related')?.status, 'done');
      assert.equal(
        doc.todos.filter((t) => t.text.includes('Follow up on the fixture work')).length,
        1,
        'one successor todo',
      );
      assert.deepEqual(reservations(d), []);
      assert.equal((await listJournals(d.runtimeGoalDir))[0]?.status, 'committed');

      // And a third run starts the next turn instead of touching this one.
      const next = lastJson((await runTurnProcess(input)).stdout);
      assert.notEqual(next['turn_key'], journals[0]?.turn_key);
      assert.equal((await newSpends(d)).length, 2);
    });
  }
});
