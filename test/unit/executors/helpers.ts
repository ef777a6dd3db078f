import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fixedClock } from '../../../src/core/clock';
import { settlementIdentity } from '../../../src/core/quota/identity';
import { readQuotaConfig } from '../../../src/core/quota/config';
import { computeLedger } from '../../../src/core/quota/ledger';
import { registryProjectRoot, resolveRuntimeRoot, resolveStateFile } from '../../../src/core/registry/locate';
import { findRawRegistryGoal, readRegistrySync } from '../../../src/core/registry/read';
import { readGoalRuns } from '../../../src/core/runtime/runIndex';
import { parseStateDocument } from '../../../src/core/state/document';
import { buildHostRequest, type HostRequest } from '../../../src/core/protocol/contract';
import { budgetBrief, buildTurnBrief } from '../../../src/core/protocol/prompt';
import { materializeDemoWorkspace, REPO_ROOT } from '../../support/demoWorkspace';
import { tempDir } from '../../support/tempDir';
export { tempDir } from '../../support/tempDir';

export const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'executors');
export const SCRIPTED_AGENT = path.join(FIXTURES, 'agents', 'scripted-agent.js');
export const NOW = '2026-11-28T10:00:00Z';
/** The demo agent run from source: its entry script under tsx (a build runs out/demoAgent.js instead). */
export const DEMO_AGENT_SOURCE_ARGV = [
  process.execPath,
  '--import',
  pathToFileURL(require.resolve('tsx')).href,
  path.join(REPO_ROOT, 'src', 'core', 'executors', 'demoAgentMain.ts'),
];

export function demoWorkspace(): string {
  return materializeDemoWorkspace(path.join(tempDir('loopx-demo-'), 'workspace'));
}

export interface RequestOptions {
  agentId?: string;
  todoId?: string | null;
  turnKey?: string;
  turnInstanceId?: string;
}

/** A host request for the demo goal, gathered from the workspace's real files. */
export async function demoRequest(workspace: string, options: RequestOptions = {}): Promise<HostRequest> {
  const agentId = options.agentId ?? 'demo';
  const registryPath = path.join(workspace, '.loopx', 'registry.json');
  const registry = readRegistrySync(registryPath);
  const goal = findRawRegistryGoal(registry, 'tidy-notes');
  if (goal === undefined) throw new Error('demo goal missing');
  const doc = parseStateDocument(fs.readFileSync(resolveStateFile(goal, os.homedir()) ?? '', 'utf8'));
  const projectRoot = registryProjectRoot(registryPath);
  const runtimeRoot = resolveRuntimeRoot({ registryPath, registry, homeDir: os.homedir() });
  const runs = (await readGoalRuns(runtimeRoot, 'tidy-notes', { projectRoot })).rows;
  const quota = readQuotaConfig(goal);
  const ledger = computeLedger({
    rows: runs,
    projectRoot,
    windowHours: quota.slots.window_hours,
    clock: fixedClock(NOW),
  });
  const todoId = options.todoId === undefined ? 'todo_related' : options.todoId;
  const brief = buildTurnBrief({
    goal,
    agentId,
    doc,
    runs,
    selectedTodoId: todoId,
    budget: budgetBrief(quota, ledger, { turnTimeoutMinutes: 2 }),
  });
  const turnInstanceId = options.turnInstanceId ?? 'turn-0002';
  return buildHostRequest({
    brief,
    turnKey: options.turnKey ?? `sha256:${'0'.repeat(63)}1`,
    route: 'ready_for_host',
    identity: settlementIdentity({ goalId: 'tidy-notes', agentId, todoId, turnInstanceId }),
  });
}

/** A folder holding `name` as an executable copy of the fake tool, to put first on PATH. */
export function fakeToolBin(name: string): string {
  const dir = tempDir('loopx-bin-');
  const target = path.join(dir, name);
  fs.copyFileSync(path.join(FIXTURES, 'bin', 'fake-tool.js'), target);
  fs.chmodSync(target, 0o755);
  return dir;
}

/** True while the process exists and is not a zombie waiting to be reaped. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

export function runOptions(
  cwd: string,
  env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '', HOME: os.homedir() },
  timeoutMs = 20_000,
): {
  signal: AbortSignal;
  timeoutMs: number;
  cwd: string;
  env: NodeJS.ProcessEnv;
} {
  return { signal: new AbortController().signal, timeoutMs, cwd, env };
}
