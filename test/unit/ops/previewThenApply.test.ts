import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { isLoopxError } from '../../../src/core/errors';
import { agentOnboard } from '../../../src/core/ops/agentOnboard';
import { configureGoal } from '../../../src/core/ops/configureGoal';
import type { OperationEnvironment } from '../../../src/core/ops/operation';
import { previewThenApplyWith } from '../../../src/core/ops/previewThenApply';
import { registerAgent } from '../../../src/core/ops/registerAgent';
import { runOperation } from '../../../src/core/ops/run';
import { slashCommands } from '../../../src/core/ops/slashCommands';
import { connectedProject, goalOf } from '../agents/helpers';

/** The palette's preview → confirm → apply, driven without VS Code: the person's answer is a function. */

function environment(project: string, registry: string): OperationEnvironment {
  return {
    cwd: project,
    env: {},
    clock: fixedClock('2026-01-01T00:00:00Z'),
    homeDir: path.join(project, 'home'),
    registryPath: registry,
  };
}

function answering(answer: boolean) {
  const seen: unknown[] = [];
  return {
    seen,
    confirm: async (preview: unknown) => {
      seen.push(preview);
      return answer;
    },
  };
}

describe('previewThenApplyWith (the palette runner without VS Code)', () => {
  it('previews, asks with the preview, and writes nothing when the person declines', async () => {
    const { project, registry } = connectedProject({ quota: { compute: 0.5, window_hours: 24 } });
    const before = fs.readFileSync(registry, 'utf8');
    const person = answering(false);
    const outcome = await previewThenApplyWith(
      configureGoal,
      { goalId: 'g', quotaCompute: 0.25 },
      environment(project, registry),
      person,
    );
    assert.equal(outcome.outcome, 'declined');
    assert.equal(person.seen.length, 1);
    const preview = person.seen[0] as { dry_run: boolean; changed_fields: string[] };
    assert.equal(preview.dry_run, true);
    assert.deepEqual(preview.changed_fields, ['quota']);
    assert.equal(fs.readFileSync(registry, 'utf8'), before);
  });

  it('applies what was previewed when the person confirms', async () => {
    const { project, registry } = connectedProject({ quota: { compute: 0.5, window_hours: 24 } });
    const person = answering(true);
    const outcome = await previewThenApplyWith(
      configureGoal,
      { goalId: 'g', quotaCompute: 0.25 },
      environment(project, registry),
      person,
    );
    assert.equal(outcome.outcome, 'applied');
    assert.ok(outcome.outcome === 'applied' && outcome.result.written && outcome.result.verified);
    assert.equal((goalOf(registry)['quota'] as { compute: number }).compute, 0.25);
  });

  it('asks nothing and writes nothing when the preview shows nothing to apply', async () => {
    const { project, registry } = connectedProject({ quota: { compute: 0.5, window_hours: 24 } });
    const before = fs.readFileSync(registry, 'utf8');
    const person = answering(true);
    const outcome = await previewThenApplyWith(
      configureGoal,
      { goalId: 'g', quotaCompute: 0.5 },
      environment(project, registry),
      { ...person, nothingToApply: (preview) => !preview.changed },
    );
    assert.equal(outcome.outcome, 'nothing_to_apply');
    assert.equal(person.seen.length, 0);
    assert.equal(fs.readFileSync(registry, 'utf8'), before);
  });

  it('returns a refused preview (ok: false) without asking or applying', async () => {
    const { project, registry } = connectedProject({ coordination: { registered_agents: ['codex-main'] } });
    const before = fs.readFileSync(registry, 'utf8');
    const person = answering(true);
    const outcome = await previewThenApplyWith(
      registerAgent,
      { goalId: 'g', agentId: ['codex-main'], requireNew: true, projectRegistry: true },
      environment(project, registry),
      person,
    );
    assert.equal(outcome.outcome, 'refused');
    assert.equal(outcome.preview.error_kind, 'agent_identity_already_registered');
    assert.equal(person.seen.length, 0);
    assert.equal(fs.readFileSync(registry, 'utf8'), before);
  });

  it('refuses bad arguments before previewing: nothing asked, nothing written', async () => {
    const { project, registry } = connectedProject();
    const before = fs.readFileSync(registry, 'utf8');
    const person = answering(true);
    await assert.rejects(
      previewThenApplyWith(configureGoal, { goalId: 'g', quotaCompute: 2 }, environment(project, registry), person),
      (error: unknown) => isLoopxError(error, 'invalid_goal_config') && /less than or equal to 1/.test(error.message),
    );
    assert.equal(person.seen.length, 0);
    assert.equal(fs.readFileSync(registry, 'utf8'), before);
  });

  it('flips an apply switch that applies when false (dryRun): the preview writes no file, the apply does', async () => {
    const { project, registry } = connectedProject();
    const person = answering(true);
    const promptFile = path.join(project, '.claude', 'commands', 'loopx.md');
    const outcome = await previewThenApplyWith(
      slashCommands,
      { install: true, surface: ['claude-code'] },
      environment(project, registry),
      {
        confirm: async (preview) => {
          assert.equal(fs.existsSync(path.join(project, '.claude')), false, 'the preview wrote nothing');
          return person.confirm(preview);
        },
      },
    );
    assert.equal(outcome.outcome, 'applied');
    assert.equal((person.seen[0] as { dry_run: boolean }).dry_run, true);
    assert.ok(outcome.outcome === 'applied' && 'dry_run' in outcome.result && !outcome.result.dry_run);
    assert.ok(fs.readdirSync(path.dirname(promptFile)).length > 0);
  });

  it('runs an operation without a preview step directly, asking nothing', async () => {
    const { project, registry } = connectedProject();
    const person = answering(false);
    const outcome = await previewThenApplyWith(
      agentOnboard,
      { listAgentTypes: true },
      environment(project, registry),
      person,
    );
    assert.equal(outcome.outcome, 'applied');
    assert.equal(outcome.outcome === 'applied' ? outcome.preview : 'x', null);
    assert.equal(person.seen.length, 0);
  });
});

describe('configureGoal operation: a pair of switches is one setting', () => {
  it('noSpawnAllowed wins as spawnAllowed false; spawnAllowed alone sets it true', async () => {
    const { project, registry } = connectedProject({ spawn_policy: { allowed: true, max_children: 2 } });
    const env = environment(project, registry);
    const off = await runOperation(configureGoal, { goalId: 'g', spawnAllowed: true, noSpawnAllowed: true }, env);
    assert.equal(off.after['spawn_policy.allowed'], false);
    const on = await runOperation(configureGoal, { goalId: 'g', spawnAllowed: true }, env);
    assert.equal(on.after['spawn_policy.allowed'], true);
  });
});
