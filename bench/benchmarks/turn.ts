import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../../src/core/clock';
import type { AgentExecutor, ExecutorOutcome } from '../../src/core/executors/types';
import { HOST_RESULT_SCHEMA_VERSION, type HostRequest } from '../../src/core/protocol/contract';
import { quotaGoalFromRegistry } from '../../src/core/quota/goal';
import { runOnce, type RunOnceOptions } from '../../src/core/turn/runOnce';
import { materializeDemoWorkspace } from '../../test/support/demoWorkspace';
import { rawRead } from '../core/files';
import { fixedCase } from '../core/cases';
import type { BenchContext, RunnableBenchmark } from '../core/types';

/**
 * The turn driver's own overhead: one full `runOnce` turn (plan, reserve, journal every phase,
 * check the result, run the validator, write back the todo and the run record, spend, schedule)
 * with everything but the agent process. The agent is an in-process double that answers a canned
 * valid result at once; the validator is `true` (one tiny process, as a real goal has one).
 * The result keeps the todo open (progress), so every turn works on the same demo goal.
 */

const BLOCK = 100;

/** Answers `validated_progress` on the selected todo instantly, with reported usage. */
const cannedExecutor: AgentExecutor = {
  kind: 'canned',
  run: async (request: HostRequest): Promise<ExecutorOutcome> => {
    const todo = request.selected_todo;
    if (todo === null) throw new Error('the benchmark goal ran out of todos');
    return {
      ok: true,
      executor: 'canned',
      exit_code: 0,
      duration_ms: 0,
      session_id: null,
      output_excerpt: '',
      stderr_excerpt: '',
      usage: { input_tokens: 1000, output_tokens: 100, cost_usd: 0.001, estimated: true, source: 'agent_reported' },
      result_kind: 'validated_progress',
      result: {
        schema_version: HOST_RESULT_SCHEMA_VERSION,
        turn_key: request.turn_key,
        result_kind: 'validated_progress',
        summary: 'canned progress',
        classification: 'bench_progress',
        recommended_action: 'Run the next turn.',
        next_action: 'Run the next turn.',
        delivery_batch_scale: 'single_surface',
        delivery_outcome: 'outcome_progress',
        evidence: ['canned'],
        todo: { todo_id: todo.todo_id, disposition: 'in_progress' },
        changed_files: [],
      },
    };
  },
};

/** A demo workspace whose goal never runs out of slots and validates with `true`. */
function benchGoal(ctx: BenchContext): RunOnceOptions {
  const workspace = materializeDemoWorkspace(path.join(ctx.tmpDir, 'workspace'), { replace: true });
  const registryPath = path.join(workspace, '.loopx', 'registry.json');
  const registry = JSON.parse(fs.readFileSync(registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
  const goal = registry.goals[0] as Record<string, unknown>;
  goal['quota'] = { compute: 1, window_hours: 24, allowed_slots: 1_000_000 };
  goal['validation_command'] = ['true'];
  fs.writeFileSync(registryPath, JSON.stringify(registry, null, 2));
  const quotaGoal = quotaGoalFromRegistry(
    JSON.parse(fs.readFileSync(registryPath, 'utf8')) as Record<string, unknown>,
    {
      registryPath,
      goalId: 'tidy-notes',
    },
  );
  if (quotaGoal === null) throw new Error('the demo goal is missing');
  return {
    goal: quotaGoal,
    agentId: 'demo',
    clock: systemClock,
    env: { PATH: process.env['PATH'] ?? '' },
    execute: true,
    executorFactory: () => cannedExecutor,
  };
}

async function oneTurn(options: RunOnceOptions): Promise<void> {
  const result = await runOnce(options);
  if (result.status !== 'committed') throw new Error(`turn ${result.status}: ${result.message}`);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

function baselineFiles(options: RunOnceOptions): string[] {
  const workspace = path.dirname(path.dirname(options.goal.registryPath));
  return [
    options.goal.registryPath,
    path.join(workspace, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md'),
    path.join(workspace, '.loopx', 'runtime', 'goals', 'tidy-notes', 'runs', 'index.jsonl'),
  ];
}

const ONE_TURN = 'demo goal, one turn';

export const turnOverhead: RunnableBenchmark = {
  kind: 'in-process',
  name: 'turn-overhead',
  title: 'Control-plane overhead of one turn (in-process agent double)',
  description:
    'runOnce --execute on the demo goal with an agent that answers a canned validated_progress at once and validator `true`: plan, reserve, 7 journaled phases, writeback, spend',
  baselineDescription: "read registry.json, the goal's state file and its run index",
  cases: [fixedCase(ONE_TURN, null, 30, 3)],
  unitLabel: 'turns',
  units: () => 1,
  targets: [
    {
      caseLabel: ONE_TURN,
      metric: 'median_ms',
      limit: 50,
      text: "one turn's control-plane overhead (everything but the agent process) under 50 ms",
    },
  ],
  prepare: async (ctx) => {
    const options = benchGoal(ctx);
    return {
      run: async () => {
        await oneTurn(options);
      },
    };
  },
  prepareBaseline: async (ctx) => {
    const files = baselineFiles(benchGoal(ctx));
    return {
      run: async () => {
        await rawRead(files);
      },
    };
  },
};

const THOUSAND = '1,000 turns in 10 blocks of 100';

export const turnLoopGrowth: RunnableBenchmark = {
  kind: 'in-process',
  name: 'turn-loop-1000',
  title: '1,000 turns back to back: per-turn time does not grow',
  description: `one run = ${BLOCK} consecutive turns on the same goal (as turn-overhead); 10 runs = 1,000 turns; the check lists the median turn of each block of ${BLOCK}`,
  baselineDescription: "read registry.json, the goal's state file and its run index once",
  cases: [fixedCase(THOUSAND, null, 10, 0)],
  unitLabel: 'turns',
  units: () => 1000,
  prepare: async (ctx) => {
    const options = benchGoal(ctx);
    const blocks: number[] = [];
    return {
      run: async () => {
        const times: number[] = [];
        for (let i = 0; i < BLOCK; i++) {
          const started = performance.now();
          await oneTurn(options);
          times.push(performance.now() - started);
        }
        blocks.push(median(times));
      },
      verify: async () => {
        const first = blocks[0] ?? 0;
        const last = blocks[blocks.length - 1] ?? 0;
        return `median turn per block of ${BLOCK}: ${blocks.map((b) => `${b.toFixed(1)} ms`).join(', ')} (last ÷ first = ${(last / first).toFixed(2)})`;
      },
    };
  },
  prepareBaseline: async (ctx) => {
    const files = baselineFiles(benchGoal(ctx));
    return {
      run: async () => {
        await rawRead(files);
      },
    };
  },
};
