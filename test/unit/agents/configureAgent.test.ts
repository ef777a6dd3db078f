import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { LoopxError } from '../../../src/core/errors';
import { readAgentExecutorConfig } from '../../../src/core/executors/config';
import { configureAgent, removeAgent } from '../../../src/core/ops/configureAgent';
import { configureGoal } from '../../../src/core/ops/configureGoal';
import type { OperationEnvironment } from '../../../src/core/ops/operation';
import { runOperation } from '../../../src/core/ops/run';
import { connectedProject, goalOf } from './helpers';

function envOf(registry: string): OperationEnvironment {
  return {
    cwd: path.dirname(path.dirname(registry)),
    env: {},
    clock: fixedClock('2026-01-15T10:00:00Z'),
    homeDir: path.dirname(path.dirname(registry)),
    registryPath: registry,
  };
}

function profilesOf(registry: string): Record<string, Record<string, unknown>> {
  const coordination = goalOf(registry)['coordination'] as Record<string, unknown>;
  return coordination['agent_profiles'] as Record<string, Record<string, unknown>>;
}

async function refusal(run: () => Promise<unknown>): Promise<LoopxError> {
  try {
    await run();
  } catch (error) {
    assert.ok(error instanceof LoopxError, String(error));
    return error;
  }
  assert.fail('was not refused');
}

