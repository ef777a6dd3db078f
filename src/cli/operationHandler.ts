import type { z } from 'zod';
import { isLoopxError } from '../core/errors';
import type { Operation, OperationEnvironment, OperationOutput } from '../core/ops/operation';
import { runOperation } from '../core/ops/run';
import { cliHomeDir, type CliContext, type GlobalOptions } from './context';
import type { CliHandler } from './commands/index';
import { OperationFailure } from './operationFailure';
import { addOperationOptions, operationInput, usageFromInvalidArgument } from './operationOptions';

/** The environment an operation sees when the CLI runs it. */
export function cliEnvironment(ctx: CliContext, globals: GlobalOptions): OperationEnvironment {
  return {
    cwd: ctx.cwd,
    env: ctx.env,
    clock: ctx.clock,
    homeDir: cliHomeDir(ctx),
    registryPath: globals.registry,
    runtimeRootOverride: globals.runtimeRoot,
  };
}

/** What a long operation adds to its environment around one run (Ctrl+C as `signal`, progress as `onEvent`). */
export type EnvironmentScope = <T>(
  ctx: CliContext,
  run: (extra: Pick<OperationEnvironment, 'signal' | 'onEvent'>) => Promise<T>,
) => Promise<T>;

/**
 * A CLI command that is an operation: options generated from its schema, its result printed as
 * JSON unchanged (the JSON contract is the operation's result) or as Markdown by `render`.
 */
export function operationCommand<S extends z.ZodObject, R extends OperationOutput>(
  operation: Operation<S, R>,
  render: (result: R) => string,
  scope?: EnvironmentScope,
  /** The exit code of a result when it is not the usual 0 (ok) or 1 (failed); undefined keeps the usual one. */
  exitCodeOf?: (result: R) => number | undefined,
): CliHandler {
  return {
    configure: (command) => addOperationOptions(command, operation as unknown as Operation),
    run: async ({ options, globals, ctx }) => {
      const input = operationInput(operation as unknown as Operation, options);
      let result: R;
      try {
        const env = cliEnvironment(ctx, globals);
        result =
          scope === undefined
            ? await runOperation(operation, input, env)
            : await scope(ctx, (extra) => runOperation(operation, input, { ...env, ...extra }));
      } catch (error) {
        if (isLoopxError(error, 'invalid_argument'))
          throw usageFromInvalidArgument(operation as unknown as Operation, error);
        if (operation.errorFields !== undefined && isLoopxError(error) && error.code !== 'usage')
          // A failed operation whose original prints more than `error` beside it (exit 1).
          throw new OperationFailure(error, operation.errorFields(input));
        throw error;
      }
      // Rendered only when printed as Markdown: `--format json` (e.g. status over many goals) need not build it.
      const exitCode = exitCodeOf?.(result);
      return {
        ok: result.ok,
        json: result as unknown as Record<string, unknown>,
        get markdown() {
          return render(result);
        },
        ...(exitCode === undefined ? {} : { exitCode }),
      };
    },
  };
}
