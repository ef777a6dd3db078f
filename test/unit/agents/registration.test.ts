import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { registerAgent } from '../../../src/core/agents/registration';
import { fixedClock } from '../../../src/core/clock';
import { isLoopxError, LoopxError } from '../../../src/core/errors';
import { registerAgent as registerAgentOperation } from '../../../src/core/ops/registerAgent';
import { runOperation } from '../../../src/core/ops/run';
import { startTogether } from '../../support/barrier';
import { connectedProject, goalOf, goalRefOf, readJson } from './helpers';

const repoRoot = path.resolve(__dirname, '..', '..', '..');
const clock = fixedClock('2026-01-15T10:00:00Z');
const CLI_BEHIND_BARRIER = path.join(repoRoot, 'test', 'unit', 'fs', 'workers', 'cliBehindBarrier.ts');

function request(agentIds: string[], extra: { requireNew?: boolean; execute?: boolean } = {}) {
  return {
    agentIds,
    requireNew: extra.requireNew ?? false,
    execute: extra.execute ?? false,
    clock,
    env: {},
  };
}

/** Runs the real CLI in its own process and resolves with its exit code and JSON output. */
function loopxProcess(args: string[]): Promise<{ code: number | null; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src', 'cli', 'main.ts'), ...args], {
      cwd: repoRoot,
      env: { ...process.env, LOOPX_NOW: '2026-01-15T10:00:00Z' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        resolve({ code, json: JSON.parse(stdout) as Record<string, unknown> });
      } catch {
        reject(new Error(`unparsable output (exit ${String(code)}): ${stdout}\n${stderr}`));
      }
    });
  });
}

