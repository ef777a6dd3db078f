import { z } from 'zod';
import { createAgentExecutor, type ExecutorConfig } from '../executors/config';
import type { TurnEventSink } from '../turn/events';
import { parseArguments } from './arguments';
import { quotaShouldRun } from './quota';
import { todoList } from './todo';
import { turnInspectJournal, turnLoop, turnPlan, turnRunOnce } from './turn';
import {
  clockOf,
  homeDirArgument,
  homeDirOf,
  nowArgument,
  registryPathArgument,
  resolvedPath,
  runtimeRootOverrideArgument,
} from './libraryArguments';
import type { Operation, OperationEnvironment, OperationOutput } from './operation';
import { processEnvironment } from './run';
import { GateListResultSchema, type GateListResult } from './resultSchemas';

/**
 * The documented library names (docs/api.md) over the operations: each is one line, the operation
 * and the name its errors use. A library call takes one options object: the operation's own
 * arguments plus where and when it runs (`registryPath`, `now`, `homeDir`, `runtimeRootOverride`,
 * and for turns `env`, `signal`, `onEvent`, `demoAgentArgv`). `null` means "not given", like the
 * original's `None`. A bad argument is `invalid_argument` naming `<function>: options.<key>`.
 */

const absent = <T extends z.ZodType>(schema: T) => schema.nullish().transform((value) => value ?? undefined);

const placeFields = {
  registryPath: registryPathArgument,
  runtimeRootOverride: runtimeRootOverrideArgument,
  homeDir: homeDirArgument,
  now: nowArgument,
};

const turnFields = {
  env: absent(z.record(z.string(), z.string().optional())).describe(
    'the environment agents and validators pick allowlisted variables from, or null/undefined for process.env',
  ),
  signal: absent(z.instanceof(AbortSignal)).describe('an AbortSignal that cancels between phases, or null/undefined'),
  onEvent: absent(z.custom<TurnEventSink>((value) => typeof value === 'function')).describe(
    'a function receiving typed turn events, or null/undefined',
  ),
  demoAgentArgv: absent(z.array(z.string().min(1)).min(1)).describe(
    'how to start the built-in demo agent (e.g. [process.execPath, "<out>/demoAgent.js"]), or null/undefined',
  ),
};

type PlaceOptions = { [K in keyof typeof placeFields]?: z.input<(typeof placeFields)[K]> } & { registryPath: string };
type TurnOptions = { [K in keyof typeof turnFields]?: z.input<(typeof turnFields)[K]> };

/** The library's options of an operation: its arguments (each also taking null) and where it runs. */
export type LibraryOptions<S extends z.ZodObject, Extra = object> = {
  [K in keyof z.input<S>]?: z.input<S>[K] | null;
} & Pick<z.input<S>, RequiredKeys<z.input<S>>> &
  PlaceOptions &
  Extra;

type RequiredKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? never : K }[keyof T];

function libraryFunction<S extends z.ZodObject, R extends OperationOutput, Extra = object>(
  operation: Operation<S, R>,
  functionName: string,
  extra: z.ZodRawShape = {},
): (options: LibraryOptions<S, Extra>) => Promise<R> {
  const schema = operation.args.extend({ ...placeFields, ...extra });
  return async (options) => {
    const given =
      typeof options === 'object' && options !== null
        ? Object.fromEntries(Object.entries(options).filter(([, value]) => value !== null))
        : options;
    const parsed = parseArguments(schema, given, { functionName, root: 'options' }) as Record<string, unknown>;
    const { registryPath, runtimeRootOverride, homeDir, now, env, signal, onEvent, demoAgentArgv, ...args } = parsed;
    const environment: Partial<OperationEnvironment> = {
      registryPath: resolvedPath(registryPath as string),
      runtimeRootOverride: runtimeRootOverride as string | undefined,
      homeDir: homeDirOf(homeDir as string | undefined),
      clock: clockOf(now as string | Date | undefined),
      ...(env === undefined ? {} : { env: env as NodeJS.ProcessEnv }),
      signal: signal as AbortSignal | undefined,
      onEvent: onEvent as TurnEventSink | undefined,
      // An explicit demo agent for this call wins over the one the host installed.
      ...(demoAgentArgv === undefined
        ? {}
        : {
            executorFactory: (config: ExecutorConfig) =>
              createAgentExecutor(config, { demoAgentArgv: demoAgentArgv as string[] }),
          }),
    };
    // Parsed once, with the operation's own fields: what remains is the operation's arguments.
    return operation.run(args as z.output<S>, { ...processEnvironment(), ...environment });
  };
}

export const listTodos = libraryFunction(todoList, 'listTodos');
export const shouldRun = libraryFunction(quotaShouldRun, 'shouldRun');
export const planTurn = libraryFunction(turnPlan, 'planTurn');
export const inspectTurnJournal = libraryFunction(turnInspectJournal, 'inspectTurnJournal');
export const runTurnOnce = libraryFunction<
  typeof turnRunOnce.args,
  Awaited<ReturnType<typeof turnRunOnce.run>>,
  TurnOptions
>(turnRunOnce, 'runTurnOnce', turnFields);
export const runTurnLoop = libraryFunction<typeof turnLoop.args, Awaited<ReturnType<typeof turnLoop.run>>, TurnOptions>(
  turnLoop,
  'runTurnLoop',
  turnFields,
);

/**
 * `listGates`: `todoList`'s gates, and for every agent todo it lists (not done or deferred) whether a
 * gate holds it back and how: the same operation, its result read as the gate list.
 */
const listAgentTodos = libraryFunction(todoList, 'listGates');
export async function listGates(options: ListGatesOptions): Promise<GateListResult> {
  const list = await listAgentTodos({ ...options, role: 'agent' });
  return GateListResultSchema.parse({
    goal_id: list.goal_id,
    state_file: list.state_file,
    open_gates: list.open_gates,
    holding_gates: list.holding_gates,
    agent_todos: list.todos.map((todo) => ({
      todo_id: todo.todo_id,
      claimed_by: todo.claimed_by,
      blocked: todo.blocked_by.length > 0,
      blocked_by: todo.blocked_by,
    })),
    lane_gates_by_agent: list.lane_gates_by_agent,
  });
}

/** The goal whose gates to list, and where. */
export type ListGatesOptions = { goalId: string } & PlaceOptions;

export type ListTodosOptions = Parameters<typeof listTodos>[0];
export type ShouldRunOptions = Parameters<typeof shouldRun>[0];
export type PlanTurnOptions = Parameters<typeof planTurn>[0];
export type InspectTurnJournalOptions = Parameters<typeof inspectTurnJournal>[0];
export type RunTurnOnceOptions = Parameters<typeof runTurnOnce>[0];
export type RunTurnLoopOptions = Parameters<typeof runTurnLoop>[0];
