import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { makeWorkspace, readIndexRows, type Workspace } from '../quota/helpers';
import { rolloutEventLogPath } from '../../../src/core/evidence/rolloutLog';
import { ONE_TODO, cli, spend } from './helpers';

/**
 * The heartbeat receipt binds a turn's replan obligation like its todo: a later step that names
 * another obligation is refused and writes nothing (mutation audit, issue 34: without the check a
 * conflicting `--replan-obligation-id` went through).
 */

const OTHER_OBLIGATION = 'replan-0123456789abcdef';

const guard = (ws: Workspace, turn: string) =>
  cli(ws, ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'agent-a', '--turn-instance-id', turn]);
const writeback = (ws: Workspace, turn: string, classification: string, extra: string[] = []) =>
  cli(ws, [
    'refresh-state',
    '--goal-id',
    'g',
    '--agent-id',
    'agent-a',
    '--classification',
    classification,
    '--recommended-action',
    'poll the upstream build again',
    '--turn-instance-id',
    turn,
    ...extra,
  ]);

/** The files a refused step must leave as they were. */
function snapshot(ws: Workspace): { rows: number; events: string; state: string } {
  const log = rolloutEventLogPath(ws.runtimeRoot, 'g');
  return {
    rows: readIndexRows(ws).length,
    events: fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '',
    state: fs.readFileSync(ws.statePath, 'utf8'),
  };
}

async function refusedWithoutWrites(ws: Workspace, step: () => ReturnType<typeof cli>): Promise<void> {
  const before = snapshot(ws);
  const result = await step();
  assert.equal(result.code, 1, result.stdout);
  assert.equal(result.error().code, 'heartbeat_receipt_binding_mismatch');
  assert.deepEqual(snapshot(ws), before, 'the refused step wrote nothing');
}

describe('heartbeat receipt: the replan binding', () => {
  it('a turn bound to a todo refuses a --replan-obligation-id at writeback and spend', async () => {
    const ws = makeWorkspace({}, ONE_TODO);
    const g = await guard(ws, 'T1');
    assert.equal(g.code, 0, g.stderr);
    assert.equal((g.json()['heartbeat_receipt'] as Record<string, unknown>)['todo_id'], 'todo_parser');
    const args = ['--replan-obligation-id', OTHER_OBLIGATION];
    await refusedWithoutWrites(ws, () => writeback(ws, 'T1', 'autonomous_replan', args));
    await refusedWithoutWrites(ws, () => spend(ws, 'T1', args));
  });

  it('a turn bound to a replan obligation refuses another obligation id at writeback and spend', async () => {
    const ws = makeWorkspace({}, ONE_TODO);
    for (const turn of ['T1', 'T2']) {
      assert.equal((await guard(ws, turn)).code, 0);
      const w = await writeback(ws, turn, 'monitor_no_progress', ['--delivery-outcome', 'surface_only']);
      assert.equal(w.code, 0, w.stderr);
    }
    const owed = await guard(ws, 'T3');
    const bound = (owed.json()['heartbeat_receipt'] as Record<string, unknown>)['replan_obligation_id'];
    assert.match(String(bound), /^replan-[0-9a-f]{16}$/);
    assert.notEqual(bound, OTHER_OBLIGATION);
    const args = ['--replan-obligation-id', OTHER_OBLIGATION];
    await refusedWithoutWrites(ws, () => writeback(ws, 'T3', 'autonomous_replan', args));
    await refusedWithoutWrites(ws, () => spend(ws, 'T3', args));
    // The bound id itself is accepted.
    const right = await writeback(ws, 'T3', 'autonomous_replan', ['--replan-obligation-id', String(bound)]);
    assert.equal(right.code, 0, right.stderr);
  });
});
