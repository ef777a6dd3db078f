import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runLoopx } from '../cli/run';
import { connectedProject, goalOf, tempDir } from './helpers';

describe('agent CLI commands', () => {
  it('agent-onboard --list-agent-types lists the catalog', async () => {
    const run = await runLoopx(['--format', 'json', 'agent-onboard', '--list-agent-types']);
    assert.equal(run.code, 0);
    const json = run.json();
    assert.equal(json['schema_version'], 'loopx_agent_type_catalog_v0');
    const types = (json['agent_types'] as { agent_type: string }[]).map((row) => row.agent_type);
    assert.ok(types.includes('vscode-lm') && types.includes('command') && types.includes('claude-code'));
    // The original's contract: its 17 types in its catalog order (codex-cli before codex-ide-plugin), ours left out.
    const canonical = (json['canonical_agent_types'] as { agent_type: string; accepted_inputs: string[] }[]).map(
      (row) => row.agent_type,
    );
    assert.equal(canonical.length, 17);
    assert.deepEqual(canonical.slice(0, 5), [
      'ark-managed-agent',
      'codex-app',
      'codex-app-ssh',
      'codex-cli',
      'codex-ide-plugin',
    ]);
    assert.deepEqual(canonical.slice(-2), ['manual', 'other-agent']);
    assert.ok(!canonical.includes('vscode-lm') && !canonical.includes('command'));
    assert.deepEqual(
      (json['ambiguous_inputs'] as { input: string }[]).map((row) => row.input),
      ['codex', 'openai-codex', 'cli'],
    );
    const markdown = await runLoopx(['agent-onboard', '--list-agent-types']);
    assert.match(markdown.stdout, /\| `vscode-lm` \|/);
  });

  it('case 9: agent-onboard exits 2 with the choices for an ambiguous, unknown or missing type', async () => {
    const ambiguous = await runLoopx(['--format', 'json', 'agent-onboard', '--agent-type', 'codex']);
    assert.equal(ambiguous.code, 2);
    // The original's payload at the top level: no `error` text, the reason and the suggestions.
    const json = ambiguous.json();
    assert.equal(json['ok'], false);
    assert.equal(json['schema_version'], 'loopx_agent_type_error_v0');
    assert.equal(json['error_kind'], 'ambiguous_or_unsupported_agent_type');
    assert.equal(json['agent_type'], 'codex');
    assert.equal(json['error'], undefined);
    assert.match(
      json['reason'] as string,
      /'codex' is ambiguous; choose one of: codex-app, codex-app-ssh, codex-ide-plugin, codex-cli/,
    );
    assert.deepEqual(json['suggestions'], ['codex-app', 'codex-app-ssh', 'codex-ide-plugin', 'codex-cli']);

    const unknown = await runLoopx(['agent-onboard', '--agent-type', 'vim']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stdout, /unsupported agent_type 'vim'; supported: vscode-lm, command, /);
    const missing = await runLoopx(['--format', 'json', 'agent-onboard']);
    assert.equal(missing.code, 2);
    assert.match(missing.json()['reason'] as string, /agent_type is required; supported: /);
    assert.equal((missing.json()['suggestions'] as string[]).length, 17);
  });

  it('case 13: agent-onboard in an empty project prints the packet and creates nothing', async () => {
    const project = path.join(tempDir(), 'my_Project');
    fs.mkdirSync(project);
    const run = await runLoopx(
      ['--format', 'json', 'agent-onboard', '--agent-type', 'claude-code', '--project', 'my_Project'],
      { cwd: path.dirname(project) },
    );
    assert.equal(run.code, 0);
    const json = run.json();
    assert.equal(json['goal_id'], 'my-project-goal');
    assert.equal((json['project_connection'] as Record<string, unknown>)['status'], 'not_connected');
    assert.equal((json['commands'] as Record<string, unknown>)['quota_guard'], null);
    assert.deepEqual(fs.readdirSync(project), []);
    const markdown = await runLoopx(['agent-onboard', '--agent-type', 'vscode', '--project', project]);
    assert.equal(markdown.code, 0);
    assert.match(markdown.stdout, /^# Onboarding vscode-lm for goal my-project-goal/);
    assert.match(markdown.stdout, /Onboarding wrote nothing\./);
  });

  it('register-agent previews, executes, and exits 2 on an invalid id', async () => {
    const { registry } = connectedProject({ coordination: { registered_agents: ['codex-existing'] } });
    const preview = await runLoopx([
      '--registry',
      registry,
      'register-agent',
      '--project-registry',
      '--goal-id',
      'g',
      '--agent-id',
      'codex-fresh',
      '--require-new',
    ]);
    assert.equal(preview.code, 0);
    assert.match(preview.stdout, /Would add `codex-fresh`/);

    const execute = await runLoopx([
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
    ]);
    assert.equal(execute.code, 0);
    assert.deepEqual(
      [execute.json()['changed'], execute.json()['written'], execute.json()['verified']],
      [true, true, true],
    );

    const again = await runLoopx([
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
    ]);
    assert.equal(again.code, 1);
    assert.equal(again.json()['error_kind'], 'agent_identity_already_registered');

    const invalid = await runLoopx([
      '--registry',
      registry,
      'register-agent',
      '--project-registry',
      '--goal-id',
      'g',
      '--agent-id',
      'true',
      '--agent-id',
      'x/y',
    ]);
    // A refused id is a failed operation (exit 1), never a usage error or a silent drop.
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /--agent-id 'x\/y' is not a valid agent id: an agent id starts with a letter/);

    const badGoal = await runLoopx(['--registry', registry, 'register-agent', '--goal-id', '../g', '--agent-id', 'a']);
    assert.equal(badGoal.code, 2);
    assert.match(badGoal.stderr, /--goal-id must be a goal id \(one path segment[^;]*; got "\.\.\/g"/);
  });

  it('configure-goal: --quota-compute 0 --execute stores 0; a rejected value exits 1 and writes nothing', async () => {
    const { registry } = connectedProject();
    const rejected = await runLoopx([
      '--registry',
      registry,
      'configure-goal',
      '--goal-id',
      'g',
      '--quota-compute',
      '-0.1',
      '--registered-agent',
      'a',
      '--execute',
    ]);
    assert.equal(rejected.code, 1);
    assert.match(rejected.stderr, /quota_compute must be greater than or equal to 0/);
    assert.equal(goalOf(registry)['quota'], undefined);
    assert.equal(goalOf(registry)['coordination'], undefined);

    const preview = await runLoopx([
      '--registry',
      registry,
      'configure-goal',
      '--goal-id',
      'g',
      '--quota-compute',
      '0',
    ]);
    assert.equal(preview.code, 0);
    assert.match(preview.stdout, /\| `quota.compute` \| null \| 0 \| yes \|/);
    assert.match(preview.stdout, /Preview only/);
    assert.equal(goalOf(registry)['quota'], undefined);

    const execute = await runLoopx([
      '--registry',
      registry,
      '--format',
      'json',
      'configure-goal',
      '--goal-id',
      'g',
      '--quota-compute',
      '0',
      '--spawn-allowed',
      '--max-children',
      '2',
      '--execute',
    ]);
    assert.equal(execute.code, 0);
    assert.deepEqual(execute.json()['changed_fields'], ['quota', 'orchestration']);
    assert.deepEqual(execute.json()['changed_paths'], [
      'quota.compute',
      'spawn_policy.allowed',
      'spawn_policy.max_children',
    ]);
    assert.deepEqual(goalOf(registry)['quota'], { compute: 0 });

    const off = await runLoopx([
      '--registry',
      registry,
      '--format',
      'json',
      'configure-goal',
      '--goal-id',
      'g',
      '--no-spawn-allowed',
      '--execute',
    ]);
    assert.equal(off.code, 0);
    assert.deepEqual(
      (off.json()['orchestration'] as Record<string, unknown>)['after'],
      'mode=default spawn_allowed=False max_children=2',
    );

    const missingGoal = await runLoopx([
      '--registry',
      registry,
      'configure-goal',
      '--goal-id',
      'zz',
      '--quota-compute',
      '1',
    ]);
    assert.equal(missingGoal.code, 1);
    assert.match(missingGoal.stderr, /goal 'zz' is not in/);
  });
});