describe('configure agent (agent configure / Configure Agent…)', () => {
  it('previews the executor without writing, then writes it, registers the agent and reads it back', async () => {
    const { registry } = connectedProject({ coordination: { registered_agents: ['demo'], x_keep: 1 } });
    const bytes = fs.readFileSync(registry, 'utf8');
    const input = {
      goalId: 'g',
      agentId: 'Codex Main',
      preset: 'codex',
      model: 'gpt-5',
      permissionMode: 'workspace-write',
      envAllowlist: ['OPENAI_BASE_URL', 'MY_KEY'],
      timeoutMinutes: 30,
    } as const;
    const preview = await runOperation(configureAgent, input, envOf(registry));
    assert.equal(fs.readFileSync(registry, 'utf8'), bytes, 'a preview writes nothing');
    assert.equal(preview.dry_run, true);
    assert.equal(preview.agent_id, 'codex-main');
    assert.equal(preview.registers_agent, true);
    assert.deepEqual(preview.after, {
      preset: 'codex',
      args: ['--model', 'gpt-5', '--sandbox', 'workspace-write'],
      timeout_minutes: 30,
      env_allowlist: ['OPENAI_BASE_URL', 'MY_KEY'],
    });

    const applied = await runOperation(configureAgent, { ...input, execute: true }, envOf(registry));
    assert.equal(applied.written, true);
    assert.equal(applied.verified, true);
    assert.equal(applied.preview_id, preview.preview_id, 'the applied change is the previewed one');
    const goal = goalOf(registry);
    const coordination = goal['coordination'] as Record<string, unknown>;
    assert.deepEqual(coordination['registered_agents'], ['demo', 'codex-main']);
    assert.equal(coordination['x_keep'], 1, 'fields it does not own are kept');
    assert.equal(goal['x_unknown'] !== undefined, true);
    assert.deepEqual(readAgentExecutorConfig(goal, 'codex-main')?.args, [
      '--model',
      'gpt-5',
      '--sandbox',
      'workspace-write',
    ]);

    const again = await runOperation(configureAgent, { ...input, execute: true }, envOf(registry));
    assert.equal(again.changed, false);
    assert.equal(again.written, false, 'the same configuration twice writes once');
  });

  it("replaces the fields it owns and keeps the executor's others (cost estimate, output cap) and the profile's", async () => {
    const { registry } = connectedProject({
      coordination: {
        registered_agents: ['claude'],
        agent_profiles: {
          claude: {
            scope_summary: 'docs',
            executor: { preset: 'claude-code', args: ['--old'], estimated_cost_usd: 0.05, max_output_bytes: 4096 },
          },
        },
      },
    });
    await runOperation(
      configureAgent,
      {
        goalId: 'g',
        agentId: 'claude',
        preset: 'claude-code',
        model: 'sonnet',
        permissionMode: 'acceptEdits',
        execute: true,
      },
      envOf(registry),
    );
    assert.deepEqual(profilesOf(registry)['claude'], {
      scope_summary: 'docs',
      executor: {
        preset: 'claude-code',
        args: ['--model', 'sonnet', '--permission-mode', 'acceptEdits'],
        estimated_cost_usd: 0.05,
        max_output_bytes: 4096,
      },
    });
  });

  it('refuses choices a preset does not take, and writes nothing', async () => {
    const { registry } = connectedProject({ coordination: { registered_agents: ['a'] } });
    const bytes = fs.readFileSync(registry, 'utf8');
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ preset: 'demo', model: 'x' }, /demo preset takes no model/],
      [{ preset: 'demo', permissionMode: 'plan' }, /takes no permission mode/],
      [{ preset: 'claude-code', permissionMode: 'yolo' }, /not one of claude-code's: acceptEdits/],
      [{ preset: 'codex', permissionMode: 'acceptEdits' }, /not one of codex's: read-only, workspace-write/],
      [{ preset: 'command' }, /executor\.command: is required for the command preset/],
      [{ preset: 'vscode-lm', command: ['x'] }, /vscode-lm preset takes no command/],
    ];
    for (const [choice, message] of cases) {
      const error = await refusal(() =>
        runOperation(configureAgent, { goalId: 'g', agentId: 'a', execute: true, ...choice }, envOf(registry)),
      );
      assert.equal(error.code, 'executor_config_invalid', JSON.stringify(choice));
      assert.match(error.message, message);
    }
    assert.equal(fs.readFileSync(registry, 'utf8'), bytes);
  });

  it('writes a vscode-lm model as vendor and family', async () => {
    const { registry } = connectedProject({ coordination: { registered_agents: ['lm'] } });
    const result = await runOperation(
      configureAgent,
      { goalId: 'g', agentId: 'lm', preset: 'vscode-lm', model: 'copilot/gpt-4o' },
      envOf(registry),
    );
    assert.deepEqual(result.after, { preset: 'vscode-lm', vendor: 'copilot', family: 'gpt-4o' });
  });

  it('writes resume for the presets with agent sessions, and refuses it for the others', async () => {
    const { registry } = connectedProject({ coordination: { registered_agents: ['c'] } });
    const result = await runOperation(
      configureAgent,
      { goalId: 'g', agentId: 'c', preset: 'codex', resume: 'never', execute: true },
      envOf(registry),
    );
    assert.equal(result.after['resume'], 'never');
    assert.deepEqual(result.not_written, []);
    assert.equal(readAgentExecutorConfig(goalOf(registry), 'c')?.resume, 'never', 'a turn reads it');
    const error = await refusal(() =>
      runOperation(configureAgent, { goalId: 'g', agentId: 'c', preset: 'demo', resume: 'auto' }, envOf(registry)),
    );
    assert.match(error.message, /executor\.resume: is only for the presets with agent sessions/);
  });

  it('configures opencode with its model', async () => {
    const { registry } = connectedProject({ coordination: { registered_agents: ['o'] } });
    const result = await runOperation(
      configureAgent,
      { goalId: 'g', agentId: 'o', preset: 'opencode', model: 'anthropic/claude-sonnet-4', execute: true },
      envOf(registry),
    );
    assert.deepEqual(result.after, { preset: 'opencode', args: ['--model', 'anthropic/claude-sonnet-4'] });
    assert.equal(readAgentExecutorConfig(goalOf(registry), 'o')?.preset, 'opencode');
  });

  it('refuses a registry it cannot parse and leaves it untouched', async () => {
    const { registry } = connectedProject();
    fs.writeFileSync(registry, '{ "goals": [ broken');
    const error = await refusal(() =>
      runOperation(configureAgent, { goalId: 'g', agentId: 'a', preset: 'demo', execute: true }, envOf(registry)),
    );
    assert.match(error.message, /registry/);
    assert.equal(fs.readFileSync(registry, 'utf8'), '{ "goals": [ broken');
  });

  it('re-reads the registry at apply time: a change made after the preview is kept', async () => {
    const { registry } = connectedProject({ coordination: { registered_agents: ['a'] } });
    await runOperation(configureAgent, { goalId: 'g', agentId: 'a', preset: 'demo' }, envOf(registry));
    const document = JSON.parse(fs.readFileSync(registry, 'utf8')) as { goals: Record<string, unknown>[] };
    document.goals[0]!['display_name'] = 'changed meanwhile';
    fs.writeFileSync(registry, JSON.stringify(document));
    await runOperation(configureAgent, { goalId: 'g', agentId: 'a', preset: 'demo', execute: true }, envOf(registry));
    assert.equal(goalOf(registry)['display_name'], 'changed meanwhile');
    assert.deepEqual(profilesOf(registry)['a'], { executor: { preset: 'demo' } });
  });

  it('keeps the other profiles of a list-form agent_profiles (written back keyed by agent id)', async () => {
    const { registry } = connectedProject({
      coordination: {
        registered_agents: ['a', 'b'],
        agent_profiles: [
          { agent_id: 'b', scope_summary: 'keep me' },
          { name: 'A', executor: { preset: 'demo' } },
        ],
      },
    });
    const result = await runOperation(
      configureAgent,
      { goalId: 'g', agentId: 'a', preset: 'claude-code', execute: true },
      envOf(registry),
    );
    assert.deepEqual(result.before, { preset: 'demo' }, 'the list entry was found by its name');
    assert.deepEqual(profilesOf(registry), {
      b: { agent_id: 'b', scope_summary: 'keep me' },
      a: { name: 'A', executor: { preset: 'claude-code' } },
    });
  });

  it('remove agent takes the id, the profile and the work mode off the goal', async () => {
    const { registry } = connectedProject({
      coordination: {
        registered_agents: ['a', 'b'],
        agent_profiles: { a: { executor: { preset: 'demo' } }, b: { executor: { preset: 'demo' } } },
        agent_work_modes: { a: 'active' },
      },
    });
    const bytes = fs.readFileSync(registry, 'utf8');
    const preview = await runOperation(removeAgent, { goalId: 'g', agentId: 'a' }, envOf(registry));
    assert.deepEqual(preview.removed, ['registered_agents', 'agent_profiles', 'agent_work_modes']);
    assert.equal(fs.readFileSync(registry, 'utf8'), bytes);
    const applied = await runOperation(removeAgent, { goalId: 'g', agentId: 'a', execute: true }, envOf(registry));
    assert.equal(applied.verified, true);
    const coordination = goalOf(registry)['coordination'] as Record<string, unknown>;
    assert.deepEqual(coordination['registered_agents'], ['b']);
    assert.deepEqual(Object.keys(coordination['agent_profiles'] as object), ['b']);
    assert.deepEqual(coordination['agent_work_modes'], {});
  });
});

