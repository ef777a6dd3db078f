import * as path from 'node:path';
import { fixedClock, type Clock } from '../../../src/core/clock';
import type { GoalRef } from '../../../src/core/registry/goalRef';
import { loadGoalRef } from '../../support/goalRef';
import { settlementIdentity, type SettlementIdentity } from '../../../src/core/quota/identity';
import {
  appendRunRow,
  readRunIndexRows,
  registryGoal,
  runIndexPathOf,
  stateFileOf,
  writeRegistry,
  writeStateFile,
} from '../../support/fixtureBuilders';
import { tempDir } from '../../support/tempDir';

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
  const dir = tempDir('loopx-quota-');
  if (stateText !== null) writeStateFile(dir, goalId, stateText);
  const registryPath = writeRegistry(dir, [
    registryGoal(dir, goalId, {
      // As `loopx connect` writes it: a connected adapter makes a goal without runs wait on the agents.
      adapter: { kind: 'generic_project_goal_v0', status: 'connected' },
      coordination: { agent_model: 'peer_v1', registered_agents: ['agent-a', 'agent-b'] },
      ...goal,
    }),
  ]);
  return {
    dir,
    registryPath,
    runtimeRoot: path.join(dir, '.loopx', 'runtime'),
    statePath: path.join(dir, stateFileOf(goalId)),
    goalId,
  };
}

export function loadGoal(ws: Workspace): Promise<GoalRef> {
  return loadGoalRef({ registryPath: ws.registryPath, goalId: ws.goalId, homeDir: ws.dir });
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
  await appendRunRow({ runtimeRoot: ws.runtimeRoot, goalId: ws.goalId, projectRoot: ws.dir, at, record, indexFields });
}

/** The goal's index rows; reservation holds (and their releases) only with `holds: true`. */
export function readIndexRows(ws: Workspace, options: { holds?: boolean } = {}): Record<string, unknown>[] {
  return readRunIndexRows(runIndexPathOf(ws.runtimeRoot, ws.goalId)).filter(
    (row) => options.holds === true || row['reservation_hold'] !== true,
  );
}
