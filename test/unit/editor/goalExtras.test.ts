import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RunIndexEntry } from '../../../src/core/runtime/runIndex';
import type { RecentRunRow } from '../../../src/core/goal/recentRuns';
import type { GoalSummary } from '../../../src/core/ops/goalRows';
import {
  agentDetailsOf,
  changedGoalKeys,
  factsFingerprint,
  GoalFactsSeen,
  leaseLabel,
  recentRunsFrom,
  recentRunsOf,
  withExistingEvidence,
  type RecentRun,
} from '../../../src/workspace/goalExtras';

const goal = { projectRoot: '/p', runtimeRoot: '/home/u/.codex/loopx' };

function row(fields: Partial<RunIndexEntry> & Record<string, unknown>): RunIndexEntry {
  return { json_exists: true, markdown_exists: true, ...fields } as RunIndexEntry;
}

describe('editor read helpers (Recent runs, Agents details, per-goal refresh)', () => {
  it('lists the newest runs without bookkeeping rows, each with the spend of its turn and its Markdown record', () => {
    const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-recent-')));
    const inProject = { projectRoot: project, runtimeRoot: path.join(project, 'runtime') };
    fs.mkdirSync(path.join(project, 'runs'), { recursive: true });
    fs.writeFileSync(path.join(project, 'runs', 'b.md'), '# b\n');
    const rows = [
      row({
        classification: 'quota_slot_spent',
        turn_instance_id: 't2',
        slots: 1,
        usage: { cost_usd: 0.25, tokens: 900 },
      }),
      row({
        classification: 'advancement',
        agent_id: 'demo',
        turn_instance_id: 't2',
        generated_at: '2026-01-02T00:00:00Z',
        markdown_path: 'runs/b.md',
      }),
      row({ classification: 'quota_monitor_poll' }),
      row({
        classification: 'status_snapshot',
        generated_at: '2026-01-01T00:00:00Z',
        markdown_path: path.join(project, 'runtime', 'missing.md'),
      }),
    ];
    try {
      const runs = recentRunsFrom(rows, inProject);
      assert.deepEqual(
        runs.map((r) => [r.classification, r.spent_slots, r.cost_usd, r.tokens, r.markdown_file]),
        [
          ['advancement', 1, 0.25, 900, path.join(project, 'runs', 'b.md')],
          ['status_snapshot', null, null, null, path.join(project, 'runtime', 'missing.md')],
        ],
      );
      assert.deepEqual(
        withExistingEvidence(runs).map((r) => r.markdown_file),
        [path.join(project, 'runs', 'b.md'), null],
        'a missing record is not offered when the runs are shown',
      );
      assert.equal(recentRunsFrom(rows, inProject, 1).length, 1);
      fs.rmSync(path.join(project, 'runs', 'b.md'));
      assert.equal(
        recentRunsFrom(rows, inProject)[0]?.markdown_file,
        path.join(project, 'runs', 'b.md'),
        'a fill does not stat the records',
      );
      assert.equal(
        withExistingEvidence(recentRunsFrom(rows, inProject))[0]?.markdown_file,
        null,
        'a record removed since is not offered when the runs are shown',
      );
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
  });

  it('never offers a Markdown path outside the project and the runtime root, nor a missing one', () => {
    const cases: [markdownPath: string, exists: boolean, expected: string | null][] = [
      ['../../etc/passwd', true, null],
      ['/etc/passwd', true, null],
      ['/p/../etc/x.md', true, null],
      ['runs/a.md', false, null],
      ['runs/a.md', true, '/p/runs/a.md'],
    ];
    const row: RecentRunRow = {
      generated_at: null,
      classification: 'advancement',
      agent_id: null,
      todo_id: null,
      recommended_action: null,
      markdown_path: null,
      spent_slots: null,
      cost_usd: null,
      tokens: null,
    };
    for (const [markdownPath, exists, expected] of cases)
      assert.equal(
        withExistingEvidence(recentRunsOf([{ ...row, markdown_path: markdownPath }], goal), () => exists)[0]
          ?.markdown_file,
        expected,
        markdownPath,
      );
  });

  it('gives each agent its goals, claims, newest turn and executor', () => {
    const summary = (goalId: string, agents: string[]): GoalSummary =>
      ({ goalId, displayName: goalId, registryPath: '/p/.loopx/registry.json', agents }) as GoalSummary;
    const run = (agent: string, at: string): RecentRun => ({
      generated_at: at,
      classification: 'advancement',
      agent_id: agent,
      todo_id: null,
      recommended_action: null,
      spent_slots: 1,
      cost_usd: null,
      tokens: null,
      markdown_file: null,
    });
    const todo = (id: string, claimedBy: string | null) => ({
      todo_id: id,
      title: id,
      claimed_by: claimedBy,
      status: 'open',
    });
    const details = agentDetailsOf([
      {
        goal: summary('a', ['demo', 'codex']),
        status: { agent_todos: { items: [todo('t1', 'codex'), todo('t2', null)] } } as never,
        runs: [run('demo', '2026-01-01T00:00:00Z')],
        executors: new Map([['demo', 'executor: demo']]),
      },
      {
        goal: summary('b', ['demo']),
        status: undefined,
        runs: [run('demo', '2026-01-03T00:00:00Z')],
        executors: new Map([['demo', 'executor: demo']]),
      },
    ]);
    assert.deepEqual(
      details.map((d) => [
        d.agentId,
        d.goals.map((g) => g.goalId),
        d.claims.map((c) => c.todoId),
        d.lastTurn?.goalId ?? null,
        d.executors,
      ]),
      [
        ['codex', ['a'], ['t1'], null, ['no executor configured']],
        ['demo', ['a', 'b'], [], 'b', ['executor: demo']],
      ],
    );
  });

  it('refreshes only the goals whose facts changed, and the whole tree when goals come or go', () => {
    const item = { todos: ['t1'] };
    const seen = (text: string, status: unknown) => new GoalFactsSeen(text, [status]);
    const before = {
      shape: 'a,b',
      facts: new Map([
        ['a', seen('a', item)],
        ['b', seen('b', item)],
      ]),
    };
    assert.deepEqual(
      changedGoalKeys(before, {
        shape: 'a,b',
        facts: new Map([
          ['a', seen('a', item)],
          ['b', seen('b', { todos: ['t1', 't2'] })],
        ]),
      }),
      ['b'],
    );
    assert.deepEqual(
      changedGoalKeys(before, {
        shape: 'a,b',
        facts: new Map([
          ['a', seen('a', item)],
          ['b', seen('b', { todos: ['t1'] })],
        ]),
      }),
      [],
      'an equal item read again is no change',
    );
    assert.deepEqual(
      changedGoalKeys(before, {
        shape: 'a,b',
        facts: new Map([
          ['a', seen('a (paused)', item)],
          ['b', seen('b', item)],
        ]),
      }),
      ['a'],
      'a small fact changed',
    );
    assert.equal(changedGoalKeys(before, { shape: 'a,b,c', facts: new Map() }), 'all');
  });
});

describe('leaseLabel (the Goals tree shows who holds a todo until when)', () => {
  it('names the holder and the local time it expires, with the date when it is not today', () => {
    const now = new Date(2026, 6, 1, 12, 0, 0);
    const soon = new Date(2026, 6, 1, 12, 45, 0);
    const label = leaseLabel({ owner: 'agent-b', expires_at: soon.toISOString(), version: 3 }, now);
    assert.equal(label.description, '🔒 agent-b until 12:45');
    assert.match(label.tooltip, /^Leased to agent-b until 2026-07-01T\d\d:45:00\.000Z \(lease version 3\)/);
    const tomorrow = new Date(2026, 6, 2, 9, 5, 0);
    assert.equal(
      leaseLabel({ owner: 'agent-b', expires_at: tomorrow.toISOString(), version: 1 }, now).description,
      '🔒 agent-b until 2026-07-02 09:05',
    );
    assert.equal(
      leaseLabel({ owner: 'agent-b', expires_at: '', version: 1 }, now).description,
      '🔒 agent-b until an unknown time',
    );
  });

  it("keeps a fixed-size digest of a goal's facts, not a copy of them, that still tells a change", () => {
    const todos = Array.from({ length: 200 }, (_, i) => ({
      todo_id: `todo_${i}`,
      text: `a long todo text ${i} `.repeat(5),
    }));
    const facts = [{ goalId: 'g' }, { status: { agent_todos: { items: todos } } }];
    const fingerprint = factsFingerprint(facts);
    assert.ok(
      fingerprint.length <= 32,
      `a digest (${fingerprint.length} chars), not the ${JSON.stringify(facts).length}-char facts`,
    );
    assert.equal(factsFingerprint(JSON.parse(JSON.stringify(facts))), fingerprint, 'equal facts, equal fingerprint');
    const edited = JSON.parse(JSON.stringify(facts)) as typeof facts;
    (edited[1] as { status: { agent_todos: { items: { text: string }[] } } }).status.agent_todos.items[199]!.text = 'x';
    assert.notEqual(factsFingerprint(edited), fingerprint, 'one todo text changed');
    assert.notEqual(factsFingerprint(undefined), factsFingerprint(null));
  });

  it('tells a change by reference first, and digests only objects it cannot compare so', () => {
    const stringified: unknown[] = [];
    const spy = <T extends object>(value: T): T =>
      Object.assign(value, {
        toJSON() {
          stringified.push(value);
          return { ...value, toJSON: undefined };
        },
      });
    const item = spy({ todo: 'one' });
    const first = new GoalFactsSeen('g', [undefined, undefined]);
    const filled = new GoalFactsSeen('g', [item, 1]);
    assert.equal(first.changedIn(filled), true, 'read for the first time');
    assert.equal(stringified.length, 0, 'a first read is a change without a digest');
    const same = new GoalFactsSeen('g', [item, 1]);
    assert.equal(filled.changedIn(same), false);
    assert.equal(stringified.length, 0, 'the same objects are the same facts');
    const reread = new GoalFactsSeen('g', [spy({ todo: 'one' }), 1]);
    assert.equal(same.changedIn(reread), false, 'equal objects read again');
    assert.equal(stringified.length, 2, 'digested both to compare them');
    const edited = new GoalFactsSeen('g', [spy({ todo: 'two' }), 1]);
    assert.equal(reread.changedIn(edited), true, 'an edited item');
    assert.equal(stringified.length, 3, 'the kept digest is not worked out again');
  });
});
