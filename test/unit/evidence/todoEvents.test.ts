import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { rolloutEventLogPath } from '../../../src/core/evidence/rolloutLog';
import { makeWorkspace, type Workspace } from '../quota/helpers';
import { ONE_TODO, TWO_TODOS, cli, events } from './helpers';

/** Todo transitions in the rollout event log, and `todo complete` inside a heartbeat (receipt chain). */

const complete = (ws: Workspace, todo: string, turn: string, extra: string[] = []) =>
  cli(ws, [
    'todo',
    'complete',
    '--goal-id',
    'g',
    '--todo-id',
    todo,
    '--evidence',
    'tests pass',
    '--agent-id',
    'agent-a',
    '--turn-instance-id',
    turn,
    ...extra,
  ]);

describe('todo complete --turn-instance-id (heartbeat receipt chain)', () => {
  it('completes the bound todo once: retries replay, the event carries the effect id and no_followup', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const guard = await cli(ws, [
      'quota',
      'should-run',
      '--goal-id',
      'g',
      '--agent-id',
      'agent-a',
      '--turn-instance-id',
      'T',
    ]);
    assert.equal(guard.code, 0, guard.stderr);
    for (let i = 0; i < 3; i++) {
      const run = await complete(ws, 'todo_parser', 'T', ['--no-follow-up']);
      assert.equal(run.code, 0, run.stdout);
      assert.equal(run.json()['idempotent_replay'], i > 0);
      assert.equal(run.json()['written'], i === 0);
      assert.equal(run.json()['status'], 'done');
    }
    const done = events(ws).filter((e) => e.event_kind === 'todo_complete');
    assert.equal(done.length, 1);
    assert.equal(done[0]?.run_id, 'T');
    assert.equal(done[0]?.details?.['settlement_effect_id'], 'g:agent-a:todo_parser:T');
    assert.equal(done[0]?.details?.['no_followup'], true);
    assert.match(fs.readFileSync(ws.statePath, 'utf8'), /todo_id=todo_parser status=done/);
  });

  it('refuses completing another todo than the receipt binds, and writes nothing', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    await cli(ws, ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'agent-a', '--turn-instance-id', 'T']);
    const before = fs.readFileSync(ws.statePath, 'utf8');
    const run = await complete(ws, 'todo_printer', 'T');
    assert.equal(run.code, 1);
    assert.equal(run.error().code, 'heartbeat_receipt_binding_mismatch');
    assert.equal(fs.readFileSync(ws.statePath, 'utf8'), before);
    assert.equal(events(ws).filter((e) => e.event_kind === 'todo_complete').length, 0);
  });

  it('a turn id without --agent-id is a usage error', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const run = await cli(ws, [
      'todo',
      'complete',
      '--goal-id',
      'g',
      '--todo-id',
      'todo_parser',
      '--evidence',
      'x',
      '--turn-instance-id',
      'T',
    ]);
    assert.equal(run.code, 2);
  });
});

describe('todo transitions append their rollout events', () => {
  it('todo add, claim, update and complete each append one event; a refused edit appends none', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const add = await cli(ws, ['todo', 'add', '--goal-id', 'g', '--role', 'agent', '--text', 'Write the linter.']);
    assert.equal(add.code, 0, add.stdout);
    const id = add.json()['todo_id'] as string;
    assert.equal(
      (await cli(ws, ['todo', 'claim', '--goal-id', 'g', '--todo-id', id, '--agent-id', 'agent-a'])).code,
      0,
    );
    assert.equal((await cli(ws, ['todo', 'update', '--goal-id', 'g', '--todo-id', id, '--priority', 'P0'])).code, 0);
    assert.equal(
      (
        await cli(ws, [
          'todo',
          'complete',
          '--goal-id',
          'g',
          '--todo-id',
          id,
          '--evidence',
          'done',
          '--agent-id',
          'agent-a',
        ])
      ).code,
      0,
    );
    const refused = await cli(ws, [
      'todo',
      'claim',
      '--goal-id',
      'g',
      '--todo-id',
      'todo_missing',
      '--agent-id',
      'agent-a',
    ]);
    assert.equal(refused.code, 1);
    const kinds = events(ws).map((e) => [e.event_kind, e.todo_id]);
    assert.deepEqual(kinds, [
      ['todo_add', id],
      ['todo_claim', id],
      ['todo_update', id],
      ['todo_complete', id],
    ]);
  });
});

describe('todo commands after a killed run', () => {
  it('a rerun that writes nothing still reclaims the event-log lock a killed run left, and keeps a live one', async () => {
    const ws = makeWorkspace({}, ONE_TODO);
    const args = [
      'todo',
      'complete',
      '--goal-id',
      'g',
      '--todo-id',
      'todo_parser',
      '--evidence',
      'ok',
      '--no-follow-up',
      // Two agents are registered: the original refuses a complete that names none (issue 30).
      '--agent-id',
      'agent-a',
    ];
    assert.equal((await cli(ws, args)).code, 0);
    const lock = `${rolloutEventLogPath(ws.runtimeRoot, 'g')}.loopx-lock`;
    const holder = (pid: number) =>
      JSON.stringify({
        schema_version: 'file_lock_holder_v0',
        lock_id: 'events',
        policy: 'mutation',
        pid,
        agent_id: 'demo',
        operation: 'todo complete',
        acquired_at: '2026-07-01T00:00:00Z',
        hostname: os.hostname(),
      });
    fs.writeFileSync(lock, holder(spawnSync(process.execPath, ['-e', '']).pid));
    const rerun = await cli(ws, args);
    assert.equal(rerun.json()['written'], false, rerun.stdout);
    assert.equal(fs.existsSync(lock), false, "the killed run's lock is reclaimed");

    fs.writeFileSync(lock, holder(process.ppid));
    await cli(ws, args);
    assert.equal(fs.existsSync(lock), true, 'a live holder keeps its lock');
  });
});
