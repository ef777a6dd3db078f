import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runOperation } from '../../../src/core/ops/run';
import { reviewList, reviewRevert } from '../../../src/core/ops/review';
import type { OperationEnvironment } from '../../../src/core/ops/operation';
import { runOnce } from '../../../src/core/turn/runOnce';
import { AGENT, removeTempDirs, clock, demo, fixtureRun, runRows } from '../turn/helpers';
import { makeWorkspace, NOW as QUOTA_NOW } from '../quota/helpers';
import { call, connectInMemory } from '../mcp/helpers';
import { TWO_TODOS, cli } from '../evidence/helpers';

/**
 * The review queue end to end in the core: a turn run by the turn driver (and a heartbeat turn:
 * should-run with a turn id, then its delivery writeback) records `snapshot: {base, head}` on its
 * run record; `review list` lists it; `review revert` puts its files back, or refuses over a later edit.
 */

after(removeTempDirs);

const git = (root: string, ...args: string[]): string =>
  execFileSync('git', args, {
    cwd: root,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@e',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@e',
    },
  });

function gitInit(root: string): void {
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'add', '-A');
  git(root, 'commit', '-qm', 'init');
}

function envOf(registryPath: string, cwd: string): OperationEnvironment {
  return { cwd, env: {}, clock, homeDir: cwd, registryPath };
}

