import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { fixedCase } from '../core/cases';
import { runNode } from '../core/processes';
import { round } from '../core/stats';
import type { BenchContext, Prepared, RunnableBenchmark } from '../core/types';

/**
 * Issue 29: `loopx mcp`, one long-lived process answering tool calls, against a CLI process per call.
 *
 * - `mcp-should-run`: a warm `should_run` tool call (the SDK client in the worker, `node out/cli.js mcp`
 *   over stdio) on the real-shaped workspaces of `npm run bench:real` (python3 ../shared/bench/gen_workspace.py,
 *   the original's on-disk format, seed 11: M = 100 goals × 50 todos × 500 runs, L = 500 × 100 × 400),
 *   generated once into `$TMPDIR/loopx-real-<size>` (shared with bench:real). Per-call p50 and p99 and
 *   the server's peak RSS are reported in the verification line; the baseline is the same decision as a
 *   whole `loopx quota should-run` process.
 * - `mcp-heartbeat`: a whole heartbeat turn (should_run with a new turn id → todo_complete →
 *   refresh_state → spend_slot --execute) through the tools, against the same four steps as CLI processes.
 */

const REAL_SHAPES = { M: [100, 50, 500], L: [500, 100, 400] } as const;
type RealSize = keyof typeof REAL_SHAPES;

interface RealShape {
  dir: string;
  registryPath: string;
  goalId: string;
  agentId: string;
}

/** The real-shaped workspace of `size`, generated on first use (minutes for L) and kept for later runs. */
function realShape(size: RealSize): RealShape {
  const dir = path.join(os.tmpdir(), `loopx-real-${size}`);
  const registryPath = path.join(dir, '.loopx', 'registry.json');
  if (!fs.existsSync(registryPath)) {
    const generator =
      process.env['LOOPX_REAL_SHAPE_GEN'] ??
      path.resolve(__dirname, '..', '..', '..', 'shared', 'bench', 'gen_workspace.py');
    const [goals, todos, runs] = REAL_SHAPES[size];
    const gen = spawnSync(
      'python3',
      [generator, dir, '--goals', `${goals}`, '--todos', `${todos}`, '--runs', `${runs}`, '--seed', '11'],
      { encoding: 'utf8' },
    );
    if (gen.status !== 0) throw new Error(`the real-shape generator (${generator}) failed: ${gen.stderr}`);
  }
  const registry = JSON.parse(fs.readFileSync(registryPath, 'utf8')) as {
    goals: { id: string; coordination?: { registered_agents?: string[] } }[];
  };
  // The goal bench:real probes: the first with a single registered agent.
  const probe =
    registry.goals.find((goal) => (goal.coordination?.registered_agents ?? []).length === 1) ?? registry.goals[0];
  if (probe === undefined) throw new Error(`${registryPath} has no goals`);
  return { dir, registryPath, goalId: probe.id, agentId: probe.coordination?.registered_agents?.[0] ?? 'codex-alpha' };
}

interface Served {
  client: Client;
  pid: number;
  close(): Promise<void>;
}

async function serve(ctx: BenchContext, projectRoot: string, env: Record<string, string>): Promise<Served> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [ctx.cliPath, 'mcp', '--project-root', projectRoot],
    env: { PATH: process.env['PATH'] ?? '', HOME: ctx.homeDir, ...env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'loopx-bench', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error('loopx mcp did not start');
  return { client, pid, close: () => client.close() };
}

async function callOk(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError === true) throw new Error(`${name}: ${JSON.stringify(result.content).slice(0, 600)}`);
  return (result.structuredContent ?? {}) as Record<string, unknown>;
}

