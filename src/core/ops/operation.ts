import type { z } from 'zod';
import type { Clock } from '../clock';
import type { CommandKey } from '../commands/catalog';
import { fileSystemErrorOf } from '../fs/fsErrors';
import type { TurnEventSink } from '../turn/events';
import type { ExecutorFactory } from '../turn/runOnce';

/**
 * The use-case layer. Every LoopX operation is declared once here: its arguments as a zod object
 * (each field `.describe()`d: the CLI's help, the palette's prompts and the library's argument
 * errors all come from it), the surface-neutral work it does, and, for operations that write after
 * a preview, which argument switches preview to apply. The CLI, the palette, tree and webview
 * actions, the chat participant, the library and the extension API all call operations through
 * `runOperation`; none of them reaches into the core another way.
 */

/** What an operation may read of the world it runs in, so every surface (and a test) can supply its own. */
export interface OperationEnvironment {
  /** Anchor for relative paths and for `./.loopx/registry.json`. */
  cwd: string;
  /** Where `LOOPX_REGISTRY`, `LOOPX_NOW` and the lock settings are read from (never `process.env` implicitly). */
  env: NodeJS.ProcessEnv;
  clock: Clock;
  /** What `~` in the registry stands for. */
  homeDir: string;
  /** An explicit registry file (the CLI's `--registry`, the editor's workspace registry). */
  registryPath?: string | undefined;
  /** An explicit runtime root that wins over the registry's `common_runtime_root`. */
  runtimeRootOverride?: string | undefined;
  /** Cancels long operations (turns, loops) between phases. */
  signal?: AbortSignal | undefined;
  /** Receives the progress of long operations (turns, loops) as typed events. */
  onEvent?: TurnEventSink | undefined;
  /**
   * How turns build their agents' executors (default: the presets LoopX runs as processes). The editor
   * passes one that also runs the `vscode-lm` preset on VS Code's language models.
   */
  executorFactory?: ExecutorFactory | undefined;
  /**
   * Who acts when a todo edit names no agent. `agent` (default: the CLI and the library, as in the
   * original): on a goal with several registered agents the lifecycle actor must be named
   * (`--agent-id`). `owner`: the editor, where the project's owner (a person) completes todos.
   */
  actingAs?: 'agent' | 'owner' | undefined;
}

/** Every operation answers with an object whose `ok` says whether it did what was asked. */
export interface OperationOutput {
  ok: boolean;
}

/** How an operation that previews before writing is switched to applying. */
export interface ApplySwitch<Args> {
  /** The boolean argument that selects apply (`execute`) or preview (`dryRun`). */
  argument: keyof Args & string;
  /** The value of that argument which applies the change. */
  applyWhen: boolean;
}

export interface Operation<Schema extends z.ZodObject = z.ZodObject, Output extends OperationOutput = OperationOutput> {
  /** The catalog row this operation implements (its CLI words, palette title, mutation policy). */
  readonly key: CommandKey;
  readonly args: Schema;
  /** Present exactly when the catalog says `writes_after_preview`. */
  readonly applySwitch?: ApplySwitch<z.output<Schema>>;
  run(args: z.output<Schema>, env: OperationEnvironment): Promise<Output>;
  /**
   * Fields the original prints beside `error` when this operation fails (e.g. `added: false` for
   * todo commands): the CLI's JSON failure carries them, built from the raw input.
   */
  errorFields?(input: Record<string, unknown>): Record<string, unknown>;
}

export type OperationArgs<O> = O extends Operation<infer S, OperationOutput> ? z.input<S> : never;
export type OperationResult<O> = O extends Operation<z.ZodObject, infer R> ? R : never;

/**
 * Declares an operation: infers the argument and result types and the literal catalog key (so
 * `OPERATIONS` in index.ts can check each entry sits under its own key), and maps a file-system
 * failure escaping `run` (ELOOP, EISDIR, ENOTDIR, EEXIST, EACCES, …) to one `file_system_error`
 * naming the path and the fix, for every surface at once.
 */
export function defineOperation<Schema extends z.ZodObject, Output extends OperationOutput, Key extends CommandKey>(
  operation: Operation<Schema, Output> & { readonly key: Key },
): Operation<Schema, Output> & { readonly key: Key } {
  const run = operation.run.bind(operation);
  return {
    ...operation,
    run: async (args, env) => {
      try {
        return await run(args, env);
      } catch (error) {
        throw fileSystemErrorOf(error);
      }
    },
  };
}
