import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isLoopxError } from '../../../src/core/errors';
import { listTodos } from '../../../src/core/state/todos';
import { applyStateEdit, readStateFile } from '../../../src/core/state/stateFile';
import { GoalCache } from '../../../src/core/goal/cache';
import { addTodo, claimTodo } from '../../../src/core/state/todos';

const REPO = path.resolve(__dirname, '../../..');
const context = { now: '2026-07-01T00:00:00Z', goalId: 'g', roster: ['codex-main', 'codex-side', 'codex-prop'] };
const STATE =
  '---\nstatus: active\n---\n## Agent Todo\n- [ ] First.\n  <!-- loopx:todo todo_id=todo_first status=open -->\n## Next Action\n- First.\n';

function tempState(text: string | Buffer = STATE): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-state-'));
  const file = path.join(dir, 'ACTIVE_GOAL_STATE.md');
  fs.writeFileSync(file, text);
  return file;
}

function runChild(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(REPO, 'test/unit/state/concurrentAdder.ts'), ...args],
      { cwd: REPO },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('state file read and write', () => {
  it('reads a file and writes an edit atomically, leaving no temp or lock files', async () => {
    const file = tempState();
    const result = await applyStateEdit(
      file,
      (text) => claimTodo(text, { todoId: 'todo_first', agentId: 'codex-main' }, context),
      { operation: 'todo claim' },
    );
    assert.equal(result.written, true);
    const snapshot = await readStateFile(file);
    assert.equal(snapshot.text, result.text);
    assert.equal(listTodos(snapshot.document)[0]?.claimed_by, 'codex-main');
    assert.deepEqual(fs.readdirSync(path.dirname(file)), ['ACTIVE_GOAL_STATE.md']);
    const again = await applyStateEdit(
      file,
      (text) => claimTodo(text, { todoId: 'todo_first', agentId: 'codex-main' }, context),
      { operation: 'todo claim' },
    );
    assert.equal(again.written, false);
  });

  it('an edit that writes nothing still clears a lock left by a killed writer, and keeps a live one', async () => {
    const file = tempState();
    const lock = `${file}.loopx-lock`;
    const holder = (pid: number): string =>
      JSON.stringify({
        schema_version: 'file_lock_holder_v0',
        lock_id: 'state',
        policy: 'mutation',
        pid,
        agent_id: 'demo',
        operation: 'todo complete',
        acquired_at: '2026-07-01T00:00:00Z',
        hostname: os.hostname(),
      });
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
    fs.writeFileSync(lock, holder(deadPid));
    const noop = await applyStateEdit(file, (text) => ({ changed: false, text }), { operation: 'todo complete' });
    assert.equal(noop.written, false);
    assert.equal(fs.existsSync(lock), false, "the dead writer's lock is gone");

    fs.writeFileSync(lock, holder(process.ppid));
    await applyStateEdit(file, (text) => ({ changed: false, text }), { operation: 'todo complete' });
    assert.equal(fs.existsSync(lock), true, 'a live holder keeps its lock');
  });

  it('refuses to write when the file changed since it was read, keeping the other edit', async () => {
    const file = tempState();
    const concurrent = `${STATE}<!-- a person edited this meanwhile -->\n`;
    await assert.rejects(
      applyStateEdit(
        file,
        (text) => {
          fs.writeFileSync(file, concurrent);
          return addTodo(text, { role: 'agent', text: 'Lost?' }, context);
        },
        { operation: 'todo add' },
      ),
      (error: unknown) =>
        isLoopxError(error, 'state_changed_concurrently') &&
        /changed while todo add was being applied; nothing was written\. Retry/.test(error.message),
    );
    assert.equal(fs.readFileSync(file, 'utf8'), concurrent);
    await assert.rejects(
      applyStateEdit(file, (text) => addTodo(text, { role: 'agent', text: 'x' }, context), {
        operation: 'todo add',
        expectedText: STATE,
      }),
      (error: unknown) => isLoopxError(error, 'state_changed_concurrently'),
    );
  });

  it('refuses missing and non-UTF-8 files without touching them', async () => {
    await assert.rejects(
      readStateFile(path.join(os.tmpdir(), 'loopx-no-such-dir', 'ACTIVE_GOAL_STATE.md')),
      (error: unknown) => isLoopxError(error, 'state_file_missing'),
    );
    const bytes = Buffer.concat([Buffer.from('## Agent Todo\n- [ ] caf'), Buffer.from([0xe9]), Buffer.from('\n')]);
    const file = tempState(bytes);
    await assert.rejects(
      applyStateEdit(file, (text) => addTodo(text, { role: 'agent', text: 'x' }, context), { operation: 'todo add' }),
      (error: unknown) => isLoopxError(error, 'state_file_not_utf8'),
    );
    assert.deepEqual(fs.readFileSync(file), bytes);
  });

  it('two processes adding todos at once lose no edit', async function () {
    this.timeout(60000);
    const file = tempState();
    const [a, b] = await Promise.all([runChild([file, 'alpha', '6']), runChild([file, 'beta', '6'])]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const todos = listTodos((await readStateFile(file)).document).map((t) => t.text);
    assert.equal(todos.length, 13);
    for (const label of ['alpha', 'beta'])
      for (let i = 0; i < 6; i++) assert.ok(todos.includes(`${label} todo ${i}`), `${label} todo ${i} is present`);
    assert.equal(new Set(listTodos((await readStateFile(file)).document).map((t) => t.todo_id)).size, 13);
  });
});

describe("the goal loader's state-file cache: parsed again only when the text changed", () => {
  let dir = '';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-state-shared-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('gives the same frozen snapshot for the same text, and a new one after any change (same size and mtime included)', async () => {
    const file = path.join(dir, 'STATE.md');
    fs.writeFileSync(file, '# Goal\n\n## Agent Todos\n\n- [ ] one\n');
    const cache = new GoalCache();
    const readStateFileShared = (filePath: string) => cache.stateFile(filePath);
    const first = await readStateFileShared(file);
    assert.equal(await readStateFileShared(file), first);
    assert.ok(Object.isFrozen(first.document.todos[0]));
    assert.throws(() => {
      (first.document.todos as unknown as unknown[]).push({});
    }, TypeError);
    const { mtime } = fs.statSync(file);
    fs.writeFileSync(file, '# Goal\n\n## Agent Todos\n\n- [x] one\n'); // same size
    fs.utimesSync(file, mtime, mtime);
    const second = await readStateFileShared(file);
    assert.notEqual(second, first);
    assert.equal(second.document.todos[0]?.marker, 'x');
    assert.deepEqual(second, await readStateFile(file));
  });
});
