/**
 * Builds a scenario: a fresh copy of the demo workspace whose registry gives one agent a real CLI
 * executor, a HOME of its own, fake keys, telemetry off, and the LoopX commands to run against the
 * scripted model server (see namespace.ts for where they run).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import type { ModelScript, ScriptedAnswer } from './modelServer';
import { runScenario } from './namespace';
import type { CommandReport, ScenarioCommand, ScenarioReport } from './scenarioRunner';

export const REPO_ROOT = resolve(__dirname, '..', '..', '..');
export const LOOPX_CLI = join(REPO_ROOT, 'out', 'cli.js');
const temps: string[] = [];

/** Variables that keep every CLI quiet: no telemetry, no update checks, no error reporting. */
export const QUIET_ENV: Record<string, string> = {
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  DISABLE_AUTOUPDATER: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
  CODEX_DISABLE_UPDATE_CHECK: '1',
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  NO_COLOR: '1',
};

export const FAKE_KEYS: Record<string, string> = {
  ANTHROPIC_API_KEY: 'sk-ant-scripted-test-key',
  OPENAI_API_KEY: 'sk-scripted-test-key',
};

export interface Workspace {
  root: string;
  project: string;
  home: string;
  registryPath: string;
  /** The state file of the demo goal. */
  statePath: string;
  runtimeGoalDir: string;
}

