import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** What one run of the built CLI printed and how it exited. */
export interface BuiltCliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built `loopx` CLI (`out/cli.js`) in another process, as an agent or a script runs it beside the
 * editor. `ELECTRON_RUN_AS_NODE` lets the extension host's Electron binary (its `process.execPath`) run it as Node.
 */
export function runBuiltCli(
  cliJs: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): BuiltCliRun {
  const run = spawnSync(process.execPath, [cliJs, ...args], {
    cwd: options.cwd,
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', ...options.env },
    encoding: 'utf8',
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** `loopx <args> --format json`: asserts it exits 0 (the message names the command and its output) and parses it. */
export function builtCliJson(
  cliJs: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Record<string, unknown> {
  const run = runBuiltCli(cliJs, [...args, '--format', 'json'], options);
  assert.equal(run.status, 0, `loopx ${args.join(' ')}: ${run.stdout}\n${run.stderr}`);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

/**
 * The path of a file the build writes under `out/` (`npm run build`), asserted to exist: a test of the built
 * bundle fails with what to run, never passes by having nothing to test.
 */
export function builtFile(...parts: string[]): string {
  const file = path.join(process.cwd(), 'out', ...parts);
  assert.ok(
    fs.existsSync(file),
    `${file} is missing: run \`npm run build\` first (npm test builds before the unit tier)`,
  );
  return file;
}
