import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../../src/core/clock';
import type { AgentExecutor, ExecutorOutcome } from '../../src/core/executors/types';
import { HOST_RESULT_SCHEMA_VERSION, type HostRequest } from '../../src/core/protocol/contract';
import { goalRefOf } from '../../test/support/goalRef';
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
  return {
    goal: goalRefOf({ registryPath, goalId: 'tidy-notes' }),
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

/** For `bench/profileTurn.ts`: the benchmark's goal, turn and seeding. */
export function benchGoalForProfile(tmpDir: string): RunOnceOptions {
  return benchGoal({ tmpDir } as BenchContext);
}
export const oneTurnForProfile = oneTurn;
export const seedTurnsForProfile = (options: RunOnceOptions, turns: number, realTurns: number): number =>
  seedTurns(options, turns, realTurns);

const TEN_THOUSAND = 'turn 10,000 against turn 10 (interleaved)';
const SEEDED_TURNS = 10_000;

/**
 * Gives a goal the run history of `turns` earlier turns: the rows its first real turns wrote,
 * cloned with earlier times and fresh turn and settlement ids (the artifacts they name exist), put
 * before its own rows, as a long-running goal's index looks at turn 10,000.
 */
function seedTurns(options: RunOnceOptions, turns: number, realTurns: number): number {
  const index = path.join(options.goal.runtimeRoot, 'goals', options.goal.goalId, 'runs', 'index.jsonl');
  const own = fs
    .readFileSync(index, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  const rows = own.map((line) => JSON.parse(line) as Record<string, unknown>);
  const first = Date.parse(String(rows[0]?.['generated_at'] ?? new Date().toISOString()));
  // The rows of one real turn (the index holds `realTurns` of them), cloned per synthetic turn.
  const perTurn = Math.max(1, Math.round(rows.length / realTurns));
  const seeded: string[] = [];
  for (let turn = 0; turn < turns; turn++) {
    // One second per turn, ending an hour before the real rows (inside the 24 h window for the newest).
    const at = new Date(first - 3_600_000 - (turns - turn) * 1000).toISOString();
    for (const row of rows.slice(0, perTurn)) {
      const copy: Record<string, unknown> = { ...row, generated_at: at };
      if (typeof copy['turn_instance_id'] === 'string') copy['turn_instance_id'] = `seed-${turn}`;
      const identity = copy['settlement_identity'];
      if (typeof identity === 'object' && identity !== null)
        copy['settlement_identity'] = { ...identity, effect_id: `seed-effect-${turn}` };
      seeded.push(JSON.stringify(copy));
    }
  }
  fs.writeFileSync(index, `${[...seeded, ...own].join('\n')}\n`);
  return seeded.length + own.length;
}

/** Per-turn overhead on a goal with 10,000 turns of history against a fresh one, measured turn by turn in alternation. */
export const turnAtTenThousand: RunnableBenchmark = {
  kind: 'in-process',
  name: 'turn-at-10000',
  title: 'Per-turn overhead at turn 10,000 against turn 10',
  description:
    'two demo goals in one process: one fresh (turn ~10), one whose run index holds 10,000 earlier turns (rows cloned from its first real turns); each run times one turn on each, in alternation; the timed figure is the turn at 10,000, the check compares the medians',
  baselineDescription: "read registry.json, the goal's state file and its run index once",
  cases: [fixedCase(TEN_THOUSAND, null, 30, 3)],
  unitLabel: 'turns of history',
  units: () => SEEDED_TURNS,
  targets: [
    {
      caseLabel: TEN_THOUSAND,
      metric: 'median_ms',
      limit: 60,
      text: 'one turn at 10,000 turns of history under 60 ms (the issue: within 10 % of turn 10, see the check)',
    },
  ],
  prepare: async (ctx) => {
    const fresh = benchGoal({ ...ctx, tmpDir: path.join(ctx.tmpDir, 'fresh') });
    const long = benchGoal({ ...ctx, tmpDir: path.join(ctx.tmpDir, 'long') });
    for (let i = 0; i < 10; i++) {
      await oneTurn(fresh);
      await oneTurn(long);
    }
    const rows = seedTurns(long, SEEDED_TURNS, 10);
    const freshTimes: number[] = [];
    const longTimes: number[] = [];
    return {
      run: async () => {
        let started = performance.now();
        await oneTurn(fresh);
        freshTimes.push(performance.now() - started);
        started = performance.now();
        await oneTurn(long);
        const ms = performance.now() - started;
        longTimes.push(ms);
        return { measuredMs: ms };
      },
      verify: async () => {
        const a = median(freshTimes);
        const b = median(longTimes);
        return `median turn on the fresh goal ${a.toFixed(1)} ms, at ${SEEDED_TURNS.toLocaleString('en-US')} turns (${rows.toLocaleString('en-US')} index rows) ${b.toFixed(1)} ms: ratio ${(b / a).toFixed(2)}`;
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
