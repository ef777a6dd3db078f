import { Command, CommanderError, Option } from 'commander';
import { cliCommands, type CliCommandKey, type CommandSpec } from '../core/commands/catalog';
import { errorMessage, isLoopxError, withReadOnlyHint } from '../core/errors';
import { LOOPX_VERSION } from '../core/version';
import { CLI_HANDLERS, type CliHandler } from './commands';
import type { CliContext, GlobalOptions, OutputFormat } from './context';
import { printOutput } from './output';
import { OperationFailure } from './operationFailure';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

const HELP_TOKENS = ['-h', '--help', 'help'];
const VERSION_TOKENS = ['-V', '--version'];

/**
 * The commands whose options an invocation can need: a command runs only when each of its words is
 * an argument (`quota should-run` needs `quota` and `should-run`), so those are the ones to load;
 * everything when help may be printed (the help of a group lists its commands' usage) or when no
 * command matched (then commander prints help or an unknown-command error) — unless only the
 * version is asked for. A superset is always safe: loading a command only costs time.
 */
export function commandsToLoad(argv: readonly string[], specs: readonly CommandSpec[]): CommandSpec[] {
  const tokens = new Set(argv);
  if (HELP_TOKENS.some((token) => tokens.has(token))) return [...specs];
  const matched = specs.filter((spec) => (spec.cli ?? '').split(' ').every((word) => tokens.has(word)));
  if (matched.length > 0 || VERSION_TOKENS.some((token) => tokens.has(token))) return matched;
  return [...specs];
}

/**
 * Builds the `loopx` program from the command catalog. Every command is listed; only the commands
 * `argv` can reach (all when `argv` is omitted) are loaded and given their arguments and options:
 * loading a command module builds its operation's schemas, which is most of a start-up.
 */