describe("configure-goal --agent-profile-json (the original's agent profile, with an executor)", () => {
  it('writes the whole profile in place of the stored one, executor included', async () => {
    const { registry } = connectedProject({
      coordination: {
        registered_agents: ['codex-main'],
        agent_profiles: { 'codex-main': { scope_summary: 'old', executor: { preset: 'demo' } } },
      },
    });
    const profile = { agent_id: 'codex-main', profile_role: 'reviewer', executor: { preset: 'codex' } };
    const result = await runOperation(
      configureGoal,
      { goalId: 'g', agentProfileJson: [JSON.stringify(profile)], execute: true },
      envOf(registry),
    );
    assert.deepEqual(result.changed_fields, ['agent_profiles']);
    assert.deepEqual(profilesOf(registry)['codex-main'], { ...profile, schema_version: 'agent_profile_v1' });
  });

  it('refuses what the original refuses (and an executor LoopX could not run), writing nothing', async () => {
    const { registry } = connectedProject({ coordination: { registered_agents: ['codex-main'] } });
    const bytes = fs.readFileSync(registry, 'utf8');
    const cases: [string, RegExp][] = [
      ['[1]', /must contain a JSON object/],
      ['{"agent_id":"codex-main","colour":"red"}', /unknown agent profile field\(s\): colour/],
      ['{"agent_id":"nobody"}', /agent_id must name a registered peer/],
      ['{"agent_id":"codex-main","executor":{"preset":"command"}}', /executor\.command: is required/],
    ];
    for (const [json, message] of cases) {
      const error = await refusal(() =>
        runOperation(configureGoal, { goalId: 'g', agentProfileJson: [json], execute: true }, envOf(registry)),
      );
      assert.match(error.message, message, json);
    }
    assert.equal(fs.readFileSync(registry, 'utf8'), bytes);
  });

  it('--clear-agent-profile removes a profile', async () => {
    const { registry } = connectedProject({
      coordination: { registered_agents: ['a'], agent_profiles: { a: { executor: { preset: 'demo' } } } },
    });
    await runOperation(configureGoal, { goalId: 'g', clearAgentProfile: ['a'], execute: true }, envOf(registry));
    const coordination = goalOf(registry)['coordination'] as Record<string, unknown>;
    assert.equal(coordination['agent_profiles'], undefined);
  });
});
