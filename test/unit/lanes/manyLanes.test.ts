import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildCliBundle } from '../support/cliProcess';
import { manyLanesRoot, runManyLanes } from './manyLanes';

/**
 * Issue 33's "done when" at test size (manyLanes.ts says what is checked): four lanes, each turn a
 * real `loopx turn run-once` process, every merge through its gate. The full 100 turns (25 rounds) is
 * `scripts/bench-lanes.ts`, with the same checks; LOOPX_LANES_ROUNDS=25 runs it here too.
 */
describe('lanes: four agents, one goal, every turn through the CLI and every merge through its gate', function () {
  const rounds = Number(process.env['LOOPX_LANES_ROUNDS'] ?? 2);
  this.timeout(120_000 + rounds * 90_000);
  let cli = '';
  const roots: string[] = [];
  before(async () => {
    cli = await buildCliBundle();
  });
  after(() => {
    if (cli !== '') roots.push(path.dirname(cli));
    for (const dir of roots) fs.rmSync(dir, { recursive: true, force: true });
  });

  it(`4 lanes × ${rounds} rounds: main holds each turn's commit once with its LoopX-Turn trailer, no commit touches another lane's file, every merge approved a gate`, async () => {
    const root = manyLanesRoot();
    roots.push(root);
    const report = await runManyLanes({ cli, rounds, lanes: 4, root });
    assert.deepEqual(report.violations, []);
    assert.equal(report.turns.length, 4 * rounds, 'every turn committed');
    assert.deepEqual([...report.trailersOnMain].sort(), [...report.turns].sort(), 'main: each turn once');
    assert.equal(report.merges, 4 * rounds, 'one reviewed merge per turn');
    assert.equal(report.worktrees, 5);
  });
});
