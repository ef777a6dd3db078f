import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { parseStateDocument } from '../../../src/core/state/document';
import { listJournals } from '../../../src/core/turn/journal';
import { CRASH_AT_PHASE_ENV } from '../../../src/core/turn/crashHook';
import { AGENT, cleanTempDirs, demo, lastJson, newSpends, reservations, runRows, runTurnProcess } from './helpers';

after(cleanTempDirs);

/**
 * Crash at every phase, with real processes: a child runs one turn and SIGKILLs itself at the
 * checkpoint (test hook LOOPX_TEST_CRASH_AT_PHASE), then a fresh process resumes the turn from its
 * journal. Every time: one committed turn, exactly one spend, one accountable run record, one
 * successor todo, no reservation left.
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
      const input = { registryPath: d.registryPath, hostAdapterCommand: [process.execPath, AGENT, 'successor'] };
      const crashed = await runTurnProcess(input, { [CRASH_AT_PHASE_ENV]: checkpoint });
      assert.equal(crashed.signal, 'SIGKILL', `the child should die at ${checkpoint}: ${crashed.stderr}`);
      // The scheduler phases and the commit share one journal write: a crash after it finds the turn finished.
      const finishedAtCrash = checkpoint.startsWith('scheduler_');
      const journals = await listJournals(d.runtimeGoalDir);
      assert.equal(journals.length, 1);
      assert.equal(journals[0]?.status, finishedAtCrash ? 'committed' : 'in_progress');

      // The next run resumes the unfinished turn by itself; an explicit --resume-turn-key does the same (or replays).
      const explicit = finishedAtCrash || checkpoint === 'validation';
      const resumed = await runTurnProcess(explicit ? { ...input, resumeTurnKey: journals[0]?.turn_key } : input);
      assert.equal(resumed.code, 0, resumed.stderr);
      const result = lastJson(resumed.stdout);
      assert.equal(result['status'], 'committed', String(result['message']));
      assert.equal(result[finishedAtCrash ? 'replayed' : 'resumed'], true);
      assert.equal(result['turn_key'], journals[0]?.turn_key);
      assert.equal(result['quota_slot_spend_count'], 1);

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
