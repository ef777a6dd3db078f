import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock, type Clock } from '../../../src/core/clock';
import { loadQuotaGoal, type QuotaGoal } from '../../../src/core/quota/goal';
import { settlementIdentity, type SettlementIdentity } from '../../../src/core/quota/identity';
import { appendRun } from '../../../src/core/runtime/runIndex';

export const NOW = '2026-01-15T10:00:00Z';
export const clockAt = (iso: string = NOW): Clock => fixedClock(iso);
/** `hours` before {@link NOW} (negative: after). */
export function hoursBefore(hours: number, from: string = NOW): Date {
  return new Date(new Date(from).getTime() - hours * 3_600_000);
}

export const DEFAULT_STATE = [
  '---',
  'status: active',
  '---',
  '# Goal',
  '',
  '## User Todo',
  '',
  '## Agent Todo',
  '- [ ] [P1] Write the parser.',
  '  <!-- loopx:todo todo_id=todo_parser status=open task_class=advancement_task -->',
  '',
].join('\n');

export interface Workspace {
  dir: string;
  registryPath: string;
  runtimeRoot: string;
  statePath: string;
  goalId: string;
}

/** A project with `.loopx/registry.json` holding one goal (overrides merged in) and its state file. */
export function makeWorkspace(
  goal: Record<string, unknown> = {},
  stateText: string | null = DEFAULT_STATE,
  goalId = 'g',
): Workspace {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-quota-'));
  const statePath = path.join(dir, '.codex', 'goals', goalId, 'ACTIVE_GOAL_STATE.md');
  if (stateText !== null) {
    fs.mkdirSync(path.dirname(statePath), { recursive: true });
    fs.writeFileSync(statePath, stateText);
  }
  const entry = {
    id: goalId,
    status: 'active',
    repo: dir,
    state_file: `.codex/goals/${goalId}/ACTIVE_GOAL_STATE.md`,
    // As `loopx connect` writes it: a connected adapter makes a goal without runs wait on the agents.
    adapter: { kind: 'generic_project_goal_v0', status: 'connected' },
    coordination: { agent_model: 'peer_v1', registered_agents: ['agent-a', 'agent-b'] },
    ...goal,
  };
  const registryPath = path.join(dir, '.loopx', 'registry.json');
  fs.mkdirSync(path.dirname(registryPath), { recursive: true });
  fs.writeFileSync(
    registryPath,
    JSON.stringify({ schema_version: '0.1', common_runtime_root: '.loopx/runtime', goals: [entry] }, null, 2),
  );
  return { dir, registryPath, runtimeRoot: path.join(dir, '.loopx', 'runtime'), statePath, goalId };
}

export function loadGoal(ws: Workspace): Promise<QuotaGoal> {
  return loadQuotaGoal({ registryPath: ws.registryPath, goalId: ws.goalId, homeDir: ws.dir });
}

export function identityFor(
  ws: Workspace,
  agentId: string,
  turn: string,
  todoId: string | null = 'todo_parser',
): SettlementIdentity {
  return settlementIdentity({ goalId: ws.goalId, agentId, turnInstanceId: turn, todoId });
}

/** Appends one run row (with extra index fields) at `at`, as another writer would. */
export async function addRun(
  ws: Workspace,
  at: Date,
  record: Record<string, unknown>,
  indexFields: Record<string, unknown> = {},
): Promise<void> {
  await appendRun({
    runtimeRoot: ws.runtimeRoot,
    goalId: ws.goalId,
    clock: fixedClock(at),
    projectRoot: ws.dir,
    record: { recommended_action: '', health_check: 'test', ...record },
    indexFields: { ...indexFields, ...pick(record, ['delivery_outcome', 'turn_instance_id', 'settlement_identity']) },
    markdown: '# run\n',
  });
}

function pick(record: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => record[k] !== undefined).map((k) => [k, record[k]]));
}

/** The goal's index rows; reservation holds (and their releases) only with `holds: true`. */
export function readIndexRows(ws: Workspace, options: { holds?: boolean } = {}): Record<string, unknown>[] {
  const file = path.join(ws.runtimeRoot, 'goals', ws.goalId, 'runs', 'index.jsonl');
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((row) => options.holds === true || row['reservation_hold'] !== true);
}