export function newWorkspace(agentId: string, executor: Record<string, unknown>): Workspace {
  const root = mkdtempSync(join(tmpdir(), 'loopx-agents-'));
  temps.push(root);
  const project = materializeDemoWorkspace(join(root, 'project'));
  const home = join(root, 'home');
  mkdirSync(home, { recursive: true });
  const registryPath = join(project, '.loopx', 'registry.json');
  const registry = JSON.parse(readFileSync(registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
  const goal = registry.goals[0] as Record<string, Record<string, unknown>>;
  const coordination = goal['coordination'] as Record<string, unknown>;
  coordination['registered_agents'] = [...(coordination['registered_agents'] as string[]), agentId];
  coordination['agent_profiles'] = {
    ...(coordination['agent_profiles'] as Record<string, unknown>),
    [agentId]: { executor },
  };
  writeFileSync(registryPath, `${JSON.stringify(registry, null, 2)}\n`);
  return {
    root,
    project,
    home,
    registryPath,
    statePath: join(project, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md'),
    runtimeGoalDir: join(project, '.loopx', 'runtime', 'goals', 'tidy-notes'),
  };
}

export function cleanWorkspaces(): void {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** The environment LoopX runs with: a small PATH (node first), the temp HOME, fake keys, telemetry off. */
export function loopxEnv(ws: Workspace, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: ws.home,
    LANG: 'C.UTF-8',
    ...QUIET_ENV,
    ...FAKE_KEYS,
    ...extra,
  };
}

export function runOnceCommand(
  ws: Workspace,
  agentId: string,
  options: {
    env?: Record<string, string>;
    extraArgs?: string[];
    timeoutMs?: number;
    kill?: ScenarioCommand['kill'];
  } = {},
): ScenarioCommand {
  return {
    argv: [
      process.execPath,
      LOOPX_CLI,
      'turn',
      'run-once',
      '--goal-id',
      'tidy-notes',
      '--agent-id',
      agentId,
      '--execute',
      '--format',
      'json',
      ...(options.extraArgs ?? []),
    ],
    cwd: ws.project,
    env: loopxEnv(ws, options.env),
    timeoutMs: options.timeoutMs ?? 120_000,
    ...(options.kill ? { kill: options.kill } : {}),
  };
}

export function loopxCommand(ws: Workspace, args: string[], env: Record<string, string> = {}): ScenarioCommand {
  return { argv: [process.execPath, LOOPX_CLI, ...args], cwd: ws.project, env: loopxEnv(ws, env), timeoutMs: 60_000 };
}

export async function scenario(
  script: ModelScript,
  commands: ScenarioCommand[],
  files: Record<string, string> = {},
): Promise<ScenarioReport> {
  return runScenario({ script, files, commands }, 10 * 60_000);
}

/** The JSON LoopX printed (run-once --format json), or a failure that shows what it printed instead. */
export function jsonOf(command: CommandReport | undefined): Record<string, unknown> {
  if (command === undefined) throw new Error('the command did not run');
  try {
    return JSON.parse(command.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(
      `LoopX printed no JSON (exit ${command.code}):\nstdout: ${command.stdout}\nstderr: ${command.stderr}`,
    );
  }
}

/** A result object in the shape LoopX's prompt asks for; the model server fills the turn key and todo id. */
export function resultObject(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema_version: 'loopx_turn_result_v0',
    turn_key: '{{TURN_KEY}}',
    result_kind: 'validated_completion',
    summary: 'Added notes/related.md linking the notes that share a tag.',
    classification: 'notes_linked',
    recommended_action: 'Write notes/index.md listing every note by tag.',
    delivery_batch_scale: 'single_surface',
    delivery_outcome: 'outcome_progress',
    next_action: 'Write notes/index.md listing every note by tag.',
    evidence: ['notes/related.md links the notes that share a tag'],
    todo: { todo_id: '{{TODO_ID}}', disposition: 'done', evidence: 'notes/related.md exists', no_follow_up: true },
    changed_files: ['notes/related.md'],
    ...overrides,
  };
}

export function finalText(result: Record<string, unknown> = resultObject()): string {
  return `Done.\n\n\`\`\`json\n${JSON.stringify(result, null, 2)}\n\`\`\``;
}

export const RELATED_NOTE =
  '# Related notes\n\n- [Bread](bread.md) and [Gardening](gardening.md) share the tag "home".\n';

/** Runs of the goal written by LoopX (index.jsonl rows). */
export function runRows(ws: Workspace): Record<string, unknown>[] {
  const text = readFileSync(join(ws.runtimeGoalDir, 'runs', 'index.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The kinds of the goal's rollout events (rollout-event-log.jsonl), in order. */
export function rolloutKinds(ws: Workspace): string[] {
  return readFileSync(join(ws.runtimeGoalDir, 'rollout-event-log.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => String((JSON.parse(line) as Record<string, unknown>)['event_kind']));
}

export function describeReport(report: ScenarioReport): string {
  const commands = report.commands
    .map((c, i) => {
      let brief = c.stdout.slice(0, 1500);
      try {
        const out = JSON.parse(c.stdout) as Record<string, unknown>;
        brief = JSON.stringify({
          status: out['status'],
          result_kind: out['result_kind'],
          message: out['message'],
          failure: out['failure'],
          usage: out['usage'],
        });
      } catch {
        // not JSON: show the start of it
      }
      return `command ${i}: exit ${c.code}\n  ${brief}\n  stderr: ${c.stderr.slice(-1500)}\n  survivors: ${JSON.stringify(c.survivors)}`;
    })
    .join('\n');
  const requests = report.requests
    .map((r) => `  ${r.method} ${r.path} model=${r.model} step=${r.step} answer=${r.answer} tools=${r.tools.length}`)
    .join('\n');
  return `${commands}\nrequests:\n${requests}\ntool results:\n${report.toolResults.map((t) => `  ${t.slice(0, 300)}`).join('\n')}`;
}

export function text(value: string): ScriptedAnswer {
  return { kind: 'text', text: value };
}
export function steps(...answers: ScriptedAnswer[]): ModelScript {
  return { steps: answers.map((a) => ({ attempts: [a] })) };
}

export async function quotaStatus(ws: Workspace): Promise<Record<string, unknown>> {
  const report = await scenario(steps(text('unused')), [
    loopxCommand(ws, ['quota', 'status', '--goal-id', 'tidy-notes', '--format', 'json']),
  ]);
  return jsonOf(report.commands[0]);
}

export function budgetUsed(status: Record<string, unknown>, name: 'max_tokens' | 'max_cost_usd'): number {
  return Number(((status['budgets'] as Record<string, Record<string, unknown>>)[name] ?? {})['used'] ?? 0);
}

/**
 * A `loopx` on the PATH the way a user has one installed: a launcher of the built CLI (absolute node, so a
 * login shell that resets PATH still runs it when called by its absolute path). Returns the PATH to use.
 */
export function withLoopxOnPath(ws: Workspace): string {
  const bin = join(ws.root, 'bin');
  mkdirSync(bin, { recursive: true });
  const launcher = join(bin, 'loopx');
  writeFileSync(launcher, `#!/bin/sh\nexec ${process.execPath} ${LOOPX_CLI} "$@"\n`, { mode: 0o755 });
  return `${bin}:${loopxEnv(ws)['PATH']}`;
}

/** What the installed prompts tell an agent to run: LoopX's CLI as `"${LOOPX_CLI:-loopx}"`. */
export const LOOPX_QUOTA_STATUS = '"${LOOPX_CLI:-loopx}" quota status --goal-id tidy-notes --format json';

/** An agent CLI started by the user (not by LoopX): argv as given, in the project, with LoopX's environment. */
export function agentCommand(ws: Workspace, argv: string[], env: Record<string, string> = {}): ScenarioCommand {
  return { argv, cwd: ws.project, env: loopxEnv(ws, env), timeoutMs: 180_000 };
}

/** A fixed heartbeat turn id, written into every command as the installed heartbeat prompt says. */
export const HEARTBEAT_TURN = '2026-12-03T06:00:00Z';

/**
 * The commands of one heartbeat turn as the installed `/loopx-heartbeat` prompt lists them, filled in for the
 * demo goal, `agentId` and its todo: should-run, (the work), refresh-state, spend-slot twice (a retry of the
 * same trigger replays), then todo complete.
 */
export function heartbeatCommands(agentId: string): {
  shouldRun: string;
  refresh: string;
  spend: string;
  complete: string;
} {
  const cli = '"${LOOPX_CLI:-loopx}"';
  const ids = `--goal-id tidy-notes --turn-instance-id ${HEARTBEAT_TURN} --agent-id ${agentId}`;
  return {
    shouldRun: `${cli} quota should-run ${ids} --format json`,
    refresh: `${cli} refresh-state ${ids} --classification notes_linked --delivery-batch-scale single_surface --delivery-outcome outcome_progress --format json`,
    spend: `${cli} quota spend-slot ${ids} --slots 1 --source heartbeat --execute --cost-usd 0.01 --tokens 3300 --format json`,
    complete: `${cli} todo complete ${ids} --todo-id todo_related --evidence "notes/related.md links the notes" --no-follow-up --format json`,
  };
}

/**
 * Prints the control-plane overhead of a committed turn: `loopx turn run-once`'s wall time less the agent's own
 * run (the turn's `usage.minutes`, LoopX's measure of the agent process). It covers the CLI's Node start, planning,
 * the reservation, the validation command, write-back and settlement. A figure for docs/agents-conformance.md,
 * never an assertion (speed goes to benchmarks).
 */
export function logOverhead(label: string, command: CommandReport | undefined): void {
  if (command === undefined) return;
  const usage = (jsonOf(command)['usage'] ?? {}) as Record<string, unknown>;
  const agentMs = Math.round(Number(usage['minutes'] ?? NaN) * 60_000);
  if (!Number.isFinite(agentMs)) return;
  console.log(
    `      [overhead] ${label}: run-once ${command.durationMs} ms, agent ${agentMs} ms, LoopX ${command.durationMs - agentMs} ms`,
  );
}
