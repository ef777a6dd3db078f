import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  appendRolloutEvents,
  buildRolloutEvent,
  rolloutEventLogPath,
  ROLLOUT_EVENT_SCHEMA,
} from '../../../src/core/evidence/rolloutLog';
import { makeWorkspace, readIndexRows } from '../quota/helpers';
import { TWO_TODOS, cli } from './helpers';

/**
 * Issue 34, defect 7: the rollout event log says `credential_values_recorded: false`, so no
 * credential may reach it (through a turn id, a classification, a summary or details), and
 * `evidence-log` shows a log someone else wrote with its credentials redacted.
 */

/** Planted secrets that fit a turn id or classification token (`[A-Za-z0-9._:-]`). */
const SECRETS = [
  'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789',
  'sk-proj-abcdefghijklmnopqrstuvwxyzabcdef', // no digits, no capitals
  'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv-1234',
  `ghp_${'A1b2C3d4E5'.repeat(4)}`,
  'AKIAIOSFODNN7EXAMPLE',
  'xoxb-123456789012-abcdefghijkl',
  `npm_${'a1B2c3D4e5F6'.repeat(3)}`,
];

function logText(runtimeRoot: string): string {
  const file = rolloutEventLogPath(runtimeRoot, 'g');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}

describe('the rollout event log holds no credentials (issue 34, defect 7)', () => {
  it('a turn id or classification holding a credential is refused and written nowhere', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    for (const secret of SECRETS) {
      const guard = await cli(ws, [
        'quota',
        'should-run',
        '--goal-id',
        'g',
        '--agent-id',
        'agent-a',
        '--turn-instance-id',
        secret,
      ]);
      assert.notEqual(guard.code, 0, `should-run accepted turn id ${secret}`);
      assert.equal(guard.error().code, 'credential_refused', secret);
      assert.ok(!guard.stdout.includes(secret), `the refusal echoes ${secret}`);
      const writeback = await cli(ws, [
        'refresh-state',
        '--goal-id',
        'g',
        '--agent-id',
        'agent-a',
        '--classification',
        secret,
      ]);
      assert.notEqual(writeback.code, 0, `refresh-state accepted classification ${secret}`);
      assert.equal(writeback.error().code, 'credential_refused', secret);
    }
    const written = `${logText(ws.runtimeRoot)}${JSON.stringify(readIndexRows(ws))}`;
    for (const secret of SECRETS) assert.ok(!written.includes(secret), `${secret} was written`);
  });

  it('the writer redacts a credential in any field of a row, whatever its caller checked', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const goalDir = path.join(ws.runtimeRoot, 'goals', 'g');
    const rows = SECRETS.map((secret, i) =>
      buildRolloutEvent({
        goalId: 'g',
        eventKind: 'refresh_state',
        recordedAt: `2026-01-15T10:00:0${i}+00:00`,
        agentId: 'agent-a',
        runId: secret,
        status: 'recorded',
        classification: secret,
        summary: `writeback of turn ${secret}: done`,
        details: { settlement_effect_id: `g:agent-a::${secret}` },
      }),
    );
    await appendRolloutEvents(goalDir, rows);
    const text = logText(ws.runtimeRoot);
    assert.equal(text.trim().split('\n').length, SECRETS.length);
    for (const secret of SECRETS) assert.ok(!text.includes(secret), `${secret} reached the event log`);
    assert.match(text, /\[redacted:openai_key\]/);
  });

  it('evidence-log shows a log written by someone else with its credentials redacted', async () => {
    const ws = makeWorkspace({}, TWO_TODOS);
    const file = rolloutEventLogPath(ws.runtimeRoot, 'g');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const planted = SECRETS.map((secret, i) =>
      JSON.stringify({
        schema_version: ROLLOUT_EVENT_SCHEMA,
        goal_id: 'g',
        event_kind: 'refresh_state',
        event_id: `e${i}`,
        recorded_at: `2026-01-15T09:00:0${i}+00:00`,
        agent_id: 'agent-a',
        run_id: secret,
        classification: secret,
        summary: `token=${secret} and ${secret}`,
        details: { note: secret, api_key: 'hunter2-plain' },
        foreign_field: `Bearer ${secret}`,
      }),
    );
    fs.writeFileSync(file, `${planted.join('\n')}\n`);
    for (const format of ['json', 'markdown']) {
      const shown = await cli(ws, ['--format', format, 'evidence-log', '--goal-id', 'g']);
      assert.equal(shown.code, 0, shown.stdout);
      if (format === 'json') assert.equal((shown.json()['events'] as unknown[]).length, SECRETS.length);
      for (const secret of [...SECRETS, 'hunter2-plain'])
        assert.ok(!shown.stdout.includes(secret), `evidence-log (${format}) printed ${secret}`);
    }
    assert.equal(fs.readFileSync(file, 'utf8'), `${planted.join('\n')}\n`, 'the reader rewrote the log');
  });
});
