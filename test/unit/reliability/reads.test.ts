import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { normalizeAgentIdList, registeredAgentsForGoal } from '../../../src/core/registry/agentIds';
import { fixedClock } from '../../../src/core/clock';
import { isLoopxError } from '../../../src/core/errors';
import { readFileSafe, readFileSafeSync } from '../../../src/core/fs/safeRead';
import { computeLedger } from '../../../src/core/quota/ledger';
import { readRegistry, readRegistrySync } from '../../../src/core/registry/read';
import { readRunIndex } from '../../../src/core/runtime/runIndex';
import { startStatusServer } from '../../../src/core/server/statusServer';
import { readStateText } from '../../../src/core/state/stateFile';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import { runLoopx, type CliRun } from '../cli/run';
import { request, SERVER_TOKEN, auth } from '../server/helpers';
import { tempDir } from '../../support/tempDir';

const NOW = '2026-11-28T09:30:00Z';
const INDEX = path.join('.loopx', 'runtime', 'goals', 'tidy-notes', 'runs', 'index.jsonl');

function fifo(file: string): string {
  execFileSync('mkfifo', [file]);
  return file;
}

function demo(): string {
  return materializeDemoWorkspace(path.join(tempDir(), 'ws'));
}

/** A spend row inside the window of NOW whose record path names `jsonPath`. */
function spendRow(jsonPath: string, extra: Record<string, unknown> = {}): string {
  return `${JSON.stringify({
    generated_at: '2026-11-28T09:00:00+00:00',
    goal_id: 'tidy-notes',
    classification: 'quota_slot_spent',
    json_path: jsonPath,
    markdown_path: 'spend.md',
    agent_id: 'demo',
    ...extra,
  })}\n`;
}

function errorOf(run: CliRun): Record<string, unknown> {
  return { ...run.error() };
}

