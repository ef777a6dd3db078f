import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isLoopxError } from '../../../src/core/errors';
import { readLeaseSync } from '../../../src/core/leases/store';
import { startTogether } from '../../support/barrier';
import { runLoopx } from '../cli/run';

const REPO = path.resolve(__dirname, '..', '..', '..');
const ACQUIRE_MANY = path.join(REPO, 'test', 'unit', 'leases', 'workers', 'acquireMany.ts');
const NOW = '2026-07-01T12:00:00Z';

function stateText(frontMatter: string[] = []): string {
  return [
    '---',
    'status: active',
    ...frontMatter,
    '---',
    '## Agent Todo',
    '- [ ] [P1] Build the parser.',
    '  <!-- loopx:todo todo_id=todo_parser status=open task_class=advancement_task -->',
    '- [ ] [P2] Write the docs.',
    '  <!-- loopx:todo todo_id=todo_docs status=open task_class=advancement_task -->',
    '- [ ] [P3] Claimed elsewhere.',
    '  <!-- loopx:todo todo_id=todo_claimed status=open task_class=advancement_task claimed_by=agent-b -->',
    '## Next Action',
    '- Build the parser.',
    '',
  ].join('\n');
}

interface Project {
  dir: string;
  stateFile: string;
  runtime: string;
  run: (argv: string[], now?: string) => ReturnType<typeof runLoopx>;
  leaseFile: (todoId: string) => string;
}

function project(frontMatter: string[] = []): Project {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-lease-'));
  const stateFile = path.join(dir, '.codex', 'goals', 'g1', 'ACTIVE_GOAL_STATE.md');
  fs.mkdirSync(path.dirname(stateFile), { recursive: true });
  fs.writeFileSync(stateFile, stateText(frontMatter));
  fs.mkdirSync(path.join(dir, '.loopx'));
  const runtime = path.join(dir, 'runtime');
  fs.writeFileSync(
    path.join(dir, '.loopx', 'registry.json'),
    JSON.stringify({
      common_runtime_root: runtime,
      goals: [
        {
          id: 'g1',
          repo: dir,
          state_file: '.codex/goals/g1/ACTIVE_GOAL_STATE.md',
          coordination: { registered_agents: ['agent-a', 'agent-b', 'agent-c'] },
        },
      ],
    }),
  );
  return {
    dir,
    stateFile,
    runtime,
    run: (argv, now = NOW) => runLoopx([...argv, '--format', 'json'], { cwd: dir, env: { HOME: dir }, now }),
    leaseFile: (todoId) => path.join(runtime, 'goals', 'g1', 'task-leases', `${todoId}.json`),
  };
}

const acquire = (owner: string, key: string, todo = 'todo_parser', extra: string[] = []) => [
  'task-lease',
  'acquire',
  '--goal-id',
  'g1',
  '--todo-id',
  todo,
  '--owner',
  owner,
  '--idempotency-key',
  key,
  ...extra,
];

function readLease(p: Project, todoId: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(p.leaseFile(todoId), 'utf8')) as Record<string, unknown>;
}

