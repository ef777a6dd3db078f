import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { withFileLock } from '../../../src/core/fs/fileLock';
import { isLoopxError } from '../../../src/core/errors';
import { connectedProject, goalOf, tempDir } from '../agents/helpers';
import { makeWorkspace, NOW } from '../quota/helpers';
import { runLoopx } from './run';

/** Every file under `dir` (links not followed) with the sha256 of its content or link text: equal means untouched. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (folder: string): void => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      const rel = path.relative(dir, full);
      if (entry.isSymbolicLink()) out[rel] = `link:${fs.readlinkSync(full)}`;
      else if (entry.isDirectory()) {
        out[`${rel}/`] = 'dir';
        walk(full);
      } else out[rel] = createHash('sha256').update(fs.readFileSync(full)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

function errorCode(run: { stdout: string }): string | undefined {
  return (JSON.parse(run.stdout) as { error_code?: string }).error_code;
}

describe('writers never follow a symlink out of their root (defects 6 and 7)', () => {
  it('configure-goal --execute on a registry symlinked inside the project writes the target and keeps the link', async () => {
    const { project, registry } = connectedProject();
    const shared = path.join(project, 'shared', 'registry.json');
    fs.mkdirSync(path.dirname(shared));
    fs.renameSync(registry, shared);
    fs.symlinkSync('../shared/registry.json', registry);
    const run = await runLoopx([
      '--registry',
      registry,
      'configure-goal',
      '--goal-id',
      'g',
      '--quota-compute',
      '0.5',
      '--execute',
    ]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.ok(fs.lstatSync(registry).isSymbolicLink(), 'the registry link was replaced by a copy');
    assert.equal((goalOf(shared)['quota'] as { compute: number }).compute, 0.5);
  });

  it('configure-goal --execute refuses a registry symlinked out of the project and writes nothing', async () => {
    const { registry } = connectedProject();
    const outside = tempDir();
    const real = path.join(outside, 'registry.json');
    fs.renameSync(registry, real);
    fs.symlinkSync(real, registry);
    const before = snapshot(outside);
    const run = await runLoopx([
      '--registry',
      registry,
      '--format',
      'json',
      'configure-goal',
      '--goal-id',
      'g',
      '--quota-compute',
      '0.5',
      '--execute',
    ]);
    assert.equal(run.code, 1, run.stdout);
    assert.equal(errorCode(run), 'path_outside_root');
    assert.match(run.stdout, new RegExp(`${path.basename(registry)}.*leads through a symlink to`));
    assert.deepEqual(snapshot(outside), before);
  });

  it('todo add refuses a state file symlinked out of its folder, and the target keeps its text', async () => {
    const { project, registry } = connectedProject();
    const state = path.join(project, '.codex', 'goals', 'g', 'ACTIVE_GOAL_STATE.md');
    const outside = tempDir();
    fs.renameSync(state, path.join(outside, 'state.md'));
    fs.symlinkSync(path.join(outside, 'state.md'), state);
    const before = snapshot(outside);
    const run = await runLoopx(['--registry', registry, 'todo', 'add', '--goal-id', 'g', '--text', 'Do it.']);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /refusing to write .*ACTIVE_GOAL_STATE\.md/);
    assert.deepEqual(snapshot(outside), before);
  });

  it('quota spend-slot refuses a goal runtime folder symlinked out of the runtime root (reservations and run index)', async () => {
    const ws = makeWorkspace();
    const outside = tempDir();
    fs.mkdirSync(path.join(ws.runtimeRoot, 'goals'), { recursive: true });
    fs.symlinkSync(outside, path.join(ws.runtimeRoot, 'goals', ws.goalId));
    const run = await runLoopx(
      [
        '--registry',
        ws.registryPath,
        '--format',
        'json',
        'quota',
        'spend-slot',
        '--goal-id',
        'g',
        '--agent-id',
        'agent-a',
        '--todo-id',
        'todo_parser',
        '--turn-instance-id',
        't1',
        '--execute',
      ],
      { cwd: ws.dir, env: { HOME: ws.dir }, now: NOW },
    );
    assert.notEqual(run.code, 0, run.stdout);
    assert.match(run.stdout, /path_outside_root/);
    assert.deepEqual(fs.readdirSync(outside), []);
  });

  it('the run-index append refuses a runs folder symlinked out of the runtime root', async () => {
    const ws = makeWorkspace();
    const outside = tempDir();
    fs.mkdirSync(path.join(ws.runtimeRoot, 'goals', ws.goalId), { recursive: true });
    fs.symlinkSync(outside, path.join(ws.runtimeRoot, 'goals', ws.goalId, 'runs'));
    const run = await runLoopx(
      [
        '--registry',
        ws.registryPath,
        '--format',
        'json',
        'quota',
        'spend-slot',
        '--goal-id',
        'g',
        '--agent-id',
        'agent-a',
        '--todo-id',
        'todo_parser',
        '--turn-instance-id',
        't1',
        '--execute',
      ],
      { cwd: ws.dir, env: { HOME: ws.dir }, now: NOW },
    );
    assert.notEqual(run.code, 0, run.stdout);
    assert.match(run.stdout, /path_outside_root/);
    assert.deepEqual(fs.readdirSync(outside), []);
  });

  it('the run-index append refuses an index.jsonl symlinked out of the runtime root', async () => {
    const ws = makeWorkspace();
    const outside = tempDir();
    const runs = path.join(ws.runtimeRoot, 'goals', ws.goalId, 'runs');
    fs.mkdirSync(runs, { recursive: true });
    fs.writeFileSync(path.join(outside, 'index.jsonl'), '');
    fs.symlinkSync(path.join(outside, 'index.jsonl'), path.join(runs, 'index.jsonl'));
    const before = snapshot(outside);
    const run = await runLoopx(
      [
        '--registry',
        ws.registryPath,
        '--format',
        'json',
        'quota',
        'spend-slot',
        '--goal-id',
        'g',
        '--agent-id',
        'agent-a',
        '--todo-id',
        'todo_parser',
        '--turn-instance-id',
        't1',
        '--execute',
      ],
      { cwd: ws.dir, env: { HOME: ws.dir }, now: NOW },
    );
    assert.notEqual(run.code, 0, run.stdout);
    assert.match(run.stdout, /path_outside_root/);
    assert.deepEqual(snapshot(outside), before);
  });

  it('a lock timeout does not append its incident through a symlink out of the target folder', async () => {
    const dir = tempDir();
    const outside = tempDir();
    const target = path.join(dir, 'registry.json');
    fs.writeFileSync(target, '{}\n');
    // A live holder (this very process, as seen from the file) that never lets go.
    const holder = {
      acquired_at: '2026-01-15T10:00:00Z',
      agent_id: 'holder',
      hostname: os.hostname(),
      lock_id: 'x',
      nonce: randomBytes(8).toString('hex'),
      operation: 'hold',
      pid: process.pid,
      policy: 'mutation',
      schema_version: 'file_lock_holder_v0',
    };
    fs.writeFileSync(`${target}.loopx-lock`, `${JSON.stringify(holder)}\n`);
    fs.writeFileSync(path.join(outside, 'victim.jsonl'), 'keep\n');
    fs.symlinkSync(path.join(outside, 'victim.jsonl'), `${target}.lock.incidents.jsonl`);
    const before = snapshot(outside);
    await assert.rejects(
      withFileLock(target, { timeoutMs: 50, pollMs: 10 }, () => 'never'),
      (error: unknown) => isLoopxError(error, 'lock_acquire_timeout'),
    );
    assert.deepEqual(snapshot(outside), before);
    fs.rmSync(`${target}.loopx-lock`);
  });

  it('slash-commands --install/--uninstall refuse a commands folder symlinked out of the project and change nothing', async () => {
    const project = tempDir();
    const outside = tempDir();
    const marker = '<!-- loopx-managed-slash-command:v1 -->\nnot in the project\n';
    fs.writeFileSync(path.join(outside, 'loopx.md'), marker);
    fs.writeFileSync(path.join(outside, 'loopx-status.md'), marker);
    fs.mkdirSync(path.join(project, '.claude'));
    fs.symlinkSync(outside, path.join(project, '.claude', 'commands'));
    const before = snapshot(outside);
    for (const action of ['--uninstall', '--install']) {
      const run = await runLoopx(
        ['--format', 'json', 'slash-commands', action, '--surface', 'claude-code', '--project', project],
        { cwd: project },
      );
      assert.equal(run.code, 1, `${action}: ${run.stdout}${run.stderr}`);
      assert.equal(errorCode(run), 'path_outside_root', action);
      assert.deepEqual(snapshot(outside), before, action);
    }
  });
});
