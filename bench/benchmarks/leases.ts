import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedCase } from '../core/cases';
import { expectOkJson, rawReadProcess, runNode } from '../core/processes';
import { writeFileList } from '../core/files';
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

function leaseWorkspace(ctx: BenchContext, folder = 'lease-workspace'): LeaseWorkspace {
  const root = path.join(ctx.tmpDir, folder);
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

/** 4 agents race for the same todos, one CLI process per acquire: exactly one holder per todo. */

const RACE_TODOS = 10;

interface AcquireOutcome {
  agent: string;
  todo: string;
  won: boolean;
}

function acquireAsync(ctx: BenchContext, ws: LeaseWorkspace, agent: string, todo: string): Promise<AcquireOutcome> {
  const args = [
    ctx.cliPath,
    ...['--registry', ws.registryPath, '--format', 'json', 'task-lease', 'acquire', '--goal-id', GOAL_ID],
    ...['--todo-id', todo, '--owner', agent, '--idempotency-key', `${agent}-${todo}`],
  ];
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, {
      cwd: ws.root,
      env: { ...process.env, HOME: ctx.homeDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    proc.on('error', reject);
    proc.on('close', (code) => {
      if (code === 0) {
        expectOkJson(stdout);
        resolve({ agent, todo, won: true });
        return;
      }
      let errorCode: unknown;
      try {
        errorCode = (JSON.parse(stdout) as Record<string, unknown>)['error_code'];
      } catch {
        errorCode = undefined;
      }
      if (code === 1 && errorCode === 'todo_lease_conflict') resolve({ agent, todo, won: false });
      else
        reject(
          new Error(`${agent} acquiring ${todo} exited with ${String(code)}: ${(stdout || stderr).slice(0, 600)}`),
        );
    });
  });
}

function raceRuns(ctx: BenchContext): Prepared {
  const rounds: { ws: LeaseWorkspace; outcomes: AcquireOutcome[] }[] = [];
  return {
    run: async () => {
      const ws = leaseWorkspace(ctx, `lease-race-${rounds.length}`);
      // Every agent walks the same todos in its own order, one process at a time; the four start together.
      const outcomes = (
        await Promise.all(
          AGENTS.map(async (agent, a) => {
            const mine: AcquireOutcome[] = [];
            for (let i = 0; i < RACE_TODOS; i++)
              mine.push(await acquireAsync(ctx, ws, agent, `todo_bench_${(i + a * 3) % RACE_TODOS}`));
            return mine;
          }),
        )
      ).flat();
      rounds.push({ ws, outcomes });
    },
    verify: async () => {
      const perAgent = new Map<string, number>();
      for (const [index, { ws, outcomes }] of rounds.entries()) {
        const dir = path.join(ws.root, '.loopx', 'runtime', 'goals', GOAL_ID, 'task-leases');
        for (let i = 0; i < RACE_TODOS; i++) {
          const todo = `todo_bench_${i}`;
          const winners = outcomes.filter((o) => o.todo === todo && o.won);
          const lease = JSON.parse(fs.readFileSync(path.join(dir, `${todo}.json`), 'utf8')) as Record<string, unknown>;
          if (winners.length !== 1 || lease['owner'] !== winners[0]?.agent || lease['status'] !== 'active')
            throw new Error(
              `round ${index + 1}, ${todo}: ${winners.length} winner(s) (${winners.map((w) => w.agent).join(', ')}), lease ${JSON.stringify(lease)}`,
            );
          perAgent.set(lease['owner'] as string, (perAgent.get(lease['owner'] as string) ?? 0) + 1);
        }
      }
      const split = AGENTS.map((agent) => `${agent} ${perAgent.get(agent) ?? 0}`).join(', ');
      return `${rounds.length} round(s) × ${AGENTS.length * RACE_TODOS} acquires: exactly one holder per todo, the lease names it, every other attempt refused with todo_lease_conflict (leases won: ${split})`;
    },
  };
}

export const taskLeaseContentionCli: RunnableBenchmark = {
  kind: 'process',
  name: 'task-lease-contention-cli',
  title: `${AGENTS.length} agents race for the same ${RACE_TODOS} todos (\`loopx task-lease acquire\`, one process per acquire)`,
  description: `${AGENTS.length} agents start together; each runs node out/cli.js task-lease acquire for the same ${RACE_TODOS} todos one after another (each in its own order) on a fresh goal; the figure is the wall time until all ${AGENTS.length * RACE_TODOS} processes have exited, and the bench fails unless each todo has exactly one holder and every other attempt was refused with todo_lease_conflict`,
  baselineDescription: `${AGENTS.length} × ${RACE_TODOS} node processes (${AGENTS.length} at a time) that read registry.json and the goal's state file`,
  requiresCli: 'task-lease acquire',
  cases: [fixedCase(`${AGENTS.length} agents × ${RACE_TODOS} todos`, null, 3, 0)],
  unitLabel: 'acquires',
  units: () => AGENTS.length * RACE_TODOS,
  prepare: async (ctx) => raceRuns(ctx),
  prepareBaseline: async (ctx) => {
    const ws = leaseWorkspace(ctx);
    const listFile = writeFileList(ctx.tmpDir, [ws.registryPath, ws.statePath]);
    const script = path.join(ctx.buildDir, 'rawRead.cjs');
    const one = (): Promise<void> =>
      new Promise((resolve, reject) => {
        const proc = spawn(process.execPath, [script, listFile], { stdio: 'ignore' });
        proc.on('error', reject);
        proc.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`rawRead exited with ${String(code)}`))));
      });
    return {
      run: async () => {
        await Promise.all(
          AGENTS.map(async () => {
            for (let i = 0; i < RACE_TODOS; i++) await one();
          }),
        );
      },
    };
  },
};
