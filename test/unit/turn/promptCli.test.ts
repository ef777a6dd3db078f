import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { commandByKey } from '../../../src/core/commands/catalog';
import { runLoopx } from '../cli/run';
import { demoWorkspace } from '../executors/helpers';

const NOW = '2026-11-28T10:00:00Z';

describe('loopx heartbeat-prompt', () => {
  let workspace: string;
  before(() => {
    workspace = demoWorkspace();
  });

  it('is in the catalog as a read-only agent command of "Quota and turns"', () => {
    const spec = commandByKey('heartbeatPrompt');
    assert.equal(spec.cli, 'heartbeat-prompt');
    assert.equal(spec.title, null);
    assert.equal(spec.slash, '/loopx-heartbeat');
    assert.equal(spec.scope, 'agent');
    assert.equal(spec.mutation, 'read_only');
    assert.equal(spec.group, 'Quota and turns');
  });

  it('prints the thin prompt for the demo agent by default, and writes nothing', async () => {
    const before = fs.readFileSync(
      path.join(workspace, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md'),
      'utf8',
    );
    const run = await runLoopx(['heartbeat-prompt', '--goal-id', 'tidy-notes', '--agent-id', 'demo'], {
      cwd: workspace,
      now: NOW,
    });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^# LoopX turn: tidy-notes/);
    assert.match(run.stdout, /- id: `todo_related`/);
    assert.match(run.stdout, /## Heartbeat/);
    assert.match(
      run.stdout,
      /`"\$\{LOOPX_CLI:-loopx\}" refresh-state --goal-id tidy-notes --classification <classification> .*--agent-id demo`/,
    );
    assert.match(run.stdout, /- Quota: 1 of 24 turns used in the last 24 h; 23 left\./);
    assert.ok(!run.stdout.includes('## Recent evidence'), 'thin has no evidence list');
    assert.equal(
      fs.readFileSync(path.join(workspace, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md'), 'utf8'),
      before,
    );
  });

  it('selects the todo claimed by the agent first, and prints JSON with the brief', async () => {
    const run = await runLoopx(
      ['--format', 'json', 'heartbeat-prompt', '--goal-id', 'tidy-notes', '--agent-id', 'codex-main', '--full'],
      { cwd: workspace, now: NOW },
    );
    assert.equal(run.code, 0, run.stdout);
    const json = run.json();
    assert.equal(json['schema_version'], 'loopx_heartbeat_prompt_v1');
    assert.equal(json['size'], 'full');
    assert.equal(json['selected_todo_id'], 'todo_links');
    assert.match(String(json['prompt']), /## Recent evidence/);
    const brief = json['brief'] as Record<string, unknown>;
    assert.deepEqual(brief['validation_command'], ['node', 'scripts/check-notes.js']);
    assert.equal((brief['open_gates'] as unknown[]).length, 1);
  });

  it('refuses two sizes at once (exit 2), an unregistered agent (exit 1) and an unknown goal (exit 1)', async () => {
    const sizes = await runLoopx(
      ['heartbeat-prompt', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--thin', '--full'],
      { cwd: workspace, now: NOW },
    );
    assert.equal(sizes.code, 2);
    assert.match(sizes.stderr, /choose one prompt size, not --thin and --full/);
    const stranger = await runLoopx(['heartbeat-prompt', '--goal-id', 'tidy-notes', '--agent-id', 'stranger'], {
      cwd: workspace,
      now: NOW,
    });
    assert.equal(stranger.code, 1);
    assert.match(
      stranger.stderr,
      /agent_id='stranger' is not registered for goal 'tidy-notes'; registered_agents=demo, codex-main/,
    );
    const missing = await runLoopx(['heartbeat-prompt', '--goal-id', 'no-such-goal', '--agent-id', 'demo'], {
      cwd: workspace,
      now: NOW,
    });
    assert.equal(missing.code, 1);
    const badId = await runLoopx(['heartbeat-prompt', '--goal-id', '../x', '--agent-id', 'demo'], {
      cwd: workspace,
      now: NOW,
    });
    assert.equal(badId.code, 2);
  });
});
