import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../../support/demoWorkspace';
import { clock, demo, goalOf, type Demo } from '../turn/helpers';
import type { RunOnceOptions } from '../../../src/core/turn/runOnce';

export const LANE_AGENT = path.join(REPO_ROOT, 'test', 'unit', 'lanes', 'fixtures', 'laneAgent.js');

export function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'T',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 'T',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  }).trim();
}

/**
 * The demo workspace as a git repository (branch main, one commit; the runtime folder ignored), with
 * `agents` registered and each working in a worktree lane (`isolation: "worktree"`).
 */
export function laneDemo(agents: readonly string[] = ['demo', 'codex-main']): Demo {
  const d = demo((goal) => {
    const coordination = goal['coordination'] as Record<string, unknown>;
    coordination['registered_agents'] = [...agents];
    coordination['agent_profiles'] = Object.fromEntries(agents.map((a) => [a, { isolation: 'worktree' }]));
    // The lanes' turns run in parallel: let every registered agent hold a turn.
    goal['spawn_policy'] = { mode: 'multi_subagent', allowed: true, max_children: agents.length };
    goal['quota'] = { compute: 1, window_hours: 24, slot_minutes: 1 };
  });
  // No person's gate or question of the demo: the lanes' merge gates are the only user gates.
  const state = fs.readFileSync(d.statePath, 'utf8').split('\n');
  const userStart = state.findIndex((l) => l.startsWith('## User Todo'));
  const agentStart = state.findIndex((l) => l.startsWith('## Agent Todo'));
  fs.writeFileSync(d.statePath, [...state.slice(0, userStart + 1), '', ...state.slice(agentStart)].join('\n'));
  sh(d.workspace, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(d.workspace, '.gitignore'), '.loopx/runtime/\n');
  sh(d.workspace, 'add', '-A');
  sh(d.workspace, 'commit', '-q', '-m', 'demo workspace');
  return d;
}

export function laneWorktree(d: Demo, agent: string): string {
  return path.join(d.workspace, '.loopx', 'runtime', 'lanes', 'tidy-notes', agent);
}

/** runOnce options: agent `agent` appends `line` to `file` in its lane (LANE_AGENT through a command executor). */
export function laneTurn(d: Demo, agent: string, file: string, line: string, extra: string[] = []): RunOnceOptions {
  return {
    goal: goalOf(d.registryPath),
    agentId: agent,
    clock,
    env: { PATH: process.env['PATH'] ?? '' },
    execute: true,
    hostAdapterCommand: [process.execPath, LANE_AGENT, file, line, ...extra],
  };
}
