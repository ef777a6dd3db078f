import { fixedClock } from '../../../src/core/clock';
import { runCli } from '../../../src/cli/program';
import { sourceDemoAgentArgv } from '../../../src/cli/demoAgentSource';
import { installDemoAgent } from '../../../src/core/executors/config';

// This harness is the in-process CLI's composition root (src/cli/main.ts is the real one).
installDemoAgent(sourceDemoAgentArgv());

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  json: () => Record<string, unknown>;
  /** The failure of a `--format json` run: LoopX's `error` text with our typed code and details beside it. */
  error: () => CliError;
}

export interface CliError {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/** Runs the CLI in-process with captured output. */
export async function runLoopx(
  argv: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; now?: string } = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    cwd: options.cwd ?? process.cwd(),
    env: options.env ?? {},
    clock: fixedClock(options.now ?? '2026-01-15T10:00:00Z'),
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
  });
  const json = (): Record<string, unknown> => JSON.parse(stdout) as Record<string, unknown>;
  const error = (): CliError => {
    const body = json();
    return {
      code: String(body['error_code']),
      message: String(body['error']),
      details: (body['error_details'] ?? {}) as Record<string, unknown>,
    };
  };
  return { code, stdout, stderr, json, error };
}
