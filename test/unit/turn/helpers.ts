import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fixedClock } from '../../../src/core/clock';
import { createAgentExecutor, type ExecutorConfig } from '../../../src/core/executors/config';
import type { AgentExecutor } from '../../../src/core/executors/types';
import { QUOTA_SLOT_SPENT } from '../../../src/core/quota/ledger';
import { readGoalRuns, type RunIndexEntry } from '../../../src/core/runtime/runIndex';
import type { GoalRef } from '../../../src/core/registry/goalRef';
import { goalRefOf } from '../../support/goalRef';
import type { RunOnceOptions } from '../../../src/core/turn/runOnce';
import { materializeDemoWorkspace, REPO_ROOT } from '../../support/demoWorkspace';
import { tempDir } from '../../support/tempDir';
export { removeTempDirs, tempDir } from '../../support/tempDir';

export const NOW = '2026-11-28T10:00:00Z';
export const clock = fixedClock(NOW);
export const AGENT = path.join(REPO_ROOT, 'test', 'unit', 'turn', 'fixtures', 'agent.js');
export const RUN_TURN = path.join(REPO_ROOT, 'test', 'unit', 'turn', 'fixtures', 'runTurn.ts');
export const TSX_URL = pathToFileURL(require.resolve('tsx')).href;
/** The demo agent run from source under tsx (the built CLI runs out/demoAgent.js). */
export const DEMO_AGENT_SOURCE_ARGV = [
  process.execPath,
  '--import',
  TSX_URL,
  path.join(REPO_ROOT, 'src', 'core', 'executors', 'demoAgentMain.ts'),
];

/** Builds executors with the demo agent run from source (what a host installs with `installDemoAgentFrom`). */
export const demoExecutorFactory = (config: ExecutorConfig): AgentExecutor =>
  createAgentExecutor(config, { demoAgentArgv: DEMO_AGENT_SOURCE_ARGV });

export interface Demo {
  workspace: string;
  registryPath: string;
  statePath: string;
  runtimeGoalDir: string;
}

/** A fresh copy of the demo workspace (goal `tidy-notes`, agents `demo` and `codex-main`). */
export function demo(edit?: (goal: Record<string, unknown>) => void): Demo {
  const workspace = materializeDemoWorkspace(path.join(tempDir(), 'workspace'));
  const registryPath = path.join(workspace, '.loopx', 'registry.json');
  if (edit !== undefined) {
    const registry = JSON.parse(fs.readFileSync(registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
    edit(registry.goals[0] as Record<string, unknown>);
    fs.writeFileSync(registryPath, JSON.stringify(registry, null, 2));
  }
  return {
    workspace,
    registryPath,
    statePath: path.join(workspace, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md'),
    runtimeGoalDir: path.join(workspace, '.loopx', 'runtime', 'goals', 'tidy-notes'),
  };
}

/** The goal as an operation's handle gives it to the turn driver (the registry read once, now). */
export function goalOf(registryPath: string, goalId = 'tidy-notes'): GoalRef {
  return goalRefOf({ registryPath, goalId });
}

/** Options for runOnce on the demo goal with the scripted fixture agent in `mode`. */
export function fixtureRun(d: Demo, mode: string, extra: Partial<RunOnceOptions> = {}): RunOnceOptions {
  return {
    goal: goalOf(d.registryPath),
    agentId: 'demo',
    clock,
    env: { PATH: process.env['PATH'] ?? '' },
    execute: true,
    hostAdapterCommand: [process.execPath, AGENT, mode],
    ...extra,
  };
}

export async function runRows(d: Demo): Promise<RunIndexEntry[]> {
  return (await readGoalRuns(path.join(d.workspace, '.loopx', 'runtime'), 'tidy-notes', { projectRoot: d.workspace }))
    .rows;
}

/** Spend rows written by our turns (the demo's history has one older spend, turn-0001). */
export async function newSpends(d: Demo): Promise<RunIndexEntry[]> {
  return (await runRows(d)).filter(
    (r) => r.classification === QUOTA_SLOT_SPENT && (r as Record<string, unknown>)['turn_instance_id'] !== 'turn-0001',
  );
}

export function reservations(d: Demo): unknown[] {
  const file = path.join(d.runtimeGoalDir, 'quota-reservations.json');
  if (!fs.existsSync(file)) return [];
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { reservations: unknown[] }).reservations;
}

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript script as a real node process (tsx loader), cwd the repository. */
export function runNodeScript(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  options: { timeoutMs?: number } = {},
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX_URL, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** runOnce (or runLoop) in a child process through test/unit/turn/fixtures/runTurn.ts. */
export function runTurnProcess(input: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Promise<ChildResult> {
  return runNodeScript([RUN_TURN, JSON.stringify({ goalId: 'tidy-notes', agentId: 'demo', now: NOW, ...input })], env);
}

export function lastJson(stdout: string): Record<string, unknown> {
  const line = stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(line) as Record<string, unknown>;
}
