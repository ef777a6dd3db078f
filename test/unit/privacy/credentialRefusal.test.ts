import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isLoopxError } from '../../../src/core/errors';
import { StatusPayloadSchema } from '../../../src/core/status/statusPayload';
import {
  addTodo,
  completeTodo,
  deferTodo,
  supersedeTodo,
  updateTodo,
  type OperationContext,
} from '../../../src/core/state/todos';
import { checkHostResult } from '../../../src/core/protocol/contract';
import { runOnce } from '../../../src/core/turn/runOnce';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import { runLoopx } from '../cli/run';
import { removeTempDirs, demo, fixtureRun, newSpends, reservations, tempDir } from '../turn/helpers';

/**
 * Credentials are refused wherever a person or an agent writes into durable state, and scrubbed
 * from `loopx status` when a state file already holds one. Every refusal writes nothing.
 */

after(removeTempDirs);

const SECRET = 'hunter2xyz';
const GITHUB = `ghp_${'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'}`;

/** Every file under `dir` with its content, to prove a refused command wrote nothing. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true }).map(String).sort()) {
    const full = path.join(dir, entry);
    out[entry] = fs.statSync(full).isDirectory() ? '<dir>' : fs.readFileSync(full, 'utf8');
  }
  return out;
}

function demoDir(): string {
  return materializeDemoWorkspace(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-refuse-')), 'demo'));
}

const cli = (dir: string, ...argv: string[]) =>
  runLoopx(argv, { cwd: dir, env: { HOME: dir }, now: '2026-11-28T10:00:00Z' });

/** Runs a refused CLI command: exit 1, `{"ok": false}` naming the field, and no file changed. */
async function assertRefused(dir: string, field: string, ...argv: string[]): Promise<void> {
  const before = tree(dir);
  const run = await cli(dir, ...argv, '--format', 'json');
  assert.equal(run.code, 1, run.stdout + run.stderr);
  const body = run.json();
  assert.equal(body['ok'], false);
  const error = run.error();
  assert.equal(error.details['field'], field);
  assert.match(error.message, new RegExp(`^${field} holds a credential \\(.+\\); remove the secret`));
  assert.doesNotMatch(run.stdout, new RegExp(`${SECRET}|${GITHUB}`), 'the error never echoes the secret');
  assert.deepEqual(tree(dir), before, 'a refused command writes nothing');
}

