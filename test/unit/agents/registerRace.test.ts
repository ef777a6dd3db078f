import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runLoopx } from '../cli/run';
import { startTogether } from '../fs/barrier';
import { REPO_ROOT } from '../fs/processes';
import { goalOf, tempDir, writeRegistry } from './helpers';

/**
 * Issue 34, defect 6: `register-agent` under concurrency exited 1 with `ok: false` and no error
 * although it wrote, and its advice for a missing global registry ("run loopx sync-global") wrote a
 * different file (the project's runtime root) than the one it reads (`~/.codex/loopx`).
 */

const NOW = '2026-01-15T10:00:00Z';

/** A project whose registry keeps its runtime in the project (`.loopx/runtime`), as `bootstrap` writes it. */
function project(): { dir: string; registry: string; home: string; globalPath: string } {
  const dir = tempDir();
  const stateFile = '.codex/goals/g/ACTIVE_GOAL_STATE.md';
  fs.mkdirSync(path.join(dir, path.dirname(stateFile)), { recursive: true });
  fs.writeFileSync(path.join(dir, stateFile), '# g\n');
  const registry = writeRegistry(dir, {
    schema_version: '0.1',
    common_runtime_root: '.loopx/runtime',
    goals: [
      {
        id: 'g',
        domain: 'demo',
        status: 'active',
        repo: dir,
        state_file: stateFile,
        adapter: { kind: 'generic_project_goal_v0' },
        coordination: { registered_agents: ['codex-a'] },
      },
    ],
  });
  const home = tempDir();
  return { dir, registry, home, globalPath: path.join(home, '.codex', 'loopx', 'registry.global.json') };
}

const agentsIn = (file: string): unknown =>
  (goalOf(file)['coordination'] as Record<string, unknown> | undefined)?.['registered_agents'];

describe('register-agent: its advice works, and concurrent registrations all succeed (issue 34 #6)', function () {
  this.timeout(300_000);

  it('without a global registry the advice names the command that creates the file it reads; run as given, the registration then goes through', async () => {
    const p = project();
    const run = (args: string[]) => runLoopx(['--format', 'json', ...args], { cwd: p.dir, env: { HOME: p.home } });
    const refused = await run(['register-agent', '--goal-id', 'g', '--agent-id', 'codex-b', '--execute']);
    assert.equal(refused.code, 1);
    const error = refused.json();
    assert.equal(error['error_code'], 'global_registry_not_found');
    const fix = (error['error_details'] as Record<string, unknown>)['fix_argv'] as string[];
    assert.ok(Array.isArray(fix), JSON.stringify(error));
    // The message says the same command, as a person would type it.
    assert.ok(String(error['error']).includes(`loopx ${fix.join(' ')}`), String(error['error']));

    // The bare advice of before ("run loopx sync-global") writes the project's global registry, not this one.
    const bare = await run(['sync-global']);
    assert.equal(bare.code, 0, bare.stderr);
    assert.equal(fs.existsSync(p.globalPath), false, 'plain sync-global writes another file');

    const fixed = await run(fix);
    assert.equal(fixed.code, 0, fixed.stderr);
    assert.equal(
      fs.existsSync(p.globalPath),
      true,
      'the advised command creates the global registry register-agent reads',
    );
    const again = await run(['register-agent', '--goal-id', 'g', '--agent-id', 'codex-b', '--execute']);
    assert.equal(again.code, 0, again.stdout);
    assert.deepEqual(agentsIn(p.registry), ['codex-a', 'codex-b']);
  });

  it('6 processes registering 6 ids at once behind a start barrier: every one exits 0 with ok, all ids in both registries', async () => {
    const p = project();
    const runtimeRoot = path.dirname(p.globalPath);
    const sync = await runLoopx(['--runtime-root', runtimeRoot, '--format', 'json', 'sync-global'], {
      cwd: p.dir,
      env: { HOME: p.home },
    });
    assert.equal(sync.code, 0, sync.stderr);
    const ids = ['agent-1', 'agent-2', 'agent-3', 'agent-4', 'agent-5', 'agent-6'];
    const workers = await startTogether(
      ids.map((id) => ({
        script: path.join(REPO_ROOT, 'test', 'unit', 'evidence', 'workers', 'cliWorker.ts'),
        args: [
          p.dir,
          NOW,
          ...['--runtime-root', runtimeRoot, '--format', 'json', 'register-agent', '--goal-id', 'g'],
          ...['--agent-id', id, '--execute'],
        ],
      })),
    );
    for (const worker of workers) {
      const code = await worker.exited;
      const answer = JSON.parse(worker.stdout()) as Record<string, unknown>;
      // A failure always says why: code and message.
      if (answer['ok'] !== true) {
        assert.ok(typeof answer['error_code'] === 'string' && answer['error_code'] !== '', worker.stdout());
        assert.ok(typeof answer['error'] === 'string' && answer['error'] !== '', worker.stdout());
      }
      assert.equal(code, 0, worker.stdout());
      assert.equal(answer['ok'], true, worker.stdout());
      assert.equal(answer['written'], true);
    }
    const expected = ['codex-a', ...ids];
    assert.deepEqual([...(agentsIn(p.registry) as string[])].sort(), expected.sort());
    assert.deepEqual([...(agentsIn(p.globalPath) as string[])].sort(), expected.sort());
  });
});
