import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedCase } from '../core/cases';
import { rawReadProcess, runNode } from '../core/processes';
import type { BenchContext, RunnableBenchmark } from '../core/types';
import { DEFAULT_NOW } from '../workspace/generate';

/**
 * `loopx global-summary` over registries with many registered agents (issue 19: 50,000 agents took
 * 32–41 s while agent lists were de-duplicated with `Array.includes`). The workspace is written by
 * the benchmark itself: `goals` goals sharing `agents` agents, each state file with open user todos
 * bound to registered agents (the contract check looks each one up in the roster) and a few agent
 * todos. Two shapes with the same agent count (one goal with all of them, 100 goals with 500 each)
 * show that the cost follows goals + agents, not their product.
 */

interface AgentShape {
  goals: number;
  agents: number;
  /** Open user todos per goal, each `bound_agent=<a registered agent>`. */
  userTodos: number;
}

const ONE_GOAL = '1 goal × 50,000 agents';
const HUNDRED_GOALS = '100 goals × 500 agents';
const SHAPES: Readonly<Record<string, AgentShape>> = {
  [ONE_GOAL]: { goals: 1, agents: 50_000, userTodos: 200 },
  [HUNDRED_GOALS]: { goals: 100, agents: 50_000, userTodos: 20 },
};

interface AgentWorkspace {
  root: string;
  registryPath: string;
  stateFiles: string[];
}

/** Writes the registry and state files of a shape under `root` (deterministic). */
export function writeAgentWorkspace(root: string, shape: AgentShape): AgentWorkspace {
  const perGoal = Math.floor(shape.agents / shape.goals);
  const goals: unknown[] = [];
  const stateFiles: string[] = [];
  for (let g = 0; g < shape.goals; g++) {
    const goalId = `goal-${String(g).padStart(4, '0')}`;
    const agents = Array.from({ length: perGoal }, (_, a) => `agent-${goalId}-${String(a).padStart(5, '0')}`);
    const relState = `.codex/goals/${goalId}/ACTIVE_GOAL_STATE.md`;
    const stateFile = path.join(root, relState);
    const userTodos = [
      `- [ ] [P0] Approve the release of ${goalId}.\n  <!-- loopx:todo todo_id=todo_gate status=open task_class=user_gate blocks_agent=${agents[0] ?? ''} unblocks_todo_id=todo_a0 -->`,
    ];
    for (let u = 1; u < shape.userTodos; u++)
      userTodos.push(
        `- [ ] [P2] Review change ${u}.\n  <!-- loopx:todo todo_id=todo_review_${u} status=open task_class=user_action bound_agent=${agents[(u * 7919) % perGoal] ?? ''} -->`,
      );
    const agentTodos = Array.from(
      { length: 5 },
      (_, t) =>
        `- [ ] [P${t % 4}] Step ${t} of ${goalId}.\n  <!-- loopx:todo todo_id=todo_a${t} status=open task_class=advancement_task${t % 2 === 1 ? ` claimed_by=${agents[t] ?? ''}` : ''} -->`,
    );
    fs.mkdirSync(path.dirname(stateFile), { recursive: true });
    fs.writeFileSync(
      stateFile,
      `---\nstatus: active\nobjective: "Goal ${g}"\nowner_mode: solo\nupdated_at: 2026-11-28T08:00:00+00:00\n---\n# ${goalId}\n\n` +
        `## User Todo / Owner Review Reading Queue\n${userTodos.join('\n')}\n\n## Agent Todo\n${agentTodos.join('\n')}\n\n## Next Action\n- Step 0.\n`,
    );
    stateFiles.push(stateFile);
    goals.push({
      id: goalId,
      display_name: `Goal ${g}`,
      domain: 'bench',
      status: 'active',
      role: 'controller',
      repo: root,
      state_file: relState,
      adapter: { kind: 'generic_project_goal_v0', status: 'connected' },
      quota: { compute: 0.5, window_hours: 24, slot_minutes: 30 },
      coordination: { agent_model: 'peer_v1', registered_agents: agents },
    });
  }
  const registryPath = path.join(root, '.loopx', 'registry.json');
  fs.mkdirSync(path.dirname(registryPath), { recursive: true });
  fs.writeFileSync(
    registryPath,
    `${JSON.stringify({ schema_version: '0.1', updated_at: DEFAULT_NOW, common_runtime_root: '.loopx/runtime', goals }, null, 2)}\n`,
  );
  return { root, registryPath, stateFiles };
}

function shapeOf(ctx: BenchContext): AgentShape {
  const shape = SHAPES[ctx.caseLabel ?? ''];
  if (shape === undefined) throw new Error(`unknown case ${String(ctx.caseLabel)}`);
  return shape;
}

function globalSummaryRun(ctx: BenchContext, workspace: AgentWorkspace, env: NodeJS.ProcessEnv = {}) {
  return runNode(ctx, [ctx.cliPath, '--registry', workspace.registryPath, '--format', 'json', 'global-summary'], {
    cwd: workspace.root,
    env: { ...env, LOOPX_NOW: DEFAULT_NOW },
  });
}

export const globalSummaryAgents: RunnableBenchmark = {
  kind: 'process',
  name: 'global-summary-agents',
  title: '`loopx global-summary --format json` with 50,000 registered agents (whole process)',
  description:
    'node out/cli.js global-summary: status of every goal (contract check against each roster), then the summary view; every run prints the same JSON as the uncached path',
  baselineDescription: 'a node process that reads registry.json (JSON.parse) and every state file',
  cases: [fixedCase(ONE_GOAL, null, 7), fixedCase(HUNDRED_GOALS, null, 7)],
  unitLabel: 'registered agents',
  units: () => 50_000,
  targets: [{ caseLabel: ONE_GOAL, metric: 'median_ms', limit: 1000, text: 'global-summary with 50,000 agents ≤ 1 s' }],
  requiresCli: 'global-summary',
  prepare: async (ctx) => {
    const shape = shapeOf(ctx);
    const workspace = writeAgentWorkspace(path.join(ctx.tmpDir, 'agents'), shape);
    // The reference answer: the uncached path (no persistent status cache), read once before the timed runs.
    const reference = globalSummaryRun(ctx, workspace, { LOOPX_STATUS_CACHE: 'off' }).stdout;
    const parsed = JSON.parse(reference) as { ok?: boolean; summary?: { goal_count?: number } };
    if (parsed.ok !== true || parsed.summary?.goal_count !== shape.goals)
      throw new Error(`global-summary answered ${reference.slice(0, 400)}`);
    let runs = 0;
    return {
      run: async () => {
        const { stdout, childPeakRssMb } = globalSummaryRun(ctx, workspace);
        if (stdout !== reference) throw new Error('global-summary printed other JSON than the uncached path');
        runs += 1;
        return { childPeakRssMb };
      },
      verify: async () => `${runs} runs printed byte-identical JSON to the uncached path (${shape.goals} goals)`,
    };
  },
  prepareBaseline: async (ctx) => {
    const workspace = writeAgentWorkspace(path.join(ctx.tmpDir, 'agents'), shapeOf(ctx));
    return rawReadProcess(ctx, [workspace.registryPath, ...workspace.stateFiles]);
  },
};
