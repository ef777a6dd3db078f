import * as os from 'node:os';
import type { z } from 'zod';
import { clockFromEnv } from '../clock';
import { commandByKey } from '../commands/catalog';
import { parseArguments } from './arguments';
import type { Operation, OperationEnvironment, OperationOutput } from './operation';

/**
 * The environment of this Node process (its folder, environment, `LOOPX_NOW` or the clock, home),
 * with `overrides` on top: what a script passes to `runOperation`.
 */
export function processEnvironment(overrides: Partial<OperationEnvironment> = {}): OperationEnvironment {
  return {
    cwd: process.cwd(),
    env: process.env,
    clock: clockFromEnv(process.env),
    homeDir: os.homedir(),
    ...overrides,
  };
}

/** Whether a call previews a change or applies it; read-only operations ignore it. */
export type OperationMode = 'preview' | 'apply';

/**
 * Runs an operation for any surface: checks the arguments against the operation's schema (a bad
 * call fails with `invalid_argument` before anything is read or written) and, when a mode is
 * given for an operation that previews first, sets its apply switch accordingly.
 */
export async function runOperation<S extends z.ZodObject, R extends OperationOutput>(
  operation: Operation<S, R>,
  input: z.input<S> | Record<string, unknown>,
  env: OperationEnvironment,
  mode?: OperationMode,
): Promise<R> {
  const args = parseArguments(operation.args, withMode(operation, input, mode), {
    functionName: operation.key,
    root: 'options',
  });
  const result = await operation.run(args, env);
  for (const observer of observers) {
    try {
      observer({ key: operation.key, args: args as Record<string, unknown>, result, registryPath: env.registryPath });
    } catch {
      // an observer's failure is not the operation's
    }
  }
  return result;
}

/** An operation this process ran to the end (its arguments as parsed, its result). */
export interface OperationRan {
  key: string;
  args: Record<string, unknown>;
  result: OperationOutput;
  registryPath: string | undefined;
}

const observers = new Set<(ran: OperationRan) => void>();

/**
 * Tells `observer` about every operation run through `runOperation` in this process. The editor uses
 * it to know what this window just did, so its own writes never come back as notifications.
 */
export function observeOperations(observer: (ran: OperationRan) => void): { dispose(): void } {
  observers.add(observer);
  return { dispose: () => observers.delete(observer) };
}

function withMode(
  operation: Operation<z.ZodObject, OperationOutput>,
  input: Record<string, unknown>,
  mode: OperationMode | undefined,
): Record<string, unknown> {
  if (mode === undefined || operation.applySwitch === undefined) return input;
  const { argument, applyWhen } = operation.applySwitch;
  return { ...input, [argument]: mode === 'apply' ? applyWhen : !applyWhen };
}

/** The catalog's mutation policy of an operation (the one place it is declared). */
export function mutationOf(operation: Operation<z.ZodObject, OperationOutput>) {
  return commandByKey(operation.key).mutation;
}