/** Peak resident set of a running process (Linux `VmHWM`), in MB; 0 elsewhere. */
function peakRssMb(pid: number): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${String(pid)}/status`, 'utf8'));
    return match?.[1] ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

const CASE_M = 'real-shaped M, warm tool call';
const CASE_L = 'real-shaped L, warm tool call';
/** Tool calls before the timed ones: the first fills the server's caches, the rest are what warm means. */
const WARM_CALLS = 5;

function sizeOfCase(label: string | undefined): RealSize {
  return label === CASE_L ? 'L' : 'M';
}

async function shouldRunOverMcp(ctx: BenchContext): Promise<Prepared> {
  const shape = realShape(sizeOfCase(ctx.caseLabel));
  // One instant for every answer: on a generated workspace spends leave the 24 h window every few seconds.
  const now = new Date().toISOString();
  const served = await serve(ctx, shape.dir, { LOOPX_NOW: now });
  const args = { goalId: shape.goalId, agentId: shape.agentId };
  const expected = JSON.stringify(await callOk(served.client, 'should_run', args));
  for (let i = 1; i < WARM_CALLS; i++) await callOk(served.client, 'should_run', args);
  const samples: number[] = [];
  return {
    run: async () => {
      const started = process.hrtime.bigint();
      const answer = await callOk(served.client, 'should_run', args);
      samples.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (JSON.stringify(answer) !== expected) throw new Error('a warm should_run answered differently');
      return { childPeakRssMb: peakRssMb(served.pid) };
    },
    verify: async () =>
      `should_run on ${shape.goalId} (${shape.agentId}): p50 ${round(percentile(samples, 50), 2)} ms, p99 ${round(percentile(samples, 99), 2)} ms over ${samples.length} calls; server peak RSS ${round(peakRssMb(served.pid), 1)} MB; every answer identical`,
    cleanup: () => served.close(),
  };
}

async function shouldRunCliProcess(ctx: BenchContext): Promise<Prepared> {
  const shape = realShape(sizeOfCase(ctx.caseLabel));
  const now = new Date().toISOString();
  const argv = [ctx.cliPath, '--registry', shape.registryPath, '--format', 'json', 'quota', 'should-run'];
  const full = [...argv, '--goal-id', shape.goalId, '--agent-id', shape.agentId];
  return {
    run: async () => {
      const { childPeakRssMb } = runNode(ctx, full, { cwd: shape.dir, env: { LOOPX_NOW: now }, okExitCodes: [0, 1] });
      return { childPeakRssMb };
    },
  };
}

const SHOULD_RUN_DESCRIPTION =
  "one `should_run` tools/call (goal and its agent) from the MCP SDK client to a running `node out/cli.js mcp` over stdio, after 5 warm-up calls; every answer checked identical to the first; the verification line gives the per-call p50/p99 and the server's peak RSS";
const SHOULD_RUN_BASELINE =
  'the same decision as a whole process: node out/cli.js quota should-run --goal-id G --agent-id A';

export const mcpShouldRun: RunnableBenchmark = {
  kind: 'process',
  name: 'mcp-should-run',
  title: '`should_run` as a warm tool call of `loopx mcp` vs a `loopx quota should-run` process (real-shaped M)',
  description: SHOULD_RUN_DESCRIPTION,
  baselineDescription: SHOULD_RUN_BASELINE,
  requiresCli: 'mcp',
  cases: [fixedCase(CASE_M, null, 100, 2)],
  unitLabel: 'goals',
  units: () => REAL_SHAPES.M[0],
  targets: [
    {
      caseLabel: CASE_M,
      metric: 'median_ms',
      limit: 10,
      text: 'a warm `should_run` tool call on real-shaped M under 10 ms (p50)',
    },
  ],
  prepare: shouldRunOverMcp,
  prepareBaseline: shouldRunCliProcess,
};

/** The same on real-shaped L, for the server's memory (its own benchmark: generating L takes minutes). */
export const mcpServerMemory: RunnableBenchmark = {
  ...mcpShouldRun,
  name: 'mcp-server-memory',
  title: "`loopx mcp` serving real-shaped L: warm `should_run` and the server's peak RSS",
  cases: [fixedCase(CASE_L, null, 30, 2)],
  units: () => REAL_SHAPES.L[0],
  targets: [
    { caseLabel: CASE_L, metric: 'peak_rss_mb', limit: 150, text: '`loopx mcp` serving real-shaped L under 150 MB' },
  ],
};

const HB_GOAL = 'mcp-hb';
const HB_AGENT = 'agent-a';
const HB_NOW = '2026-12-01T06:00:00Z';

/** A goal of its own with 20 open todos and room for many turns (1,440 one-minute slots a day). */
function heartbeatProject(ctx: BenchContext, folder: string): string {
  const root = path.join(ctx.tmpDir, folder);
  const statePath = path.join(root, '.codex', 'goals', HB_GOAL, 'ACTIVE_GOAL_STATE.md');
  fs.mkdirSync(path.dirname(statePath), { recursive: true });
  const todos = Array.from({ length: 20 }, (_, i) => [
    `- [ ] [P2] Heartbeat bench todo ${i}.`,
    `  <!-- loopx:todo todo_id=todo_hb_${i} status=open task_class=advancement_task -->`,
  ]).flat();
  fs.writeFileSync(
    statePath,
    ['---', 'status: active', '---', '# Goal', '', '## User Todo', '', '## Agent Todo', ...todos, ''].join('\n'),
  );
  const goal = {
    id: HB_GOAL,
    status: 'active',
    repo: root,
    state_file: `.codex/goals/${HB_GOAL}/ACTIVE_GOAL_STATE.md`,
    adapter: { kind: 'generic_project_goal_v0', status: 'connected' },
    quota: { compute: 1, window_hours: 24, slot_minutes: 1 },
    coordination: { agent_model: 'peer_v1', registered_agents: [HB_AGENT, 'agent-b'] },
  };
  fs.mkdirSync(path.join(root, '.loopx'), { recursive: true });
  fs.writeFileSync(
    path.join(root, '.loopx', 'registry.json'),
    JSON.stringify({ schema_version: '0.1', common_runtime_root: '.loopx/runtime', goals: [goal] }, null, 2),
  );
  return root;
}

/** The four steps of a turn, as tool arguments (the CLI side turns them into flags). */
function heartbeatSteps(turn: string, todoId: string): [string, Record<string, unknown>][] {
  const bound = { goalId: HB_GOAL, agentId: HB_AGENT, turnInstanceId: turn };
  return [
    ['todo_complete', { ...bound, todoId, evidence: 'bench turn done', successorText: `Follow-up of ${turn}.` }],
    ['refresh_state', { ...bound, classification: 'validated_progress', deliveryOutcome: 'outcome_progress' }],
    ['spend_slot', { ...bound, source: 'heartbeat', execute: true }],
  ];
}

async function heartbeatOverMcp(ctx: BenchContext): Promise<Prepared> {
  const root = heartbeatProject(ctx, 'mcp-heartbeat');
  const served = await serve(ctx, root, { LOOPX_NOW: HB_NOW });
  let turns = 0;
  return {
    run: async () => {
      const turn = `mcp-turn-${turns++}`;
      const guard = await callOk(served.client, 'should_run', {
        goalId: HB_GOAL,
        agentId: HB_AGENT,
        turnInstanceId: turn,
      });
      const todoId = (guard['selected_todo'] as { todo_id?: string } | null)?.todo_id;
      if (guard['should_run'] !== true || todoId === undefined) throw new Error(`turn ${turn} not admitted`);
      for (const [tool, args] of heartbeatSteps(turn, todoId)) await callOk(served.client, tool, args);
      return { childPeakRssMb: peakRssMb(served.pid) };
    },
    verify: async () => `${turns} turns, each should_run → todo_complete → refresh_state → spend_slot, all ok`,
    cleanup: () => served.close(),
  };
}

const FLAGS: Record<string, string> = { execute: '--execute' };
function flagsOf(args: Record<string, unknown>): string[] {
  return Object.entries(args).flatMap(([key, value]) =>
    value === true
      ? [FLAGS[key] ?? `--${key}`]
      : [`--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`, String(value)],
  );
}

const CLI_WORDS: Record<string, string[]> = {
  should_run: ['quota', 'should-run'],
  todo_complete: ['todo', 'complete'],
  refresh_state: ['refresh-state'],
  spend_slot: ['quota', 'spend-slot'],
};

async function heartbeatOverCli(ctx: BenchContext): Promise<Prepared> {
  const root = heartbeatProject(ctx, 'cli-heartbeat');
  const env = { LOOPX_NOW: HB_NOW };
  const run = (tool: string, args: Record<string, unknown>): Record<string, unknown> => {
    const argv = [ctx.cliPath, '--format', 'json', ...(CLI_WORDS[tool] ?? []), ...flagsOf(args)];
    const answer = JSON.parse(runNode(ctx, argv, { cwd: root, env }).stdout) as Record<string, unknown>;
    if (answer['ok'] === false) throw new Error(`${tool}: ${JSON.stringify(answer).slice(0, 600)}`);
    return answer;
  };
  let turns = 0;
  return {
    run: async () => {
      const turn = `cli-turn-${turns++}`;
      const guard = run('should_run', { goalId: HB_GOAL, agentId: HB_AGENT, turnInstanceId: turn });
      const todoId = (guard['selected_todo'] as { todo_id?: string } | null)?.todo_id;
      if (guard['should_run'] !== true || todoId === undefined) throw new Error(`turn ${turn} not admitted`);
      for (const [tool, args] of heartbeatSteps(turn, todoId)) run(tool, args);
    },
  };
}

export const mcpHeartbeat: RunnableBenchmark = {
  kind: 'process',
  name: 'mcp-heartbeat',
  title: 'A whole heartbeat turn over `loopx mcp` tools vs over four CLI processes',
  description:
    'should_run with a new turn id → todo_complete (evidence, successor) → refresh_state → spend_slot execute, as four tool calls to one running `node out/cli.js mcp` (a goal of its own, 20 open todos)',
  baselineDescription:
    'the same four steps as four `node out/cli.js` processes (quota should-run, todo complete, refresh-state, quota spend-slot --execute)',
  requiresCli: 'mcp',
  cases: [fixedCase('one turn', null, 15, 2)],
  unitLabel: 'turns',
  units: () => 1,
  prepare: heartbeatOverMcp,
  prepareBaseline: heartbeatOverCli,
};
