import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { runLoopx } from '../cli/run';
import { connectedProject, goalOf } from './helpers';

/**
 * The original's JSON contracts of configure-goal and register-agent (issue 15): the setting groups
 * in `changed_fields`, the roster set (not merged) by `--registered-agent`, and on a refusal exit 1
 * with `dry_run`, `changed: false` and `written: false` beside the error text.
 */
describe('configure-goal and register-agent contracts', () => {
  it('configure-goal: a refused value exits 1 with the original failure fields and writes nothing', async () => {
    const { registry } = connectedProject();
    const before = fs.readFileSync(registry, 'utf8');
    for (const [execute, dryRun] of [
      [[], true],
      [['--execute'], false],
    ] as const) {
      const run = await runLoopx([
        '--registry',
        registry,
        '--format',
        'json',
        'configure-goal',
        '--goal-id',
        'g',
        '--quota-compute',
        '-0.1',
        ...execute,
      ]);
      assert.equal(run.code, 1, run.stdout);
      const json = run.json();
      assert.equal(json['ok'], false);
      assert.match(json['error'] as string, /^quota_compute must be greater than or equal to 0/);
      assert.equal(json['error_code'], 'invalid_goal_config');
      assert.deepEqual([json['dry_run'], json['changed'], json['written']], [dryRun, false, false]);
    }
    const ghost = await runLoopx([
      '--registry',
      registry,
      '--format',
      'json',
      'configure-goal',
      '--goal-id',
      'ghost',
      '--quota-compute',
      '0.5',
    ]);
    assert.equal(ghost.code, 1);
    assert.match(ghost.json()['error'] as string, /^goal_id not found in registry: ghost; /);
    assert.equal(ghost.json()['dry_run'], true);
    assert.equal(fs.readFileSync(registry, 'utf8'), before);
  });

  it('configure-goal: --registered-agent sets the roster; --clear-registered-agents removes it with the agent model', async () => {
    const { registry } = connectedProject({ coordination: { registered_agents: ['codex-a'], agent_model: 'peer_v1' } });
    const set = await runLoopx([
      '--registry',
      registry,
      '--format',
      'json',
      'configure-goal',
      '--goal-id',
      'g',
      '--registered-agent',
      'codex-c',
      '--execute',
    ]);
    assert.equal(set.code, 0, set.stdout);
    assert.deepEqual(set.json()['changed_fields'], ['registered_agents']);
    assert.deepEqual((goalOf(registry)['coordination'] as Record<string, unknown>)['registered_agents'], ['codex-c']);

    const both = await runLoopx([
      '--registry',
      registry,
      '--format',
      'json',
      'configure-goal',
      '--goal-id',
      'g',
      '--registered-agent',
      'x',
      '--clear-registered-agents',
    ]);
    assert.equal(both.code, 1);
    assert.match(
      both.json()['error'] as string,
      /--clear-registered-agents cannot be combined with --registered-agent/,
    );

    const clear = await runLoopx([
      '--registry',
      registry,
      '--format',
      'json',
      'configure-goal',
      '--goal-id',
      'g',
      '--clear-registered-agents',
      '--execute',
    ]);
    assert.equal(clear.code, 0, clear.stdout);
    assert.deepEqual(clear.json()['changed_fields'], ['registered_agents', 'configured_agent_model']);
    assert.deepEqual([clear.json()['dry_run'], clear.json()['written']], [false, true]);
    assert.deepEqual(goalOf(registry)['coordination'], {});
  });

  it('register-agent: comma lists are split; an invalid id exits 1 with the failure fields and writes nothing', async () => {
    const { registry } = connectedProject({ coordination: { registered_agents: ['codex-a'] } });
    const list = await runLoopx([
      '--registry',
      registry,
      '--format',
      'json',
      'register-agent',
      '--project-registry',
      '--goal-id',
      'g',
      '--agent-id',
      'codex-x,codex-y',
      '--execute',
    ]);
    assert.equal(list.code, 0, list.stdout);
    assert.deepEqual([list.json()['changed'], list.json()['written']], [true, true]);
    assert.deepEqual((goalOf(registry)['coordination'] as Record<string, unknown>)['registered_agents'], [
      'codex-a',
      'codex-x',
      'codex-y',
    ]);

    const before = fs.readFileSync(registry, 'utf8');
    const bad = await runLoopx([
      '--registry',
      registry,
      '--format',
      'json',
      'register-agent',
      '--project-registry',
      '--goal-id',
      'g',
      '--agent-id',
      '9bad',
      '--execute',
    ]);
    assert.equal(bad.code, 1);
    const json = bad.json();
    assert.equal(json['error_code'], 'agent_id_invalid');
    assert.deepEqual([json['ok'], json['dry_run'], json['changed'], json['written']], [false, false, false, false]);
    assert.equal(fs.readFileSync(registry, 'utf8'), before);

    const taken = await runLoopx([
      '--registry',
      registry,
      '--format',
      'json',
      'register-agent',
      '--project-registry',
      '--goal-id',
      'g',
      '--agent-id',
      'codex-a',
      '--require-new',
      '--execute',
    ]);
    assert.equal(taken.code, 1);
    assert.match(
      taken.json()['error'] as string,
      /^fresh agent registration requires an unused agent id; already registered: codex-a/,
    );
    assert.equal(taken.json()['error_kind'], 'agent_identity_already_registered');
  });
});
