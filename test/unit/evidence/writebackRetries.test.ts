import assert from 'node:assert/strict';
import * as path from 'node:path';
import { startTogether } from '../fs/barrier';
import { REPO_ROOT } from '../fs/processes';
import { makeWorkspace, NOW, readIndexRows, type Workspace } from '../quota/helpers';
import { cli, ONE_TODO } from './helpers';

/**
 * Issue 34, defect 5: concurrent retries of one heartbeat writeback (`refresh-state` with the same
 * turn id) appended duplicate rows, because the "already recorded" check ran before the index lock.
 * It is now made again under the lock: 5 processes released together write exactly one row.
 */

function refreshWorker(ws: Workspace, turn: string, extra: string[] = []) {
  return {
    script: path.join(REPO_ROOT, 'test', 'unit', 'evidence', 'workers', 'cliWorker.ts'),
    args: [
      ws.dir,
      NOW,
      ...['--registry', ws.registryPath, '--format', 'json', 'refresh-state', '--goal-id', 'g'],
      ...['--agent-id', 'agent-a', '--classification', 'validated_progress', '--delivery-outcome', 'outcome_progress'],
      ...['--turn-instance-id', turn, ...extra],
    ],
  };
}

const writebacks = (ws: Workspace, turn: string) =>
  readIndexRows(ws).filter((r) => r['turn_instance_id'] === turn && r['classification'] === 'validated_progress');

describe('concurrent retries of one heartbeat writeback (real processes behind a start barrier)', function () {
  this.timeout(300_000);

  for (const [label, extra] of [
    ['without a Next Action', []],
    ['with the same Next Action', ['--next-action', 'Ship the parser.', '--progress-scope', 'goal']],
  ] as const) {
    it(`5 processes, one turn id, ${label}: exactly one row, every process answers ok, 4 say idempotent_replay`, async () => {
      const ws = makeWorkspace({}, ONE_TODO);
      const guard = await cli(ws, [
        'quota',
        'should-run',
        '--goal-id',
        'g',
        '--agent-id',
        'agent-a',
        '--turn-instance-id',
        'T-retry',
      ]);
      assert.equal(guard.code, 0, guard.stderr);
      const workers = await startTogether(Array.from({ length: 5 }, () => refreshWorker(ws, 'T-retry', [...extra])));
      const answers: Record<string, unknown>[] = [];
      for (const worker of workers) {
        const code = await worker.exited;
        assert.equal(code, 0, `${worker.stderr()}\n${worker.stdout()}`);
        answers.push(JSON.parse(worker.stdout()) as Record<string, unknown>);
      }
      assert.equal(writebacks(ws, 'T-retry').length, 1, JSON.stringify(readIndexRows(ws)));
      assert.deepEqual(
        answers.map((a) => a['idempotent_replay']).sort(),
        [false, true, true, true, true],
        'one wrote the row, four replayed it',
      );
      assert.ok(answers.every((a) => a['ok'] === true));
    });
  }
});