describe('reads of project files: FIFOs, devices, directories, deep JSON (issue 14)', function () {
  this.timeout(30_000);

  describe('readFileSafe', () => {
    it('reads a regular file', async () => {
      const file = path.join(tempDir(), 'a.json');
      fs.writeFileSync(file, '{"a":1}');
      assert.equal(readFileSafeSync(file), '{"a":1}');
      assert.equal(await readFileSafe(file), '{"a":1}');
    });

    it('refuses a FIFO without blocking, naming the file and the fix', async () => {
      const file = fifo(path.join(tempDir(), 'fifo.json'));
      for (const read of [() => readFileSafeSync(file), () => readFileSafe(file)]) {
        await assert.rejects(
          async () => read(),
          (error: unknown) =>
            isLoopxError(error, 'file_not_regular') &&
            error.message.includes(file) &&
            /FIFO/.test(error.message) &&
            /Replace it/.test(error.message),
        );
      }
    });

    it('refuses a character device and a directory', async () => {
      assert.throws(
        () => readFileSafeSync('/dev/zero'),
        (e: unknown) => isLoopxError(e, 'file_not_regular'),
      );
      await assert.rejects(readFileSafe('/dev/zero'), (e: unknown) => isLoopxError(e, 'file_not_regular'));
      const dir = tempDir();
      assert.throws(
        () => readFileSafeSync(dir),
        (e: unknown) => isLoopxError(e, 'file_not_regular') && /directory/.test(e.message),
      );
    });

    it('refuses a file over the size cap, and a symlink when asked not to follow', async () => {
      const dir = tempDir();
      const file = path.join(dir, 'big.json');
      fs.writeFileSync(file, 'x'.repeat(100));
      assert.throws(
        () => readFileSafeSync(file, { maxBytes: 99 }),
        (e: unknown) => isLoopxError(e, 'file_too_large'),
      );
      await assert.rejects(readFileSafe(file, { maxBytes: 99 }), (e: unknown) => isLoopxError(e, 'file_too_large'));
      assert.equal(readFileSafeSync(file, { maxBytes: 100 }).length, 100);
      const link = path.join(dir, 'link.json');
      fs.symlinkSync(file, link);
      assert.equal(readFileSafeSync(link).length, 100);
      assert.throws(
        () => readFileSafeSync(link, { noFollow: true }),
        (e: unknown) => isLoopxError(e, 'file_not_regular'),
      );
    });

    it('lets a missing file through as ENOENT (callers read it as "absent")', () => {
      assert.throws(
        () => readFileSafeSync(path.join(tempDir(), 'none.json')),
        (e: unknown) => (e as NodeJS.ErrnoException).code === 'ENOENT',
      );
    });
  });

  describe('core readers', () => {
    it('a registry that is a FIFO, a device link or a directory is a clear error', async () => {
      const dir = tempDir();
      const asFifo = fifo(path.join(dir, 'registry.json'));
      await assert.rejects(readRegistry(asFifo), (e: unknown) => isLoopxError(e, 'file_not_regular'));
      assert.throws(
        () => readRegistrySync(asFifo),
        (e: unknown) => isLoopxError(e, 'file_not_regular'),
      );
      const asDir = path.join(dir, 'dir-registry.json');
      fs.mkdirSync(asDir);
      await assert.rejects(readRegistry(asDir), (e: unknown) => isLoopxError(e, 'file_not_regular'));
    });

    it('a state file that is a FIFO is state_file_unreadable, not a hang', async () => {
      const file = fifo(path.join(tempDir(), 'ACTIVE_GOAL_STATE.md'));
      await assert.rejects(
        readStateText(file),
        (e: unknown) => isLoopxError(e, 'state_file_unreadable') && e.details['reason'] === 'file_not_regular',
      );
    });

    it('a spend row whose record is a FIFO still counts, with the defaults', () => {
      const dir = tempDir();
      fifo(path.join(dir, 'fifo.json'));
      const row = JSON.parse(spendRow('fifo.json')) as Record<string, unknown>;
      const ledger = computeLedger({
        rows: [row as never],
        projectRoot: dir,
        windowHours: 24,
        clock: fixedClock(NOW),
      });
      assert.equal(ledger.spent_slots, 1);
    });

    it('a 100,000-deep run-index row is skipped and reported; the other rows read', async () => {
      const dir = tempDir();
      const index = path.join(dir, 'index.jsonl');
      const deep = `{"deep":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
      fs.writeFileSync(index, spendRow('a.json') + deep + '\n' + spendRow('b.json'));
      const read = await readRunIndex(index, { projectRoot: dir });
      assert.equal(read.rows.length, 2);
      assert.deepEqual(read.skipped, [{ line: 2, reason: 'nested more than 512 levels deep' }]);
    });

    it('registered agents: 50,000 ids keep their order, duplicates dropped, sources united', () => {
      const ids = Array.from({ length: 50_000 }, (_, i) => `agent-${i}`);
      assert.deepEqual(normalizeAgentIdList([...ids, ...ids]), ids);
      const union = registeredAgentsForGoal({
        coordination: { registered_agents: ids },
        registered_agents: ['Agent-1', 'extra'],
        spawn_policy: { registered_agents: ['extra', 'last'] },
      });
      assert.deepEqual(union, [...ids, 'extra', 'last']);
    });
  });

  describe('CLI: clear errors, exit 1, valid JSON', () => {
    it('should-run and status finish when a spend row names a FIFO', async () => {
      const ws = demo();
      fifo(path.join(ws, 'fifo.json'));
      fs.appendFileSync(path.join(ws, INDEX), spendRow('fifo.json'));
      const shouldRun = await runLoopx(
        ['--format', 'json', 'quota', 'should-run', '--goal-id', 'tidy-notes', '--agent-id', 'demo'],
        { cwd: ws, now: NOW },
      );
      assert.equal(shouldRun.json()['ok'], true);
      const status = await runLoopx(['--format', 'json', 'status'], { cwd: ws, now: NOW });
      assert.equal(status.code, 0);
    });

    it('a goal whose run index is a FIFO reports it; status of the registry still answers', async () => {
      const ws = demo();
      fs.rmSync(path.join(ws, INDEX));
      fifo(path.join(ws, INDEX));
      const status = await runLoopx(['--format', 'json', 'status'], { cwd: ws, now: NOW });
      assert.equal(status.code, 0);
      assert.match(status.stdout, /skipped_index_lines": 1/);
    });

    it('a registry that is a directory: file_not_regular naming it', async () => {
      const ws = demo();
      const registry = path.join(ws, '.loopx', 'registry.json');
      fs.rmSync(registry);
      fs.mkdirSync(registry);
      const run = await runLoopx(['--format', 'json', 'status'], { cwd: ws, now: NOW });
      assert.equal(run.code, 1);
      assert.equal(errorOf(run)['code'], 'file_not_regular');
      assert.match(String(errorOf(run)['message']), new RegExp(`${registry} is a directory`));
    });

    it('a 100,000-deep registry: json_too_deep naming the file, nothing written', async () => {
      const ws = demo();
      const registry = path.join(ws, '.loopx', 'registry.json');
      const text = fs
        .readFileSync(registry, 'utf8')
        .replace('"id": "tidy-notes"', `"deep": ${'['.repeat(100_000)}${']'.repeat(100_000)}, "id": "tidy-notes"`);
      fs.writeFileSync(registry, text);
      for (const argv of [['status'], ['sync-global']]) {
        const run = await runLoopx(['--format', 'json', ...argv], { cwd: ws, now: NOW });
        assert.equal(run.code, 1, argv.join(' '));
        assert.equal(errorOf(run)['code'], 'json_too_deep');
        assert.match(String(errorOf(run)['message']), /registry\.json nests .* Remove the deeply nested value/);
      }
      assert.equal(fs.readFileSync(registry, 'utf8'), text);
    });

    it('window_hours 1e308: quota_window_out_of_range naming the registry and field', async () => {
      const ws = demo();
      const registry = path.join(ws, '.loopx', 'registry.json');
      fs.writeFileSync(
        registry,
        fs.readFileSync(registry, 'utf8').replace('"window_hours": 24', '"window_hours": 1e308'),
      );
      for (const argv of [
        ['quota', 'status', '--goal-id', 'tidy-notes'],
        ['quota', 'should-run', '--goal-id', 'tidy-notes', '--agent-id', 'demo'],
        // heartbeat-prompt read the window itself and failed with the untyped "Invalid time value".
        ['heartbeat-prompt', '--goal-id', 'tidy-notes', '--agent-id', 'demo'],
      ]) {
        const run = await runLoopx(['--format', 'json', ...argv], { cwd: ws, now: NOW });
        assert.equal(run.code, 1, argv.join(' '));
        const error = errorOf(run);
        assert.equal(error['code'], 'quota_window_out_of_range');
        assert.match(String(error['message']), /registry\.json: goal 'tidy-notes' has quota\.window_hours/);
        assert.equal((error['details'] as Record<string, unknown>)['field'], 'quota.window_hours');
      }
    });
  });

  it('the status server keeps answering /healthz and /status.json with a FIFO row and a FIFO index', async () => {
    const ws = demo();
    fifo(path.join(ws, 'fifo.json'));
    fs.appendFileSync(path.join(ws, INDEX), spendRow('fifo.json'));
    const server = await startStatusServer({
      registryPath: path.join(ws, '.loopx', 'registry.json'),
      homeDir: tempDir(),
      clock: fixedClock(NOW),
      token: SERVER_TOKEN,
      port: 0,
    });
    try {
      assert.equal((await request(server.port, '/status.json', { headers: auth() })).status, 200);
      assert.equal((await request(server.port, '/healthz')).status, 200);
      fs.rmSync(path.join(ws, INDEX));
      fifo(path.join(ws, INDEX));
      assert.equal((await request(server.port, '/status.json', { headers: auth() })).status, 200);
      assert.equal((await request(server.port, '/healthz')).status, 200);
    } finally {
      await server.close();
    }
  });
});
