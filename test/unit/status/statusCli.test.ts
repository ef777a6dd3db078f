import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { goalItems, StatusPayloadSchema } from '../../../src/core/status/statusPayload';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import { runLoopx } from '../cli/run';

function demo(): string {
  return materializeDemoWorkspace(
    path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-status-cli-'))), 'demo'),
  );
}

const run = (dir: string, ...argv: string[]) =>
  runLoopx(argv, { cwd: dir, env: { HOME: dir }, now: '2026-11-28T10:00:00Z' });

describe('loopx status (CLI)', () => {
  it('shows the demo goal for people: Next Action, todos, gate, latest run and the warning with its fix', async () => {
    const dir = demo();
    const result = await run(dir, 'status');
    assert.equal(result.code, 0, result.stderr);
    const out = result.stdout;
    assert.match(out, /^# LoopX status\n/);
    assert.match(out, /## tidy-notes — Tidy the notes folder/);
    assert.match(out, /- Next Action: Add a "Related" section linking notes that share a tag\.\n/);
    assert.match(out, /- Agent todos: 4 open, 1 done of 5\n/);
    assert.match(out, /- User todos: 2 open, 0 done of 2\n/);
    assert.match(
      out,
      /- Quota: operator_gate — 1 of 24 slots used in 24 h/,
      'the open user gate holds the goal for the controller; the 08:56 spend counts in the rolling window',
    );
    assert.match(
      out,
      /`todo_gate_publish` Approve publishing the knowledge base to the team wiki\. \(agent demo\); holds back todo_publish/,
    );
    assert.match(out, /- Latest run: 2026-11-28T08:56:00\+00:00 quota_slot_spent by demo \(3 runs\)/);
    assert.match(out, /\*\*warning\*\* The state file changed after the latest run recorded it/);
    assert.match(
      out,
      /record a fresh snapshot: `loopx refresh-state --goal-id tidy-notes --classification state_refreshed`/,
    );
  });

  it('prints the status payload in JSON; --goal-id, --agent-id and --limit narrow it', async () => {
    const dir = demo();
    const result = await run(
      dir,
      'status',
      '--goal-id',
      'tidy-notes',
      '--agent-id',
      'codex-main',
      '--limit',
      '1',
      '--format',
      'json',
    );
    assert.equal(result.code, 0, result.stderr);
    const payload = StatusPayloadSchema.parse(result.json());
    assert.equal(payload.agent_id, 'codex-main');
    const item = goalItems(payload)[0];
    assert.equal(item?.latest_runs.length, 1);
    assert.deepEqual(
      item?.agent_todos?.items.map((todo) => todo.todo_id),
      ['todo_related', 'todo_index', 'todo_links', 'todo_publish', 'todo_titles'],
    );
  });

  it('exits 0 after the warning is resolved by refresh-state, which makes it go away', async () => {
    const dir = demo();
    const refreshed = await run(
      dir,
      'refresh-state',
      '--goal-id',
      'tidy-notes',
      '--classification',
      'state_refreshed',
      '--agent-id',
      'codex-main',
      '--progress-scope',
      'goal',
    );
    assert.equal(refreshed.code, 0, refreshed.stderr);
    const status = await run(dir, 'status', '--format', 'json');
    const item = goalItems(StatusPayloadSchema.parse(status.json()))[0];
    assert.deepEqual(item?.projection_warnings, []);
    assert.equal(item?.latest_runs[0]?.classification, 'state_refreshed');
    assert.equal(item?.status, 'active_state_user_gate', 'the open gate still routes the goal to the controller');
  });

  it('exits 1 when the registry cannot be read, 2 for bad arguments', async () => {
    const dir = demo();
    const registry = path.join(dir, '.loopx', 'registry.json');
    fs.writeFileSync(registry, '{"goals": [\n  {"id": "x",}\n]}');
    const broken = await run(dir, 'status');
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /registry\.json:2:\d+: the registry is not valid JSON/);

    fs.rmSync(registry);
    const missing = await run(dir, 'status', '--registry', registry);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /registry file does not exist/);

    const fresh = demo();
    assert.equal((await run(fresh, 'status', '--goal-id', 'nope')).code, 2);
    assert.equal((await run(fresh, 'status', '--limit', '0')).code, 2);
    assert.equal((await run(fresh, 'status', '--agent-id', '!!')).code, 2);
  });
});