describe('task leases (task-lease acquire|renew|transfer|release|inspect)', () => {
  it('acquire writes a task_lease_v0 record in the original layout; a retry with the same key is idempotent', async () => {
    const p = project();
    const first = await p.run(acquire('agent-a', 'run-1', 'todo_parser', ['--write-scope', 'src/parser/**']));
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.equal(first.json()['acquired'], true);
    assert.equal(first.json()['lease_path'], p.leaseFile('todo_parser'));
    const lease = readLease(p, 'todo_parser');
    assert.deepEqual(
      [lease['schema_version'], lease['goal_id'], lease['todo_id'], lease['owner'], lease['idempotency_key']],
      ['task_lease_v0', 'g1', 'todo_parser', 'agent-a', 'run-1'],
    );
    assert.deepEqual([lease['version'], lease['lease_epoch'], lease['status']], [1, 1, 'active']);
    assert.equal(lease['acquire_ttl_seconds'], 45 * 60, 'default TTL is 45 minutes');
    assert.equal(lease['expires_at'], '2026-07-01T12:45:00Z');
    assert.deepEqual(lease['write_scopes'], ['src/parser/**']);
    // Exactly the original's field set, so its reader sees what it writes itself.
    assert.deepEqual(Object.keys(lease).sort(), [
      'acquire_ttl_seconds',
      'acquired_at',
      'expires_at',
      'goal_id',
      'idempotency_key',
      'lease_epoch',
      'owner',
      'schema_version',
      'status',
      'todo_id',
      'updated_at',
      'version',
      'write_scopes',
    ]);
    const markdown = await runLoopx(['task-lease', 'inspect', '--goal-id', 'g1', '--todo-id', 'todo_parser'], {
      cwd: p.dir,
      env: { HOME: p.dir },
      now: NOW,
    });
    assert.match(markdown.stdout, /In force\.[\s\S]*Owner: agent-a \(status active\)[\s\S]*Version 1, epoch 1/);

    const again = await p.run(acquire('agent-a', 'run-1', 'todo_parser', ['--write-scope', 'src/parser/**']));
    assert.equal(again.code, 0);
    assert.deepEqual([again.json()['acquired'], again.json()['idempotent']], [false, true]);
    assert.equal(readLease(p, 'todo_parser')['version'], 1, 'the retry wrote nothing');

    const changed = await p.run(acquire('agent-a', 'run-1', 'todo_parser', ['--write-scope', 'docs/**']));
    assert.equal(changed.error().code, 'idempotency_key_reuse');
  });

  it('a second agent is refused while the lease is active, and takes it once it has expired (epoch and version rise)', async () => {
    const p = project();
    assert.equal((await p.run(acquire('agent-a', 'run-1', 'todo_parser', ['--ttl-seconds', '600']))).code, 0);
    const refused = await p.run(acquire('agent-c', 'run-9'));
    assert.equal(refused.code, 1);
    assert.equal(refused.error().code, 'todo_lease_conflict');
    assert.equal(readLease(p, 'todo_parser')['owner'], 'agent-a');

    const later = '2026-07-01T12:10:01Z'; // past expires_at 12:10:00
    const inspect = await p.run(['task-lease', 'inspect', '--goal-id', 'g1', '--todo-id', 'todo_parser'], later);
    assert.equal(inspect.json()['active'], false);
    const taken = await p.run(acquire('agent-c', 'run-9'), later);
    assert.equal(taken.code, 0, taken.stdout);
    const lease = readLease(p, 'todo_parser');
    assert.deepEqual([lease['owner'], lease['version'], lease['lease_epoch']], ['agent-c', 2, 2]);
  });

  it('refuses a TTL over 24 h, an unregistered owner, a todo claimed by someone else and a non-open todo', async () => {
    const p = project();
    assert.equal(
      (await p.run(acquire('agent-a', 'k', 'todo_parser', ['--ttl-seconds', '86401']))).error().code,
      'invalid_ttl',
    );
    assert.equal((await p.run(acquire('agent-z', 'k'))).error().code, 'agent_not_registered');
    assert.equal((await p.run(acquire('agent-a', 'k', 'todo_claimed'))).error().code, 'owner_conflicts_with_claim');
    assert.equal((await p.run(acquire('agent-a', 'bad key!'))).error().code, 'invalid_idempotency_key');
    assert.equal(fs.existsSync(p.leaseFile('todo_parser')), false, 'no refusal wrote a lease');
    assert.equal((await p.run(acquire('agent-b', 'k', 'todo_claimed', ['--ttl-seconds', '86400']))).code, 0);
  });

  it('overlapping write scopes of another active lease are refused; disjoint ones are not', async () => {
    const p = project();
    assert.equal((await p.run(acquire('agent-a', 'k1', 'todo_parser', ['--write-scope', 'src/core/**']))).code, 0);
    const overlap = await p.run(acquire('agent-b', 'k2', 'todo_docs', ['--write-scope', 'src/core/leases/store.ts']));
    assert.equal(overlap.error().code, 'write_scope_conflict');
    assert.equal(
      (overlap.error().details['conflicts'] as Array<Record<string, unknown>>)[0]?.['todo_id'],
      'todo_parser',
    );
    assert.equal(fs.existsSync(p.leaseFile('todo_docs')), false);
    const disjoint = await p.run(acquire('agent-b', 'k2', 'todo_docs', ['--write-scope', 'docs/**']));
    assert.equal(disjoint.code, 0, disjoint.stdout);
  });

  it('renew and release need owner, key and the expected version (compare-and-swap)', async () => {
    const p = project();
    await p.run(acquire('agent-a', 'k1'));
    const base = ['--goal-id', 'g1', '--todo-id', 'todo_parser', '--owner', 'agent-a', '--idempotency-key', 'k1'];
    assert.equal((await p.run(['task-lease', 'renew', ...base])).error().code, 'version_required');
    const stale = await p.run(['task-lease', 'renew', ...base, '--expected-version', '0']);
    assert.equal(stale.error().code, 'version_mismatch');
    assert.deepEqual(stale.error().details, { expected_version: 0, actual_version: 1 });
    const wrongKey = await p.run([
      'task-lease',
      'renew',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_parser',
      '--owner',
      'agent-a',
      '--idempotency-key',
      'other',
      '--expected-version',
      '1',
    ]);
    assert.equal(wrongKey.error().code, 'lease_cas_mismatch');
    const renewed = await p.run(['task-lease', 'renew', ...base, '--expected-version', '1'], '2026-07-01T12:30:00Z');
    assert.equal(renewed.code, 0, renewed.stdout);
    assert.deepEqual(
      [
        readLease(p, 'todo_parser')['version'],
        readLease(p, 'todo_parser')['lease_epoch'],
        readLease(p, 'todo_parser')['expires_at'],
      ],
      [2, 1, '2026-07-01T13:15:00Z'],
    );
    const released = await p.run(['task-lease', 'release', ...base, '--expected-version', '2']);
    assert.equal(released.code, 0, released.stdout);
    assert.equal(readLease(p, 'todo_parser')['status'], 'released');
    assert.equal(
      (await p.run(['task-lease', 'release', ...base, '--expected-version', '2'])).json()['idempotent'],
      true,
    );
    // A released generation's key cannot start a new one.
    assert.equal((await p.run(acquire('agent-a', 'k1'))).error().code, 'idempotency_key_reuse');
    assert.equal((await p.run(acquire('agent-a', 'k2'))).code, 0);
    assert.deepEqual([readLease(p, 'todo_parser')['version'], readLease(p, 'todo_parser')['lease_epoch']], [3, 2]);
  });

  it('transfer hands the lease to another agent under a new key, bumping version and epoch', async () => {
    const p = project();
    await p.run(acquire('agent-a', 'k1'));
    const args = [
      'task-lease',
      'transfer',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_parser',
      '--owner',
      'agent-a',
      '--idempotency-key',
      'k1',
      '--new-owner',
      'agent-c',
      '--expected-version',
      '1',
    ];
    assert.equal((await p.run([...args, '--new-idempotency-key', 'k1'])).error().code, 'idempotency_key_reuse');
    const moved = await p.run([...args, '--new-idempotency-key', 'k2']);
    assert.equal(moved.code, 0, moved.stdout);
    const lease = readLease(p, 'todo_parser');
    assert.deepEqual(
      [lease['owner'], lease['idempotency_key'], lease['version'], lease['lease_epoch']],
      ['agent-c', 'k2', 2, 2],
    );
    // The old holder's key no longer works.
    assert.equal((await p.run([...args, '--new-idempotency-key', 'k3'])).error().code, 'version_mismatch');
  });

  it('completing a leased todo needs the key and the current version; a stale version is refused and nothing is written', async () => {
    const p = project();
    await p.run(acquire('agent-a', 'k1'));
    const before = fs.readFileSync(p.stateFile, 'utf8');
    const complete = [
      'todo',
      'complete',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_parser',
      '--evidence',
      'tests pass',
      '--no-follow-up',
    ];
    assert.equal((await p.run(complete)).error().code, 'lease_fence_required');
    assert.equal(
      (await p.run([...complete, '--agent-id', 'agent-b', '--lease-key', 'k1', '--expected-version', '1'])).error()
        .code,
      'lease_cas_mismatch',
    );
    const stale = await p.run([...complete, '--agent-id', 'agent-a', '--lease-key', 'k1', '--expected-version', '0']);
    assert.equal(stale.error().code, 'version_mismatch');
    assert.equal(fs.readFileSync(p.stateFile, 'utf8'), before, 'no refusal wrote the state file');
    assert.equal(readLease(p, 'todo_parser')['status'], 'active');
    const supersede = await p.run([
      'todo',
      'supersede',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_parser',
      '--successor-text',
      'x',
    ]);
    assert.equal(supersede.error().code, 'lease_fence_required', 'supersede is a completion for the lease');

    const done = await p.run([
      ...complete,
      '--agent-id',
      'agent-a',
      '--task-lease-idempotency-key',
      'k1',
      '--task-lease-expected-version',
      '1',
    ]);
    assert.equal(done.code, 0, done.stdout);
    assert.equal((done.json()['task_lease_fence'] as Record<string, unknown>)['released'], true);
    assert.equal(readLease(p, 'todo_parser')['status'], 'released');
    assert.match(fs.readFileSync(p.stateFile, 'utf8'), /- \[x\] \[P1\] Build the parser\./);
    // The holder's retry replays.
    const retry = await p.run([...complete, '--agent-id', 'agent-a', '--lease-key', 'k1', '--expected-version', '1']);
    assert.equal(retry.code, 0, retry.stdout);
    assert.equal(retry.json()['written'], false);
  });

  it('soft_claim forbids acquire; hard_lease refuses a keyless completion and claim acquires for the claimant', async () => {
    const soft = project(['handoff_mode: soft_claim']);
    assert.equal((await soft.run(acquire('agent-a', 'k1'))).error().code, 'handoff_mode_forbids_lease');

    const hard = project(['handoff_mode: hard_lease']);
    const complete = [
      'todo',
      'complete',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_docs',
      '--evidence',
      'ok',
      '--no-follow-up',
    ];
    const refused = await hard.run([...complete, '--agent-id', 'agent-a']);
    assert.equal(refused.error().code, 'handoff_mode_requires_lease');
    const claim = await hard.run([
      'todo',
      'claim',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_docs',
      '--claimed-by',
      'agent-a',
      '--agent-id',
      'agent-a',
    ]);
    assert.equal(claim.code, 0, claim.stdout);
    const lease = claim.json()['task_lease'] as Record<string, unknown>;
    assert.deepEqual([lease['owner'], lease['version'], lease['status']], ['agent-a', 1, 'active']);
    assert.equal(readLease(hard, 'todo_docs')['owner'], 'agent-a');
    const other = await hard.run([
      'todo',
      'claim',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_docs',
      '--claimed-by',
      'agent-c',
      '--agent-id',
      'agent-c',
      '--takeover',
    ]);
    assert.equal(other.error().code, 'handoff_mode_requires_lease');
    // A soft claim without a lease can be taken over: the taker gets the lease.
    const takeover = await hard.run([
      'todo',
      'claim',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_claimed',
      '--claimed-by',
      'agent-c',
      '--agent-id',
      'agent-c',
      '--takeover',
    ]);
    assert.equal(takeover.code, 0, takeover.stdout);
    assert.equal(readLease(hard, 'todo_claimed')['owner'], 'agent-c');
    assert.equal(takeover.json()['claimed_by'], 'agent-c');
    const done = await hard.run([
      ...complete,
      '--agent-id',
      'agent-a',
      '--lease-key',
      String(lease['idempotency_key']),
      '--expected-version',
      '1',
    ]);
    assert.equal(done.code, 0, done.stdout);

    const bad = project(['handoff_mode: strict']);
    const invalid = await bad.run(acquire('agent-a', 'k1'));
    assert.equal(invalid.error().code, 'invalid_handoff_mode');
    assert.match(invalid.error().message, /front matter/);
  });

  it('a lease file written by the original is read, honored and advanced; a corrupt one is refused and left untouched', async () => {
    const p = project();
    fs.mkdirSync(path.dirname(p.leaseFile('todo_parser')), { recursive: true });
    // As the original writes it (no lease_epoch yet: a pre-epoch record counts as epoch 1), plus a field we do not know.
    const original = {
      schema_version: 'task_lease_v0',
      goal_id: 'g1',
      todo_id: 'todo_parser',
      owner: 'agent-b',
      idempotency_key: 'original-execution',
      version: 4,
      status: 'active',
      write_scopes: [],
      acquire_ttl_seconds: 2700,
      acquired_at: '2026-07-01T11:50:00Z',
      updated_at: '2026-07-01T11:50:00Z',
      expires_at: '2026-07-01T12:35:00Z',
      host_note: 'kept',
    };
    fs.writeFileSync(p.leaseFile('todo_parser'), JSON.stringify(original, null, 2));
    assert.equal((await p.run(acquire('agent-a', 'k1'))).error().code, 'todo_lease_conflict');
    const renewed = await p.run([
      'task-lease',
      'renew',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_parser',
      '--owner',
      'agent-b',
      '--idempotency-key',
      'original-execution',
      '--expected-version',
      '4',
    ]);
    assert.equal(renewed.code, 0, renewed.stdout);
    const lease = readLease(p, 'todo_parser');
    assert.deepEqual([lease['version'], lease['lease_epoch'], lease['host_note']], [5, 1, 'kept']);

    fs.writeFileSync(p.leaseFile('todo_docs'), '{"schema_version": "task_lease_v0", "version": true}');
    const corrupt = await p.run(acquire('agent-a', 'k1', 'todo_docs'));
    assert.equal(corrupt.error().code, 'corrupt_lease');
    assert.match(corrupt.error().message, /todo_docs\.json/);
    assert.equal(
      fs.readFileSync(p.leaseFile('todo_docs'), 'utf8'),
      '{"schema_version": "task_lease_v0", "version": true}',
    );
  });

  it('a lease file reached through a symlink is refused, not followed, and left untouched', async () => {
    const p = project();
    assert.equal((await p.run(acquire('agent-a', 'k1'))).code, 0);
    // The record moved outside the lease folder, a link in its place: whoever controls the link
    // target would decide who holds the todo.
    const elsewhere = path.join(p.dir, 'elsewhere.json');
    fs.renameSync(p.leaseFile('todo_parser'), elsewhere);
    fs.symlinkSync(elsewhere, p.leaseFile('todo_parser'));
    const target = fs.readFileSync(elsewhere, 'utf8');
    const inspect = ['task-lease', 'inspect', '--goal-id', 'g1', '--todo-id', 'todo_parser'];
    for (const argv of [inspect, acquire('agent-b', 'k2')]) {
      const refused = await p.run(argv);
      assert.equal(refused.code, 1, refused.stdout);
      assert.equal(refused.error().code, 'corrupt_lease');
      assert.match(refused.error().message, /todo_parser\.json.*symbolic link/);
    }
    // The synchronous reader (active lease holders) refuses it too.
    assert.throws(
      () => readLeaseSync(p.leaseFile('todo_parser')),
      (error: unknown) => isLoopxError(error, 'corrupt_lease'),
    );
    assert.ok(fs.lstatSync(p.leaseFile('todo_parser')).isSymbolicLink(), 'the link is still there');
    assert.equal(fs.readFileSync(elsewhere, 'utf8'), target, 'its target is untouched');
  });

  it('agents acquiring the same leases at once (real processes behind a start barrier): each todo gets exactly one holder', async function () {
    this.timeout(120000);
    const p = project();
    // 24 more open todos, so the racers collide many times, not once.
    const ids = Array.from({ length: 24 }, (_, i) => `todo_race_${String(i).padStart(2, '0')}`);
    const extra = ids.flatMap((id) => [
      `- [ ] Race ${id}.`,
      `  <!-- loopx:todo todo_id=${id} status=open task_class=advancement_task -->`,
    ]);
    fs.writeFileSync(p.stateFile, stateText().replace('## Next Action', `${extra.join('\n')}\n## Next Action`));
    const agents = ['agent-a', 'agent-b', 'agent-c'];
    const workers = await startTogether(
      agents.map((agent) => ({
        script: ACQUIRE_MANY,
        // All walk the todos in the same order, so they collide on every one.
        args: [agent, 'todo_parser', ...ids],
        env: { HOME: p.dir, LOOPX_NOW: NOW, LOOPX_REGISTRY: path.join(p.dir, '.loopx', 'registry.json') },
      })),
    );
    const codes = await Promise.all(workers.map((w) => w.exited));
    assert.deepEqual(codes, [0, 0, 0], workers.map((w) => w.stderr()).join('\n'));
    const results = workers.map((w) => JSON.parse(w.stdout()) as { agent: string; won: string[]; refused: string[] });
    for (const id of ['todo_parser', ...ids]) {
      const winners = results.filter((r) => r.won.includes(id)).map((r) => r.agent);
      assert.equal(winners.length, 1, `${id} was won by ${winners.join(', ') || 'nobody'}`);
      assert.equal(readLease(p, id)['owner'], winners[0], `${id}: the file names the one winner`);
      assert.deepEqual([readLease(p, id)['version'], readLease(p, id)['lease_epoch']], [1, 1]);
    }
    for (const r of results) for (const refusal of r.refused) assert.match(refusal, /:todo_lease_conflict$/);
  });
});
