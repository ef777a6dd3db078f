import assert from 'node:assert/strict';
import { runLoopx } from '../cli/run';
import { makeWorkspace, readIndexRows, type Workspace } from './helpers';

/**
 * Issue 34, defect 2, in one process: `should-run` answers with the arithmetic the spend applies,
 * a turn told to run holds its reservation so its spend settles, and a spend whose delivery is
 * recorded is recorded even past the limit (marked `over_limit`), so the ledger never under-reports.
 */

const LIMIT = 0.0025;

async function loopx(ws: Workspace, args: string[]) {
  return runLoopx([...args, '--registry', ws.registryPath, '--format', 'json'], { cwd: ws.dir });
}

async function shouldRun(ws: Workspace, turn: string) {
  return (
    await loopx(ws, ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'agent-a', '--turn-instance-id', turn])
  ).json();
}

async function deliver(ws: Workspace, turn: string, extra: string[] = []) {
  const refresh = await loopx(ws, [
    'refresh-state',
    '--goal-id',
    'g',
    '--agent-id',
    'agent-a',
    '--turn-instance-id',
    turn,
    '--todo-id',
    'todo_parser',
    '--classification',
    'validated_progress',
    '--delivery-batch-scale',
    'single_surface',
    '--delivery-outcome',
    'outcome_progress',
  ]);
  assert.equal(refresh.code, 0, refresh.stdout);
  return (
    await loopx(ws, [
      'quota',
      'spend-slot',
      '--goal-id',
      'g',
      '--agent-id',
      'agent-a',
      '--turn-instance-id',
      turn,
      '--todo-id',
      'todo_parser',
      '--execute',
      ...extra,
    ])
  ).json();
}

function spends(ws: Workspace): Record<string, unknown>[] {
  return readIndexRows(ws).filter((r) => r['classification'] === 'quota_slot_spent');
}

function costOf(row: Record<string, unknown>): number {
  return ((row['usage'] as { cost_usd?: number } | undefined)?.cost_usd ?? 0) as number;
}

describe('budgets in the heartbeat flow (issue 34, defect 2)', () => {
  it('should-run refuses a turn whose estimate does not fit, instead of a "run" the spend then refuses', async () => {
    const ws = makeWorkspace({ quota: { compute: 1, window_hours: 24, slot_minutes: 1, max_cost_usd: LIMIT } });
    assert.equal((await shouldRun(ws, 'T1'))['should_run'], true);
    assert.equal((await deliver(ws, 'T1', ['--cost-usd', '0.002']))['admission'], 'reservation');
    // $0.0005 left, the running average is $0.002: the guard says so, as admission would.
    const next = await shouldRun(ws, 'T2');
    assert.equal(next['should_run'], false);
    assert.equal(next['state'], 'throttled');
    assert.match(
      String(next['reason']),
      /quota refused: the max_cost_usd budget has 0\.0005 left, the turn's estimate is 0\.002/,
    );
    assert.equal(next['heartbeat_receipt'], null, 'no receipt for a turn that does not run');
  });

  it('a turn told to run holds its estimate: a racing should-run is refused until it spends', async () => {
    const ws = makeWorkspace({ quota: { compute: 1, window_hours: 24, slot_minutes: 1, max_cost_usd: LIMIT } });
    const first = await shouldRun(ws, 'T1');
    assert.equal(first['should_run'], true);
    // The retry of the same turn replays (still runs); another agent's turn meanwhile does not fit.
    assert.equal((await shouldRun(ws, 'T1'))['should_run'], true);
    const other = await loopx(ws, [
      'quota',
      'should-run',
      '--goal-id',
      'g',
      '--agent-id',
      'agent-b',
      '--turn-instance-id',
      'T9',
    ]);
    assert.equal(other.json()['should_run'], false, other.stdout);
    const spent = await deliver(ws, 'T1', ['--cost-usd', '0.001']);
    assert.equal(spent['ok'], true, JSON.stringify(spent));
  });

  it('a delivered turn without a reservation is recorded over the limit (marked), never dropped', async () => {
    const ws = makeWorkspace({ quota: { compute: 1, window_hours: 24, slot_minutes: 1, max_cost_usd: LIMIT } });
    assert.equal((await shouldRun(ws, 'T1'))['should_run'], true);
    assert.equal((await deliver(ws, 'T1', ['--cost-usd', '0.002']))['ok'], true);
    // An agent that skipped the guard (or whose reservation expired) delivered anyway.
    const late = await deliver(ws, 'T2', ['--cost-usd', '0.002']);
    assert.equal(late['ok'], true, JSON.stringify(late));
    assert.equal(late['admission'], 'over_limit');
    const rows = spends(ws);
    assert.equal(rows.length, 2);
    assert.equal(rows[1]?.['over_limit'], true);
    assert.equal(
      Math.round(rows.reduce((s, r) => s + costOf(r), 0) * 1e9) / 1e9,
      0.004,
      'the ledger records what was reported',
    );
    const after = await shouldRun(ws, 'T3');
    assert.equal(after['should_run'], false);
    assert.equal(after['state'], 'throttled');
  });

  it('usage unknown (or not reported on a budgeted goal) counts the turn estimate, marked estimated', async () => {
    const ws = makeWorkspace({ quota: { compute: 1, window_hours: 24, slot_minutes: 1, max_cost_usd: 0.01 } });
    assert.equal((await shouldRun(ws, 'T1'))['should_run'], true);
    assert.equal((await deliver(ws, 'T1', ['--cost-usd', '0.002']))['ok'], true);
    assert.equal((await shouldRun(ws, 'T2'))['should_run'], true);
    assert.equal((await deliver(ws, 'T2', ['--usage-unknown']))['ok'], true);
    assert.equal((await shouldRun(ws, 'T3'))['should_run'], true);
    assert.equal((await deliver(ws, 'T3'))['ok'], true);
    const [, unknown, silent] = spends(ws);
    for (const row of [unknown, silent]) {
      const usage = row?.['usage'] as { cost_usd?: number; estimated?: boolean } | undefined;
      assert.equal(usage?.estimated, true, JSON.stringify(row));
      assert.ok((usage?.cost_usd ?? 0) >= 0.002, `counted as at least the average: ${JSON.stringify(usage)}`);
    }
  });
});
