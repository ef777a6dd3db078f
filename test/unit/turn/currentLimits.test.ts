import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readQuotaView } from '../../../src/core/quota/quotaView';
import { AGENT, removeTempDirs, clock, demo, goalOf, lastJson, newSpends, runTurnProcess, type Demo } from './helpers';

after(removeTempDirs);

/**
 * Issue 34, defect 1: a running `turn loop` decides every turn on the current registry, not on the
 * goal it resolved when it started. The loop runs as a child process; its agent's first turn holds
 * at a start barrier (the `gated` fixture) while the test pauses the goal or lowers the limit, then
 * lets it finish. The turn in flight completes; no new turn starts past the new limit or the pause.
 */

function editGoal(d: Demo, edit: (goal: Record<string, unknown>) => void): void {
  const registry = JSON.parse(fs.readFileSync(d.registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
  edit(registry.goals[0] as Record<string, unknown>);
  // Written as `goal pause` / configure-goal write it: a temp file renamed over the registry.
  const temp = `${d.registryPath}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(registry, null, 2));
  fs.renameSync(temp, d.registryPath);
}

/** Starts a 6-turn loop, waits until its first turn is in the agent, applies `edit`, lets the agent go. */
async function loopWithEdit(d: Demo, edit: (goal: Record<string, unknown>) => void) {
  const gate = fs.mkdtempSync(path.join(d.workspace, 'gate-'));
  const child = runTurnProcess({
    registryPath: d.registryPath,
    loop: true,
    maxTurns: 6,
    hostAdapterCommand: [process.execPath, AGENT, 'gated', gate],
  });
  await new Promise<void>((resolve, reject) => {
    const poll = (): void => {
      if (fs.existsSync(path.join(gate, 'ready'))) resolve();
      else setTimeout(poll, 10);
    };
    poll();
    child.then(() => reject(new Error('the loop ended before its first turn reached the agent')), reject);
  });
  editGoal(d, edit);
  fs.writeFileSync(path.join(gate, 'go'), '');
  const result = await child;
  assert.equal(result.code, 0, result.stderr);
  const hostRuns = fs.readFileSync(path.join(gate, 'runs'), 'utf8').trim().split('\n').length;
  return { loop: lastJson(result.stdout), hostRuns };
}

async function spentSlots(d: Demo): Promise<number> {
  return (await readQuotaView(goalOf(d.registryPath), clock, { kind: 'read' })).ledger.spent_slots;
}

describe('a running loop decides every turn on the current registry (issue 34, defect 1)', function () {
  this.timeout(120_000);

  it('a limit lowered while a turn runs: the turn in flight finishes, then only what the new limit allows', async () => {
    const d = demo((goal) => {
      goal['quota'] = { compute: 1, window_hours: 24, slot_minutes: 30, allowed_slots: 100 };
    });
    const before = await spentSlots(d);
    const lowered = before + 2;
    const { loop, hostRuns } = await loopWithEdit(d, (goal) => {
      (goal['quota'] as Record<string, unknown>)['allowed_slots'] = lowered;
    });
    assert.equal(await spentSlots(d), lowered, `spent ${await spentSlots(d)} of ${lowered}`);
    assert.equal(hostRuns, 2, 'the turn in flight and one more');
    assert.equal((await newSpends(d)).length, 2);
    assert.equal(loop['stop_reason'], 'budget', String(loop['message']));
  });

  it('a goal paused while a turn runs: the turn in flight finishes, no new turn starts', async () => {
    const d = demo((goal) => {
      goal['quota'] = { compute: 1, window_hours: 24, slot_minutes: 30, allowed_slots: 100 };
    });
    const { loop, hostRuns } = await loopWithEdit(d, (goal) => {
      goal['status'] = 'paused';
    });
    assert.equal(hostRuns, 1, 'only the turn that was in flight ran');
    assert.equal((await newSpends(d)).length, 1, 'the turn in flight was accounted');
    assert.notEqual(loop['stop_reason'], 'max_turns', String(loop['message']));
    assert.match(String(loop['message']), /pause|stopped/i);
  });
});
