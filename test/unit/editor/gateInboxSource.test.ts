import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { rolloutEventLogPath } from '../../../src/core/evidence/rolloutLog';
import type { GoalSummary } from '../../../src/core/ops/goalRows';
import { GateInboxSource, type AttentionSource } from '../../../src/workspace/attention';
import type { GoalDetails } from '../../../src/workspace/workspaceModel';

/**
 * The gate inbox's open times (src/workspace/attention.ts): a gate's time comes from its `todo_add` event in the
 * goal's rollout event log. The CLI writes the state file before it appends that event, so the editor can rebuild in
 * between: the gate is then listed without a time, and must get it once the event is there (it was cached as unknown
 * for good before, so the inbox kept the gate among the "open time unknown" ones).
 */
describe('gate inbox: open times from the rollout event log', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-inbox-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  function sourceWith(gateIds: string[]): AttentionSource {
    const goal = { goalId: 'g', registryPath: path.join(dir, 'registry.json'), runtimeRoot: dir } as GoalSummary;
    const gate = (id: string) => ({
      todo_id: id,
      title: `Approve ${id}`,
      text: `Approve ${id}`,
      line: 1,
      blocked_todo_ids: [],
      blocks_agent: null,
      global_gate: true,
      due_at: null,
      updated_at: null,
    });
    const details = { status: { open_gates: gateIds.map(gate) } } as unknown as GoalDetails;
    return {
      goals: [goal],
      detailsOf: () => details,
      isReading: () => false,
      recentRunsOf: () => [],
      leasesOf: () => new Map(),
    };
  }

  function appendAdd(todoId: string, at: string): void {
    const file = rolloutEventLogPath(dir, 'g');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.appendFileSync(
      file,
      `${JSON.stringify({ schema_version: 'loopx_rollout_event_v0', goal_id: 'g', event_kind: 'todo_add', todo_id: todoId, recorded_at: at })}\n`,
    );
  }

  it('a gate listed before its todo_add event was written gets its time once the event is there', async () => {
    const inbox = new GateInboxSource(sourceWith(['todo_gate_a']));
    const now = Date.parse('2026-12-05T00:00:00Z');
    // The state file has the gate; the log has no event yet (no log at all).
    assert.equal((await inbox.entries(now))[0]?.row.blocked_since, null);
    appendAdd('todo_gate_b', '2026-12-01T00:00:00Z');
    // The log changed but holds no event of this gate: still unknown.
    assert.equal((await inbox.entries(now))[0]?.row.blocked_since, null);
    appendAdd('todo_gate_a', '2026-12-02T00:00:00Z');
    const [entry] = await inbox.entries(now);
    assert.equal(entry?.row.blocked_since, '2026-12-02T00:00:00Z');
    assert.equal(entry?.row.blocked_since_source, 'todo_add_event');
  });
});
