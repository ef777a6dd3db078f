import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { QUOTA_SLOT_SPENT } from '../../../src/core/quota/ledger';
import { cli, events, TWO_TODOS } from '../evidence/helpers';
import { makeWorkspace, NOW, readIndexRows, type Workspace } from '../quota/helpers';
import { call, connectInMemory } from './helpers';

/**
 * A whole heartbeat turn over MCP tools (should_run with a turn id → todo_complete → refresh_state →
 * spend_slot) ends exactly as the same turn through the CLI: the same state file, the same rollout
 * events, the same one spend; a second client calling with the same turn id replays every step.
 */

const TURN = '2026-01-15T10:00:00Z';
const AGENT = 'agent-a';

const STEPS: { tool: string; args: Record<string, unknown>; argv: string[] }[] = [
  {
    tool: 'should_run',
    args: { goalId: 'g', agentId: AGENT, turnInstanceId: TURN },
    argv: ['quota', 'should-run', '--goal-id', 'g', '--agent-id', AGENT, '--turn-instance-id', TURN],
  },
  {
    tool: 'todo_complete',
    args: {
      goalId: 'g',
      todoId: 'todo_parser',
      evidence: 'parser tests pass',
      successorText: 'Document the parser.',
      agentId: AGENT,
      turnInstanceId: TURN,
    },
    argv: [
      'todo',
      'complete',
      '--goal-id',
      'g',
      '--todo-id',
      'todo_parser',
      '--evidence',
      'parser tests pass',
      '--successor-text',
      'Document the parser.',
      '--agent-id',
      AGENT,
      '--turn-instance-id',
      TURN,
    ],
  },
  {
    tool: 'refresh_state',
    args: {
      goalId: 'g',
      agentId: AGENT,
      classification: 'validated_progress',
      deliveryOutcome: 'outcome_progress',
      turnInstanceId: TURN,
    },
    argv: [
      'refresh-state',
      '--goal-id',
      'g',
      '--agent-id',
      AGENT,
      '--classification',
      'validated_progress',
      '--delivery-outcome',
      'outcome_progress',
      '--turn-instance-id',
      TURN,
    ],
  },
  {
    tool: 'spend_slot',
    args: { goalId: 'g', agentId: AGENT, turnInstanceId: TURN, source: 'heartbeat', execute: true },
    argv: [
      'quota',
      'spend-slot',
      '--goal-id',
      'g',
      '--agent-id',
      AGENT,
      '--turn-instance-id',
      TURN,
      '--source',
      'heartbeat',
      '--execute',
    ],
  },
];

/** A result with the workspace's own folder written as `<ws>`, so two workspaces' results compare. */
function portable(ws: Workspace, value: unknown): unknown {
  return JSON.parse(JSON.stringify(value).split(ws.dir).join('<ws>')) as unknown;
}

function spends(ws: Workspace): number {
  return readIndexRows(ws).filter((row) => row['classification'] === QUOTA_SLOT_SPENT).length;
}

describe('a heartbeat turn over MCP tools', () => {
  it('ends as the same turn through the CLI: results, state file, events and one spend', async () => {
    const overCli = makeWorkspace({}, TWO_TODOS);
    const overMcp = makeWorkspace({}, TWO_TODOS);
    const client = await connectInMemory({ dir: overMcp.dir, now: NOW });
    try {
      for (const step of STEPS) {
        const viaCli = await cli(overCli, step.argv);
        assert.equal(viaCli.code, 0, `${step.argv.join(' ')}: ${viaCli.stdout}`);
        const viaMcp = await call(client, step.tool, step.args);
        assert.equal(viaMcp.isError, undefined, `${step.tool}: ${JSON.stringify(viaMcp.content)}`);
        assert.deepEqual(portable(overMcp, viaMcp.structured), portable(overCli, viaCli.json()), step.tool);
      }
    } finally {
      await client.close();
    }
    assert.equal(fs.readFileSync(overMcp.statePath, 'utf8'), fs.readFileSync(overCli.statePath, 'utf8'));
    assert.deepEqual(portable(overMcp, events(overMcp)), portable(overCli, events(overCli)));
    assert.deepEqual(
      events(overMcp).map((event) => event['event_kind']),
      ['quota_should_run', 'todo_complete', 'refresh_state', 'quota_spend'],
    );
    assert.equal(spends(overMcp), 1);
  });

  it('replays every step for a second client with the same turn id: one receipt, one spend', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const first = await connectInMemory({ dir: ws.dir, now: NOW });
    for (const step of STEPS) {
      const result = await call(first, step.tool, step.args);
      assert.equal(result.isError, undefined, `${step.tool}: ${JSON.stringify(result.content)}`);
    }
    await first.close();
    const state = fs.readFileSync(ws.statePath, 'utf8');
    const logged = events(ws).length;

    const second = await connectInMemory({ dir: ws.dir, now: NOW });
    try {
      const guard = await call(second, 'should_run', STEPS[0]?.args ?? {});
      assert.equal((guard.structured['heartbeat_receipt'] as { replayed: boolean }).replayed, true);
      const complete = await call(second, 'todo_complete', STEPS[1]?.args ?? {});
      assert.equal(complete.structured['idempotent_replay'], true, JSON.stringify(complete.content));
      const spend = await call(second, 'spend_slot', STEPS[3]?.args ?? {});
      assert.equal(spend.isError, undefined, JSON.stringify(spend.content));
      assert.equal(spend.structured['idempotent_replay'], true, JSON.stringify(spend.structured));
    } finally {
      await second.close();
    }
    assert.equal(fs.readFileSync(ws.statePath, 'utf8'), state, 'a replay writes no todo again');
    assert.equal(events(ws).filter((event) => event['event_kind'] === 'quota_should_run').length, 1);
    assert.equal(events(ws).length, logged, 'replays append no event');
    assert.equal(spends(ws), 1);
  });

  it('previews a spend unless execute is true (writes_after_preview)', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const client = await connectInMemory({ dir: ws.dir, now: NOW });
    try {
      for (const step of STEPS.slice(0, 3)) await call(client, step.tool, step.args);
      const { execute: _execute, ...previewArgs } = STEPS[3]?.args ?? {};
      const before = readIndexRows(ws).length;
      const preview = await call(client, 'spend_slot', previewArgs);
      assert.equal(preview.structured['dry_run'], true, JSON.stringify(preview.structured));
      assert.equal(readIndexRows(ws).length, before);
      assert.equal(spends(ws), 0);
    } finally {
      await client.close();
    }
  });
});