describe('register-agent', () => {
  it('previews by default and writes nothing', async () => {
    const { registry } = connectedProject({ coordination: { registered_agents: ['codex-existing'] } });
    const before = fs.readFileSync(registry, 'utf8');
    const result = await registerAgent(await goalRefOf(registry), request(['Codex Fresh']));
    assert.equal(result.ok, true);
    assert.equal(result.dry_run, true);
    assert.equal(result.changed, true);
    assert.equal(result.written, false);
    assert.deepEqual(result.added, ['codex-fresh']);
    assert.deepEqual(result.registered_agents, ['codex-existing', 'codex-fresh']);
    assert.equal(fs.readFileSync(registry, 'utf8'), before);
  });

  it('appends to coordination.registered_agents under the lock, keeps unknown fields and verifies the readback', async () => {
    const { registry } = connectedProject({
      registered_agents: ['legacy-top'],
      coordination: { registered_agents: ['codex-existing'], note: 'keep' },
    });
    const result = await registerAgent(
      await goalRefOf(registry),
      request(['codex-fresh', 'legacy-top'], { execute: true }),
    );
    assert.equal(result.ok, true);
    assert.deepEqual([result.changed, result.written, result.verified], [true, true, true]);
    assert.deepEqual(result.added, ['codex-fresh']);
    assert.deepEqual(result.already_registered, ['legacy-top']);
    assert.deepEqual(result.registration_readback, {
      verified: true,
      registered_agents: ['codex-existing', 'codex-fresh', 'legacy-top'],
      global_registered_agents: null,
    });
    const goal = goalOf(registry);
    assert.deepEqual(goal['coordination'], {
      registered_agents: ['codex-existing', 'codex-fresh'],
      note: 'keep',
      agent_model: 'peer_v1',
    });
    assert.deepEqual(goal['registered_agents'], ['legacy-top'], 'the legacy list is read, never written');
    assert.deepEqual(goal['x_unknown'], [1, 2]);
    assert.deepEqual(readJson(registry)['custom_top_level'], { keep: true });
    assert.equal(readJson(registry)['updated_at'], '2026-01-15T10:00:00Z');
  });

  it('is a verified no-op when every id is already registered', async () => {
    const { registry } = connectedProject({ coordination: { registered_agents: ['a'] } });
    const before = fs.readFileSync(registry, 'utf8');
    const result = await registerAgent(await goalRefOf(registry), request(['A'], { execute: true }));
    assert.deepEqual([result.ok, result.changed, result.written, result.verified], [true, false, false, true]);
    assert.equal(fs.readFileSync(registry, 'utf8'), before);
  });

  it('refuses an already registered id with --require-new', async () => {
    const { registry } = connectedProject({ coordination: { registered_agents: ['codex-existing'] } });
    const result = await registerAgent(
      await goalRefOf(registry),
      request(['codex-existing'], { requireNew: true, execute: true }),
    );
    assert.equal(result.ok, false);
    assert.equal(result.error_kind, 'agent_identity_already_registered');
    assert.deepEqual([result.changed, result.written], [false, false]);
  });

  it('case 7 (fixed): reports an invalid id with the value and the rule instead of dropping it', async () => {
    const { registry } = connectedProject();
    const before = fs.readFileSync(registry, 'utf8');
    await assert.rejects(
      registerAgent(await goalRefOf(registry), request(['9bad'], { execute: true })),
      (error: unknown) => {
        assert.ok(error instanceof LoopxError);
        assert.equal(error.code, 'agent_id_invalid');
        assert.match(error.message, /--agent-id '9bad' is not a valid agent id: an agent id starts with a letter a-z/);
        assert.equal(error.details['value'], '9bad');
        return true;
      },
    );
    assert.equal(fs.readFileSync(registry, 'utf8'), before);
  });

  it('the operation resolves the goal after checking the route and the ids, in the order it always did', async () => {
    const { registry, project } = connectedProject();
    const env = { cwd: project, env: {}, clock, homeDir: project, registryPath: registry };
    const run = (args: { goalId: string; agentId: string[]; projectRegistry?: boolean }) =>
      runOperation(registerAgentOperation, args, env);
    const code = (expected: string) => (error: unknown) => isLoopxError(error) && error.code === expected;
    // Project route: an invalid id is refused before the goal is looked up.
    await assert.rejects(run({ goalId: 'zz', agentId: ['9bad'], projectRegistry: true }), code('agent_id_invalid'));
    await assert.rejects(run({ goalId: 'zz', agentId: ['ok-id'], projectRegistry: true }), code('goal_not_found'));
    // The original's route: the global registry is checked first (it does not exist under this home).
    await assert.rejects(run({ goalId: 'zz', agentId: ['9bad'] }), code('global_registry_not_found'));
  });

  it('names a missing registry or goal (the goal resolved for the write)', async () => {
    const { registry, project } = connectedProject();
    await assert.rejects(goalRefOf(path.join(project, 'nope.json')), /nope\.json does not exist/);
    await assert.rejects(goalRefOf(registry, 'zz'), /goal 'zz' is not in .*; goals: g/);
  });

  it('case 7: two processes registering the same new id at once (behind a start barrier, 8 rounds): exactly one wins', async function () {
    this.timeout(180_000);
    for (let round = 0; round < 8; round++) {
      const { registry } = connectedProject({ coordination: { registered_agents: ['codex-existing'] } });
      const args = [
        '--registry',
        registry,
        '--format',
        'json',
        'register-agent',
        '--project-registry',
        '--goal-id',
        'g',
        '--agent-id',
        'codex-fresh',
        '--require-new',
        '--execute',
      ];
      const env = { LOOPX_NOW: '2026-01-15T10:00:00Z' };
      const workers = await startTogether([
        { script: CLI_BEHIND_BARRIER, args, env },
        { script: CLI_BEHIND_BARRIER, args, env },
      ]);
      const codes = await Promise.all(workers.map((w) => w.exited));
      const results = workers.map((w, i) => {
        try {
          return { code: codes[i], json: JSON.parse(w.stdout()) as Record<string, unknown> };
        } catch {
          throw new Error(`round ${round}: unparsable output (exit ${String(codes[i])}): ${w.stdout()}\n${w.stderr()}`);
        }
      });
      const what = `round ${round}: ${JSON.stringify(results)}`;
      const winners = results.filter(
        (r) => r.json['changed'] === true && r.json['written'] === true && r.json['verified'] === true,
      );
      const losers = results.filter((r) => r.json['error_kind'] === 'agent_identity_already_registered');
      assert.equal(winners.length, 1, what);
      assert.equal(losers.length, 1, what);
      assert.equal(winners[0]?.code, 0, what);
      assert.equal(losers[0]?.code, 1, what);
      assert.deepEqual([losers[0]?.json['changed'], losers[0]?.json['written']], [false, false], what);
      assert.deepEqual(
        (goalOf(registry)['coordination'] as Record<string, unknown>)['registered_agents'],
        ['codex-existing', 'codex-fresh'],
        what,
      );
    }
  });

  it('loses no registration when four processes register different ids at once', async () => {
    const { registry } = connectedProject({ coordination: { registered_agents: ['codex-existing'] } });
    const ids = ['lane-a', 'lane-b', 'lane-c', 'lane-d'];
    const results = await Promise.all(
      ids.map((id) =>
        loopxProcess([
          '--registry',
          registry,
          '--format',
          'json',
          'register-agent',
          '--project-registry',
          '--goal-id',
          'g',
          '--agent-id',
          id,
          '--require-new',
          '--execute',
        ]),
      ),
    );
    assert.ok(
      results.every((r) => r.code === 0 && r.json['verified'] === true),
      JSON.stringify(results),
    );
    const stored = (goalOf(registry)['coordination'] as Record<string, unknown>)['registered_agents'] as string[];
    assert.deepEqual([...stored].sort(), ['codex-existing', ...ids].sort());
  });
});
