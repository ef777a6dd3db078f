import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveAgentType, type AgentTypeEntry } from '../../../src/core/agents/agentTypes';
import {
  buildOnboardingPacket,
  inferGoalId,
  type OnboardingPacket,
  type ProjectRegistryRead,
} from '../../../src/core/agents/onboarding';
import { fixedClock } from '../../../src/core/clock';
import { agentOnboard } from '../../../src/core/ops/agentOnboard';
import { runOperation } from '../../../src/core/ops/run';
import { readRegistry } from '../../../src/core/registry/read';
import { connectedProject, tempDir, writeRegistry } from './helpers';

function entry(type: string): AgentTypeEntry {
  const resolution = resolveAgentType(type);
  assert.ok(resolution.ok);
  return resolution.entry;
}

function snapshot(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true }).map(String).sort();
}

/** The agent-onboard operation, which reads the project's registry once and builds the packet from it. */
async function onboard(project: string, type: string, extra: { goalId?: string; agentId?: string } = {}) {
  const env = { cwd: project, env: {}, clock: fixedClock('2026-01-15T10:00:00Z'), homeDir: project };
  const packet = (await runOperation(agentOnboard, { agentType: type, project, ...extra }, env)) as OnboardingPacket;
  assert.deepEqual(
    packet,
    await buildOnboardingPacket({
      agentType: entry(type),
      project,
      registry: await readAsOnboardingDoes(project),
      homeDir: project,
      ...extra,
    }),
    'the operation answers what the packet builder does over the registry as read',
  );
  return packet;
}

function readAsOnboardingDoes(project: string): Promise<ProjectRegistryRead> {
  const file = path.join(project, '.loopx', 'registry.json');
  if (!fs.existsSync(file)) return Promise.resolve({ path: file, exists: false });
  return readRegistry(file).then(
    (document) => ({ path: file, exists: true, document }),
    (error: unknown) => ({ path: file, exists: true, error }),
  );
}

describe('agent onboarding', () => {
  it('infers the goal id from the project directory', () => {
    assert.equal(inferGoalId('/x/my_Project'), 'my-project-goal');
    assert.equal(inferGoalId('/x/Loop X 2'), 'loop-x-2-goal');
    // The original produced project-goal-goal here.
    assert.equal(inferGoalId('/x/___'), 'project-goal');
  });

  it('case 13: onboards an empty project read-only, as claude-code and as codex-app', async () => {
    for (const type of ['claude-code', 'codex-app', 'vscode-lm']) {
      const project = path.join(tempDir(), 'my_Project');
      fs.mkdirSync(project);
      const packet = await onboard(project, type);
      assert.equal(packet.ok, true);
      assert.equal(packet.schema_version, 'loopx_agent_onboarding_v0');
      assert.equal(packet.agent_type, type);
      assert.equal(packet.goal_id, 'my-project-goal');
      assert.equal(packet.project_connection.status, 'not_connected');
      assert.equal(packet.identity_status, 'fresh_agent_registration_required');
      assert.equal(packet.identity_selection_gate?.status, 'fresh_agent_registration_required');
      assert.equal(packet.commands.quota_guard, null);
      assert.equal(packet.host_loop_activation.allowed, false);
      assert.equal(packet.recommended_start.step, 'connect_project');
      assert.deepEqual(snapshot(project), [], 'no registry file created');
    }
  });

  it('reports a malformed registry as registry_invalid with its line and column, and leaves it alone', async () => {
    const project = tempDir();
    const registry = path.join(project, '.loopx', 'registry.json');
    fs.mkdirSync(path.dirname(registry));
    const broken = '{\n  "goals": [\n    {"id": "g",}\n  ]\n}\n';
    fs.writeFileSync(registry, broken);
    const packet = await onboard(project, 'codex-cli', { goalId: 'g' });
    assert.equal(packet.ok, true);
    assert.equal(packet.project_connection.status, 'registry_invalid');
    assert.equal(packet.project_connection.error?.line, 3);
    assert.ok((packet.project_connection.error?.column ?? 0) > 0);
    assert.match(packet.project_connection.error?.message ?? '', /registry\.json:3:\d+/);
    assert.equal(packet.recommended_start.step, 'repair_registry');
    assert.equal(packet.commands.connect, null);
    assert.equal(fs.readFileSync(registry, 'utf8'), broken);

    writeRegistry(project, { goals: { a: 1 } });
    const notList = await onboard(project, 'codex-cli', { goalId: 'g' });
    assert.equal(notList.project_connection.status, 'registry_invalid');
    assert.match(notList.project_connection.error?.message ?? '', /goals must be a list/);
  });

  it('classifies registry_without_goal, registry_goal_missing_state_file and state_file_missing', async () => {
    const project = tempDir();
    writeRegistry(project, {
      goals: [
        { id: 'other', repo: project, state_file: 's.md' },
        { id: 'bare', repo: project },
        { id: 'g', repo: project, state_file: 's.md' },
      ],
    });
    const without = await onboard(project, 'cc', { goalId: 'missing' });
    assert.equal(without.project_connection.status, 'registry_without_goal');
    assert.deepEqual(without.project_connection.available_goal_ids, ['other', 'bare', 'g']);
    assert.equal(
      (await onboard(project, 'cc', { goalId: 'bare' })).project_connection.status,
      'registry_goal_missing_state_file',
    );
    const missing = await onboard(project, 'cc', { goalId: 'g' });
    assert.equal(missing.project_connection.status, 'state_file_missing');
    assert.equal(missing.project_connection.state_file, path.join(project, 's.md'));
  });

  it('lets a registered agent of a connected goal start its loop with the quota guard', async () => {
    const { project } = connectedProject({ coordination: { registered_agents: ['codex-alpha', 'codex-beta'] } });
    const fresh = await onboard(project, 'vscode', { goalId: 'g' });
    assert.equal(fresh.project_connection.status, 'connected');
    assert.equal(fresh.identity_status, 'fresh_agent_registration_required');
    assert.equal(fresh.identity_selection_gate?.choices.length, 2);
    assert.equal(fresh.recommended_start.step, 'register_fresh_agent');
    assert.match(
      fresh.commands.takeover_existing_agent ?? '',
      /^loopx agent-onboard --agent-type vscode-lm .* --agent-id '<registered-agent-id>'$/,
    );

    const selected = await onboard(project, 'command', { goalId: 'g', agentId: 'Codex Beta' });
    assert.equal(selected.identity_status, 'selected');
    assert.equal(selected.agent_id, 'codex-beta');
    assert.equal(selected.host_loop_activation.allowed, true);
    assert.equal(selected.commands.quota_guard, 'loopx quota should-run --goal-id g --agent-id codex-beta');
    assert.equal(selected.recommended_start.step, 'start_host_loop');
  });
});
