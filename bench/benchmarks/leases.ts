import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedCase } from '../core/cases';
import { expectOkJson, rawReadProcess, runNode } from '../core/processes';
import type { BenchContext, Prepared, RunnableBenchmark } from '../core/types';

/** Whole-process `loopx task-lease acquire` (docs/leases.md) on a goal of its own, a new todo each run. */

const GOAL_ID = 'lease-goal';
const TODOS = 60;
const AGENTS = ['agent-a', 'agent-b', 'agent-c', 'agent-d'];

interface LeaseWorkspace {
  root: string;
  registryPath: string;
  statePath: string;
}

function leaseWorkspace(ctx: BenchContext): LeaseWorkspace {
  const root = path.join(ctx.tmpDir, 'lease-workspace');
  const statePath = path.join(root, '.codex', 'goals', GOAL_ID, 'ACTIVE_GOAL_STATE.md');
  const registryPath = path.join(root, '.loopx', 'registry.json');
  if (!fs.existsSync(registryPath)) {
    fs.mkdirSync(path.dirname(statePath), { recursive: true });
    const todos = Array.from({ length: TODOS }, (_, i) => [
      `- [ ] [P2] Lease bench todo ${i}.`,
      `  <!-- loopx:todo todo_id=todo_bench_${i} status=open task_class=advancement_task -->`,
    ]).flat();
    fs.writeFileSync(
      statePath,
      ['---', 'status: active', '---', '# Goal', '', '## User Todo', '', '## Agent Todo', ...todos, ''].join('\n'),
    );
    fs.mkdirSync(path.dirname(registryPath), { recursive: true });
    const goal = {
      id: GOAL_ID,
      status: 'active',
      repo: root,
      state_file: `.codex/goals/${GOAL_ID}/ACTIVE_GOAL_STATE.md`,
      coordination: { agent_model: 'peer_v1', registered_agents: AGENTS },
    };
    fs.writeFileSync(
      registryPath,
      JSON.stringify({ schema_version: '0.1', common_runtime_root: '.loopx/runtime', goals: [goal] }, null, 2),
    );
  }
  return { root, registryPath, statePath };
}

function acquireRuns(ctx: BenchContext): Prepared {
  const ws = leaseWorkspace(ctx);
  let next = 0;
  const won: string[] = [];
  return {
    run: async () => {
      const todo = `todo_bench_${next++}`;
      const { stdout, childPeakRssMb } = runNode(
        ctx,
        [
          ctx.cliPath,
          ...['--registry', ws.registryPath, '--format', 'json', 'task-lease', 'acquire', '--goal-id', GOAL_ID],
          ...[
            '--todo-id',
            todo,
            '--owner',
            AGENTS[next % AGENTS.length] ?? 'agent-a',
            '--idempotency-key',
            `bench-${next}`,
          ],
        ],
        { cwd: ws.root, env: { HOME: ctx.homeDir } },
      );
      expectOkJson(stdout);
      won.push(todo);
      return { childPeakRssMb };
    },
    verify: async () => {
      const dir = path.join(ws.root, '.loopx', 'runtime', 'goals', GOAL_ID, 'task-leases');
      for (const todo of won) {
        const lease = JSON.parse(fs.readFileSync(path.join(dir, `${todo}.json`), 'utf8')) as Record<string, unknown>;
        if (lease['status'] !== 'active' || lease['version'] !== 1)
          throw new Error(`${todo}: lease ${JSON.stringify(lease)} is not a fresh active version-1 lease`);
      }
      return `${won.length} acquires, each a fresh active lease (version 1) on its own todo`;
    },
  };
}

export const taskLeaseAcquireCli: RunnableBenchmark = {
  kind: 'process',
  name: 'task-lease-acquire-cli',
  title: '`loopx task-lease acquire` (whole process, a new todo each run)',
  description: `node out/cli.js task-lease acquire on a goal with ${TODOS} open todos and ${AGENTS.length} registered agents, a new todo each run: read the registry, take the lease lock, parse the state file, check eligibility, write the lease atomically`,
  baselineDescription: "a node process that reads registry.json (JSON.parse) and the goal's state file",
  requiresCli: 'task-lease acquire',
  cases: [fixedCase(`${TODOS} todos, ${AGENTS.length} agents`, null, 10, 2)],
  unitLabel: 'acquires',
  units: () => 1,
  prepare: async (ctx) => acquireRuns(ctx),
  prepareBaseline: async (ctx) => {
    const ws = leaseWorkspace(ctx);
    return rawReadProcess(ctx, [ws.registryPath, ws.statePath]);
  },
};
