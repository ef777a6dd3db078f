import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { quotaStatus } from '../../../src/core/ops/quota';
import { runOperation } from '../../../src/core/ops/run';
import { todoList } from '../../../src/core/ops/todo';
import type { OperationEnvironment } from '../../../src/core/ops/operation';

/**
 * One governed heartbeat turn run through the `loopx` CLI (built `out/cli.js`), step by step, and what a goal
 * looks like afterwards: what an agent turn through LoopX's tools is compared with. No `vscode` import.
 */

export type Json = Record<string, unknown>;

/** The JSON of each step of a turn: guard, complete, record, spend. */
export interface TurnSteps {
  shouldRun: Json;
  todoComplete: Json;
  refreshState: Json;
  spendSlot: Json;
}

export const TURN_EVIDENCE = 'notes/tools-note.md written';

/** The four CLI processes of a heartbeat turn (as the installed prompts run them), each `--format json`. */
export function runCliTurn(cliJs: string, registryPath: string, goalId: string, turn: string): TurnSteps {
  const cli = (args: string[]): Json => {
    let stdout: string;
    try {
      stdout = execFileSync(process.execPath, [cliJs, ...args, '--registry', registryPath, '--format', 'json'], {
        encoding: 'utf8',
        env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      });
    } catch (error) {
      stdout = String((error as { stdout?: unknown }).stdout ?? error);
    }
    return JSON.parse(stdout) as Json;
  };
  const who = ['--goal-id', goalId, '--agent-id', 'demo', '--turn-instance-id', turn];
  const shouldRun = cli(['quota', 'should-run', ...who]);
  const todoId = (shouldRun['heartbeat_receipt'] as { todo_id: string } | null)?.todo_id ?? '';
  return {
    shouldRun,
    todoComplete: cli(['todo', 'complete', ...who, '--todo-id', todoId, '--evidence', TURN_EVIDENCE, '--no-follow-up']),
    refreshState: cli(['refresh-state', ...who, '--todo-id', todoId, '--classification', 'validated_progress']),
    spendSlot: cli(['quota', 'spend-slot', ...who, '--todo-id', todoId, '--execute']),
  };
}

/** Keys whose values differ between any two runs: clocks, and ids or hashes of each record's own bytes. */
const VOLATILE = /^(id|event_id|receipt_event_id|sha256_16|window_start|window_end)$|_at$/;
/** An ISO time (in a record, a progress line, a run file's name). */
const TIME = /\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}[:-]?\d{2}(?:-\d{2}-\d{2})?)?/g;

/**
 * The value with the goal's and the todo's ids and every time replaced by placeholders (todo ids are
 * hashes of the goal) and volatile keys dropped, so two goals' turns compare exactly.
 */
export function normalised(value: unknown, goalId: string, todoId: string): unknown {
  const text = JSON.stringify(value).replaceAll(todoId, '<todo>').replaceAll(goalId, '<goal>').replace(TIME, '<time>');
  const strip = (inner: unknown): unknown => {
    if (Array.isArray(inner)) return inner.map(strip);
    if (typeof inner !== 'object' || inner === null) return inner;
    return Object.fromEntries(
      Object.entries(inner)
        .filter(([key]) => !VOLATILE.test(key))
        .map(([key, nested]) => [key, strip(nested)]),
    );
  };
  return strip(JSON.parse(text));
}

/** The goal's quota and todos after the turn, as `loopx quota status` and `loopx todo list` give them. */
export async function goalAfterTurn(env: OperationEnvironment, goalId: string): Promise<{ quota: Json; todos: Json }> {
  const quota = (await runOperation(quotaStatus, { goalId }, env)) as unknown as Json;
  const todos = (await runOperation(todoList, { goalId }, env)) as unknown as Json;
  assert.equal(quota['ok'], true, JSON.stringify(quota));
  return { quota, todos };
}

/** The todo a turn's receipt bound. */
export const boundTodo = (steps: TurnSteps): string =>
  (steps.shouldRun['heartbeat_receipt'] as { todo_id: string } | null)?.todo_id ?? '';
