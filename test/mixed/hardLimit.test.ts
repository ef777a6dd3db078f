import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  commandOf,
  stopLeftovers,
  type MixedWorkspace,
  mixedWorkspace,
  quotaOf,
  run,
  startBehindBarrier,
  writeGoal,
} from './helpers';

const ROUNDS = Number(process.env['LOOPX_MIXED_ROUNDS'] ?? 20) || 20;
const WORKER = path.join(__dirname, 'workers', 'ourTurn.ts');
// The worker runs in the workspace folder, where `tsx` does not resolve: name it by its URL.
const TSX = pathToFileURL(require.resolve('tsx')).href;

/**
 * The hard limit with the original in the loop (issue 30): one of our turns and one spend of the original start in
 * the same instant on a goal with one slot left. Our turn's reservation is written as a hold row the original
 * counts, so the original refuses while our turn works (or, when the original's spend landed first, our admission
 * refuses); the slot is never spent twice. Each round ends checked by both programs.
 */
describe('mixed team: the hard limit holds with both programs spending concurrently', () => {
  it(`${ROUNDS} rounds behind a start barrier: spent never above allowed, in either program's view`, async () => {
    const w = mixedWorkspace('limit');
    writeGoal(w, 'g', { compute: 1, allowed_slots: 1, window_hours: 24 }, ['py', 'ts']);
    // The original's heartbeat starts with should-run, which leaves its lock files in the goal's runtime folder:
    // from then on our reservations are written as holds it counts.
    const first = run('original', w, ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'py']);
    assert.equal(quotaOf(first).spent_slots, 0, first.stdout);
    const outcomes = { ours: 0, original: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      // One more slot each round: every round contests exactly one free slot.
      setAllowedSlots(w, round + 1);
      const go = path.join(w.dir, `go-${round}`);
      const settle = path.join(w.dir, `settle-${round}`);
      const ours = startBehindBarrier(
        [process.execPath, '--import', TSX, WORKER, w.registry, 'g', 'ts', `turn-${round}`, settle],
        w,
        go,
      );
      const original = startBehindBarrier(
        [
          ...commandOf('original'),
          '--registry',
          w.registry,
          '--format',
          'json',
          'quota',
          'spend-slot',
          '--goal-id',
          'g',
          '--agent-id',
          'py',
          '--todo-id',
          'todo_aaaaaaaaaaaa',
          '--execute',
        ],
        w,
        go,
      );
      fs.writeFileSync(go, '');
      // Our turn works (holding its reservation) until the original's spend has finished, then settles.
      const pySpend = await original;
      fs.writeFileSync(settle, '');
      const ourTurn = await ours;
      assert.equal(ourTurn.code, 0, ourTurn.stderr);
      const ourResult = JSON.parse(ourTurn.stdout) as { admitted: boolean };
      const pyResult = JSON.parse(pySpend.stdout) as { ok?: boolean; appended?: boolean };
      if (ourResult.admitted) outcomes.ours++;
      if (pyResult.appended === true) outcomes.original++;

      const theirs = quotaOf(run('original', w, ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'py']));
      const mine = quotaOf(run('ours', w, ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'ts']));
      const where = `round ${round}: ours ${ourTurn.stdout.trim()} original appended=${String(pyResult.appended)}`;
      assert.equal(theirs.allowed_slots, round + 1, where);
      assert.ok(theirs.spent_slots <= theirs.allowed_slots, `original's view ${JSON.stringify(theirs)}; ${where}`);
      assert.ok(mine.spent_slots <= mine.allowed_slots, `our view ${JSON.stringify(mine)}; ${where}`);
      assert.equal(theirs.spent_slots, mine.spent_slots, `both programs count the same spends; ${where}`);
      assert.equal(mine.spent_slots, round + 1, `the round's slot was spent once; ${where}`);
    }
    // Each round spent its one slot exactly once, by one of the two.
    assert.equal(outcomes.ours + outcomes.original, ROUNDS, JSON.stringify(outcomes));
    stopLeftovers(w);
    fs.rmSync(w.dir, { recursive: true, force: true });
  });
});

function setAllowedSlots(w: MixedWorkspace, allowed: number): void {
  const registry = JSON.parse(fs.readFileSync(w.registry, 'utf8')) as { goals: { quota: Record<string, number> }[] };
  for (const goal of registry.goals) goal.quota['allowed_slots'] = allowed;
  fs.writeFileSync(w.registry, `${JSON.stringify(registry, null, 2)}\n`);
}
