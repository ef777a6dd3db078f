/**
 * How the prompts LoopX writes for agents (the installed `/loopx` commands and skill, the heartbeat
 * steps) run its CLI: `"${LOOPX_CLI:-loopx}"`. LoopX for VS Code sets `LOOPX_CLI` in every integrated
 * terminal to its own CLI, while the `loopx` on the PATH may be another LoopX (the Python one, whose
 * commands differ, stays first there by default); where the variable is unset the command is the
 * `loopx` on the PATH. POSIX shell syntax: what Claude Code, Codex and opencode run commands in.
 */
export const LOOPX_CLI_COMMAND = '"${LOOPX_CLI:-loopx}"';

/** `loopx status` → `"${LOOPX_CLI:-loopx}" status`, and each `&& loopx …` of a chain likewise. */
export function viaLoopxCli(commandLine: string): string {
  return commandLine.replace(/(^|&&\s*)loopx(?= )/g, (_, before: string) => `${before}${LOOPX_CLI_COMMAND}`);
}

/** The sentence a prompt says it with. */
export const LOOPX_CLI_NOTE =
  "Run LoopX's CLI as written, `" +
  LOOPX_CLI_COMMAND +
  "`: in VS Code's terminals `LOOPX_CLI` is LoopX for VS Code's CLI; elsewhere it is unset and the `loopx` on the PATH runs.";
