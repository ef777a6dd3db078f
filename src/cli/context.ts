import * as os from 'node:os';
import type { Clock } from '../core/clock';

export type OutputFormat = 'json' | 'markdown';

/** Options every command accepts, before or after the command words (as in LoopX). */
export interface GlobalOptions {
  registry?: string;
  runtimeRoot?: string;
  format: OutputFormat;
}

/** Everything a CLI command may touch of the outside world, so tests can run it in-process. */
export interface CliContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** What a command returns: the JSON object for `--format json`, the Markdown for people. */
export interface CommandOutput {
  ok: boolean;
  json: Record<string, unknown>;
  markdown: string;
  /** The exit code when it is not the usual one (0 when ok, 1 when not), e.g. 2 for the original's usage-error payloads. */
  exitCode?: number;
  /** Print nothing: stdout carried a protocol (`loopx mcp`) that has ended. */
  quiet?: boolean;
}

/** The user's home directory as this invocation sees it: `HOME` of the CLI's env, else the OS's. */
export function cliHomeDir(ctx: CliContext): string {
  const home = ctx.env['HOME'];
  return home !== undefined && home !== '' ? home : os.homedir();
}