describe('credentials in durable state', () => {
  it('refresh-state refuses a credential in --next-action or --recommended-action (exit 1, nothing written)', async () => {
    const dir = demoDir();
    const base = ['refresh-state', '--goal-id', 'tidy-notes', '--classification', 'state_refreshed'];
    const lane = ['--agent-id', 'codex-main', '--progress-scope', 'goal'];
    await assertRefused(dir, 'next_action', ...base, ...lane, '--next-action', `password=${SECRET}`);
    await assertRefused(dir, 'next_action', ...base, ...lane, '--next-action', `deploy with ${GITHUB}`);
    await assertRefused(dir, 'recommended_action', ...base, ...lane, '--recommended-action', `DB_PASSWORD='${SECRET}'`);
    const ok = await cli(dir, ...base, ...lane, '--next-action', 'Fix the password reset flow.');
    assert.equal(ok.code, 0, ok.stderr);
  });

  it('todo add / update / complete / defer and configure-goal refuse credentials (exit 1, nothing written)', async () => {
    const dir = demoDir();
    const goal = ['--goal-id', 'tidy-notes'];
    await assertRefused(dir, 'text', 'todo', 'add', ...goal, '--text', `rotate SECRET_KEY=${SECRET}`);
    await assertRefused(dir, 'text', 'todo', 'update', ...goal, '--todo-id', 'todo_related', '--text', GITHUB);
    await assertRefused(
      dir,
      'evidence',
      'todo',
      'complete',
      ...goal,
      '--todo-id',
      'todo_related',
      '--evidence',
      `logged in as https://bob:${SECRET}@db.example.com`,
      '--no-follow-up',
    );
    await assertRefused(
      dir,
      'reason',
      'todo',
      'defer',
      ...goal,
      '--todo-id',
      'todo_related',
      '--reason',
      `token: ${SECRET}`,
    );
    await assertRefused(
      dir,
      '--write-scope',
      'configure-goal',
      ...goal,
      '--write-scope',
      `notes/${GITHUB}/*`,
      '--execute',
    );
  });

  it('the todo operations refuse each written field by name', () => {
    const dir = demoDir();
    const text = fs.readFileSync(path.join(dir, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md'), 'utf8');
    const context: OperationContext = { now: '2026-11-28T10:00:00Z', goalId: 'tidy-notes', roster: null };
    const leak = `password=${SECRET}`;
    const cases: [string, () => unknown][] = [
      ['text', () => addTodo(text, { role: 'agent', text: leak }, context)],
      ['note', () => addTodo(text, { role: 'agent', text: 'fine', note: leak }, context)],
      ['text', () => updateTodo(text, { todoId: 'todo_related', text: leak }, context)],
      ['note', () => updateTodo(text, { todoId: 'todo_related', note: leak }, context)],
      ['evidence', () => completeTodo(text, { todoId: 'todo_related', evidence: leak, noFollowUp: true }, context)],
      [
        'successor text',
        () => completeTodo(text, { todoId: 'todo_related', evidence: 'done', successor: { text: leak } }, context),
      ],
      [
        'reason',
        () => supersedeTodo(text, { todoId: 'todo_related', reason: leak, supersededBy: 'todo_index' }, context),
      ],
      ['reason', () => deferTodo(text, { todoId: 'todo_related', reason: leak }, context)],
    ];
    for (const [field, call] of cases) {
      assert.throws(call, (error: unknown) => {
        assert.ok(isLoopxError(error, 'credential_refused'), String(error));
        assert.equal(error.details['field'], field);
        assert.deepEqual(error.details['credential_kinds'], ['password']);
        return true;
      });
    }
  });

  it("an agent's result with a credential in any written field breaks the contract, naming the field", () => {
    const base = {
      schema_version: 'loopx_turn_result_v0',
      result_kind: 'validated_completion',
      summary: 'did it',
      next_action: 'next',
      classification: 'notes_linked',
      recommended_action: 'next',
      delivery_batch_scale: 'single_surface',
      delivery_outcome: 'outcome_progress',
      todo: { todo_id: 't1', disposition: 'done', evidence: 'ok', successor: { text: 'follow up' } },
    };
    const leak = `api_key=${SECRET}`;
    const cases: [string, Record<string, unknown>][] = [
      ['summary', { summary: leak }],
      ['evidence.0', { evidence: [leak] }],
      ['todo.evidence', { todo: { ...base.todo, evidence: leak } }],
      ['todo.successor.text', { todo: { ...base.todo, successor: { text: leak } } }],
      ['next_action', { next_action: leak }],
      ['recommended_action', { recommended_action: leak }],
      [
        'todo.question',
        { result_kind: 'user_action_required', todo: { todo_id: 't1', disposition: 'needs_user', question: leak } },
      ],
    ];
    for (const [field, change] of cases) {
      const check = checkHostResult({ ...base, ...change }, { selected_todo: { todo_id: 't1' } });
      assert.equal(check.ok, false, field);
      const problems = check.ok ? [] : check.problems;
      assert.ok(
        problems.some((p) => p.startsWith(`${field}: `)),
        `${field}: ${problems.join('; ')}`,
      );
      assert.ok(!problems.join('\n').includes(SECRET));
    }
  });

  it('a turn whose agent leaks a credential fails as a contract violation: nothing written, slot released, no spend', async () => {
    const d = demo();
    const agent = path.join(tempDir('loopx-leaky-agent-'), 'agent.js');
    fs.writeFileSync(
      agent,
      `const request = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify({
  schema_version: 'loopx_turn_result_v0', turn_key: request.turn_key, result_kind: 'validated_completion',
  summary: 'linked the notes', next_action: 'Run the next turn.', classification: 'notes_linked',
  recommended_action: 'Run the next turn.', delivery_batch_scale: 'single_surface', delivery_outcome: 'outcome_progress',
  evidence: ['tests pass'], changed_files: [],
  todo: { todo_id: request.selected_todo.todo_id, disposition: 'done', evidence: 'logged in with DB_PASSWORD=${SECRET}',
          successor: { text: 'use ${GITHUB} to push' } },
}) + '\\n');
`,
    );
    const stateBefore = fs.readFileSync(d.statePath, 'utf8');
    const result = await runOnce(fixtureRun(d, 'unused', { hostAdapterCommand: [process.execPath, agent] }));
    assert.equal(result.status, 'failed', result.message);
    assert.equal(result.result_kind, 'host_failure');
    assert.equal(result.failure?.reason, 'contract_violation');
    assert.match(result.failure?.message ?? '', /todo\.evidence: holds a credential \(password\); remove the secret/);
    assert.equal(fs.readFileSync(d.statePath, 'utf8'), stateBefore, 'the state file is untouched');
    assert.deepEqual(await newSpends(d), [], 'nothing is spent');
    assert.deepEqual(reservations(d), [], 'the reservation is voided');
    for (const [file, content] of Object.entries(tree(d.workspace))) {
      assert.ok(!content.includes(SECRET) && !content.includes(GITHUB), `${file} holds the secret`);
    }
  });

  it('status does not print a credential already in a state file, but keeps local paths', async () => {
    const dir = demoDir();
    const statePath = path.join(dir, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md');
    const text = fs.readFileSync(statePath, 'utf8');
    fs.writeFileSync(
      statePath,
      text.replace(
        '- Add a "Related" section linking notes that share a tag.',
        `- Deploy with password=${SECRET} and ${GITHUB}`,
      ),
    );
    const markdown = await cli(dir, 'status');
    assert.equal(markdown.code, 0, markdown.stderr);
    assert.match(markdown.stdout, /Deploy with password=\[redacted:password\] and \[redacted:github_token\]/);
    const json = await cli(dir, 'status', '--format', 'json');
    assert.equal(json.code, 0, json.stderr);
    assert.ok(!json.stdout.includes(SECRET) && !json.stdout.includes(GITHUB));
    const payload = StatusPayloadSchema.parse(json.json());
    assert.equal(payload.registry, path.join(dir, '.loopx', 'registry.json'), 'the local display keeps paths');
  });
});