describe('review queue (turn driver → run record snapshot → review list / revert)', () => {
  it('a turn of the turn driver records base and head; review list shows it; revert restores the base', async () => {
    const d = demo();
    fs.writeFileSync(path.join(d.workspace, 'notes.txt'), 'before the turn\n');
    gitInit(d.workspace);
    const result = await runOnce(
      fixtureRun(d, 'x', { hostAdapterCommand: [process.execPath, AGENT, 'artifact', 'out/artifact.txt'] }),
    );
    assert.equal(result.status, 'committed', result.message);
    const row = (await runRows(d)).find((r) => r.classification === 'validated_progress');
    const snapshot = (row as Record<string, unknown> | undefined)?.['snapshot'] as { base: string; head: string };
    assert.match(snapshot.base, /^[0-9a-f]{40}$/);
    const env = envOf(d.registryPath, d.workspace);
    const list = await runOperation(reviewList, {}, env);
    assert.equal(list.turns.length, 1);
    const turn = list.turns[0]!;
    assert.deepEqual(
      [turn.goal_id, turn.agent_id, turn.todo_id, turn.classification, turn.validation],
      ['tidy-notes', 'demo', 'todo_related', 'validated_progress', 'passed'],
    );
    // The state file the writeback changed is LoopX's: not the turn's change.
    assert.deepEqual(turn.changed, [{ path: 'out/artifact.txt', status: 'added' }]);
    const preview = await runOperation(reviewRevert, { goalId: 'tidy-notes', turn: turn.key }, env);
    assert.equal(preview.ok, true);
    assert.ok(fs.existsSync(path.join(d.workspace, 'out/artifact.txt')), 'a preview writes nothing');
    const done = await runOperation(reviewRevert, { goalId: 'tidy-notes', turn: turn.key, execute: true }, env);
    assert.equal(done.reverted, true);
    assert.equal(fs.existsSync(path.join(d.workspace, 'out/artifact.txt')), false);
  });

  it('review revert over a later human edit refuses, names the conflict and writes nothing', async () => {
    const d = demo();
    gitInit(d.workspace);
    await runOnce(fixtureRun(d, 'x', { hostAdapterCommand: [process.execPath, AGENT, 'artifact', 'out/a.txt'] }));
    fs.writeFileSync(path.join(d.workspace, 'out/a.txt'), 'the human kept working on it\n');
    const env = envOf(d.registryPath, d.workspace);
    const turn = (await runOperation(reviewList, {}, env)).turns[0]!;
    const refused = await runOperation(reviewRevert, { goalId: 'tidy-notes', turn: turn.key, execute: true }, env);
    assert.equal(refused.ok, false);
    assert.equal(refused.reverted, false);
    assert.deepEqual(
      refused.files.map((f) => [f.path, f.conflict]),
      [['out/a.txt', true]],
    );
    assert.equal(fs.readFileSync(path.join(d.workspace, 'out/a.txt'), 'utf8'), 'the human kept working on it\n');
  });

  it('a heartbeat turn: the receipt (should-run with a turn id) takes the base, the delivery writeback the head', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    gitInit(ws.dir);
    const guard = await cli(ws, [
      'quota',
      'should-run',
      '--goal-id',
      'g',
      '--agent-id',
      'agent-a',
      '--turn-instance-id',
      'hb1',
    ]);
    assert.equal(guard.code, 0, guard.stderr);
    fs.writeFileSync(path.join(ws.dir, 'parser.ts'), 'export const parse = 1;\n');
    const writeback = await cli(ws, [
      'refresh-state',
      '--goal-id',
      'g',
      '--agent-id',
      'agent-a',
      '--classification',
      'validated_progress',
      '--delivery-outcome',
      'outcome_progress',
      '--turn-instance-id',
      'hb1',
    ]);
    assert.equal(writeback.code, 0, writeback.stderr);
    // The CLI's JSON stays the original's: the snapshot is on the record and its index row only.
    assert.equal(writeback.json()['snapshot'], undefined);
    const list = await runOperation(reviewList, {}, envOf(ws.registryPath, ws.dir));
    assert.equal(list.turns.length, 1);
    assert.deepEqual(
      [list.turns[0]?.agent_id, list.turns[0]?.turn_instance_id, list.turns[0]?.changed],
      ['agent-a', 'hb1', [{ path: 'parser.ts', status: 'added' }]],
    );
  });

  it('a heartbeat turn over MCP tools (should_run → todo_complete → refresh_state → spend_slot) is in the queue as the CLI turn is', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    gitInit(ws.dir);
    const client = await connectInMemory({ dir: ws.dir, now: QUOTA_NOW });
    const turn = { goalId: 'g', agentId: 'agent-b', turnInstanceId: 'mcp1' };
    try {
      const steps: [string, Record<string, unknown>][] = [
        ['should_run', turn],
        // The agent's work, between the receipt and the writeback.
        ['todo_complete', { ...turn, todoId: 'todo_parser', evidence: 'parser written' }],
        ['refresh_state', { ...turn, classification: 'validated_progress', deliveryOutcome: 'outcome_progress' }],
        ['spend_slot', { ...turn, source: 'heartbeat', execute: true }],
      ];
      for (const [tool, args] of steps) {
        if (tool === 'todo_complete') fs.writeFileSync(path.join(ws.dir, 'parser.ts'), 'export const parse = 2;\n');
        const result = await call(client, tool, args);
        assert.equal(result.isError, undefined, `${tool}: ${JSON.stringify(result.content)}`);
      }
    } finally {
      await client.close();
    }
    const list = await runOperation(reviewList, {}, envOf(ws.registryPath, ws.dir));
    assert.deepEqual(
      list.turns.map((t) => [t.agent_id, t.turn_instance_id, t.todo_id, t.changed]),
      [['agent-b', 'mcp1', 'todo_parser', [{ path: 'parser.ts', status: 'added' }]]],
    );
  });

  it('outside a git repository a turn commits as before, with no snapshot and nothing to review', async () => {
    const d = demo();
    const result = await runOnce(
      fixtureRun(d, 'x', { hostAdapterCommand: [process.execPath, AGENT, 'artifact', 'out/artifact.txt'] }),
    );
    assert.equal(result.status, 'committed', result.message);
    assert.ok((await runRows(d)).every((r) => (r as Record<string, unknown>)['snapshot'] === undefined));
    assert.deepEqual((await runOperation(reviewList, {}, envOf(d.registryPath, d.workspace))).turns, []);
  });
});