export async function buildProgram(
  ctx: CliContext,
  onExitCode: (code: number) => void,
  argv?: readonly string[],
): Promise<Command> {
  const program = new Command('loopx')
    .description('LoopX: a local control plane for long-running agent goals.')
    .version(`loopx ${LOOPX_VERSION}`, '-V, --version', 'print the LoopX version (as loopx version)')
    .addOption(new Option('--registry <path>', 'registry file (default: $LOOPX_REGISTRY, then ./.loopx/registry.json)'))
    .addOption(new Option('--runtime-root <path>', 'runtime root override (default: from the registry)'))
    .addOption(new Option('--format <format>', 'output format').choices(['json', 'markdown']).default('markdown'))
    .showHelpAfterError('(run `loopx --help` for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => ctx.stdout(s), writeErr: (s) => ctx.stderr(s) });

  const specs = cliCommands();
  const toLoad = argv === undefined ? specs : commandsToLoad(argv, specs);
  const loaded = new Map<string, CliHandler>(
    await Promise.all(toLoad.map(async (spec) => [spec.key, await CLI_HANDLERS[spec.key as CliCommandKey]()] as const)),
  );

  const parents = new Map<string, Command>();
  // A one-word command that is also the first word of others (`mcp` and `mcp install`) is one
  // commander command: its own action runs when no subcommand is named.
  const topLevel = new Map<string, Command>();
  for (const spec of specs) {
    const words = (spec.cli ?? '').split(' ');
    let parent = program;
    if (words.length === 2) {
      const parentName = words[0] ?? '';
      let group = parents.get(parentName) ?? topLevel.get(parentName);
      if (!group) {
        group = program
          .command(parentName)
          .description(`${parentName} commands`)
          .helpGroup(`${spec.group}:`)
          .exitOverride();
        parents.set(parentName, group);
      }
      parent = group;
    }
    const handler = loaded.get(spec.key);
    const name = words[words.length - 1] ?? '';
    const group = words.length === 1 ? parents.get(name) : undefined;
    if (group !== undefined) parents.delete(name);
    const command = (group ?? parent.command(name)).description(spec.intent).exitOverride();
    if (words.length === 1) {
      command.helpGroup(`${spec.group}:`);
      topLevel.set(name, command);
    }
    handler?.configure?.(command);
    command.action(async (...actionArgs: unknown[]) => {
      const self = actionArgs[actionArgs.length - 1] as Command;
      const globals = readGlobals(self);
      try {
        // Unreachable by commandsToLoad's rule (a command that runs had all its words in argv).
        if (handler === undefined)
          throw new Error(`internal error: \`loopx ${spec.cli ?? ''}\` ran without being loaded`);
        const output = await handler.run({ options: self.opts(), args: self.args, globals, ctx });
        if (output.quiet !== true) printOutput(ctx, globals.format, output);
        onExitCode(output.exitCode ?? (output.ok ? EXIT_OK : EXIT_FAILED));
      } catch (error) {
        reportError(ctx, globals.format, error);
        onExitCode(isLoopxError(error, 'usage') ? EXIT_USAGE : EXIT_FAILED);
      }
    });
  }
  for (const [name, group] of parents) {
    group.description(`${group.commands.map((c) => c.name()).join(', ')} (see loopx ${name} --help)`);
  }
  return program;
}

function readGlobals(command: Command): GlobalOptions {
  const all = command.optsWithGlobals<{ registry?: string; runtimeRoot?: string; format?: OutputFormat }>();
  const globals: GlobalOptions = { format: all.format ?? 'markdown' };
  if (all.registry !== undefined) globals.registry = all.registry;
  if (all.runtimeRoot !== undefined) globals.runtimeRoot = all.runtimeRoot;
  return globals;
}

function reportError(ctx: CliContext, format: OutputFormat, thrown: unknown): void {
  const error = withReadOnlyHint(thrown);
  const message = errorMessage(error);
  if (format === 'json') {
    // LoopX's contract: `error` is the text; the typed code and details ride alongside.
    const payload =
      error instanceof OperationFailure
        ? {
            ok: false,
            ...error.fields,
            error: message,
            error_code: error.failure.code,
            error_details: error.failure.details,
          }
        : isLoopxError(error)
          ? { ok: false, error: message, error_code: error.code, error_details: error.details }
          : { ok: false, error: message, error_code: 'internal_error', error_details: {} };
    ctx.stdout(`${JSON.stringify(payload, null, 2)}\n`);
  } else {
    ctx.stderr(`loopx: ${message}\n`);
  }
}

/**
 * Fails with commander's usage error (exit 2) when the command words name no command of ours,
 * whatever flags follow: commander itself prints the help for `loopx goal-lifecycle --help` and
 * exits 0 when it does not know `goal-lifecycle`, and a skill written for another `loopx` would take
 * that for success. The words are found as commander finds them: past the program's options (and
 * their values); an unknown option before them is left to commander's own error.
 */
function rejectUnknownCommand(program: Command, argv: readonly string[]): void {
  const takesValue = new Map<string, boolean>([
    ['-h', false],
    ['--help', false],
  ]);
  for (const option of program.options)
    for (const flag of [option.long, option.short])
      if (flag !== undefined) takesValue.set(flag, option.required || option.optional);
  let index = 0;
  for (; index < argv.length; index++) {
    const arg = argv[index] ?? '';
    if (arg === '--') return;
    if (!arg.startsWith('-') || arg === '-') break;
    const flag = arg.split('=')[0] ?? arg;
    if (!takesValue.has(flag)) return;
    if (takesValue.get(flag) === true && !arg.includes('=')) index++;
  }
  const word = argv[index];
  if (word === undefined) return;
  // `loopx help <command>`: the command asked about must exist too.
  const named = word === 'help' ? argv[index + 1] : word;
  if (named === undefined || named.startsWith('-')) return;
  const command = program.commands.find((candidate) => candidate.name() === named);
  if (command === undefined) program.error(`error: unknown command '${named}'`, { code: 'commander.unknownCommand' });
  // A group (`quota`, `todo`): its next word, when it is one, must be one of its commands.
  const sub = word === 'help' ? undefined : argv[index + 1];
  if (command.commands.length === 0 || sub === undefined || sub.startsWith('-') || sub === 'help') return;
  if (!command.commands.some((candidate) => candidate.name() === sub))
    command.error(`error: unknown command '${sub}'`, { code: 'commander.unknownCommand' });
}

/** Runs the CLI and resolves with the process exit code (0 ok, 1 failed operation, 2 usage error). */
export async function runCli(argv: readonly string[], ctx: CliContext): Promise<number> {
  let exitCode = EXIT_OK;
  const program = await buildProgram(
    ctx,
    (code) => {
      exitCode = code;
    },
    argv,
  );
  if (argv.length === 0) {
    program.outputHelp();
    return EXIT_USAGE;
  }
  try {
    rejectUnknownCommand(program, argv);
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help'
      )
        return EXIT_OK;
      return EXIT_USAGE;
    }
    reportError(ctx, 'markdown', error);
    return EXIT_FAILED;
  }
  return exitCode;
}
