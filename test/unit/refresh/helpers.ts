import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { resolveGoal, type ResolvedGoal } from '../../../src/core/ops/goalHandle';
import type { RefreshStateRequest } from '../../../src/core/refresh/refreshState';
import {
  readRunIndexRows,
  registryGoal,
  runIndexPathOf,
  writeRegistry,
  writeStateFile,
} from '../../support/fixtureBuilders';
import { tempDir } from '../../support/tempDir';

export const REPO = path.resolve(__dirname, '..', '..', '..');

export interface RefreshProject {
  dir: string;
  registryPath: string;
  statePath: string;
  runtimeRoot: string;
  indexPath: string;
  /** The goal as the refresh-state operation resolves it (the registry read now). */
  goal: () => Promise<ResolvedGoal>;
  request: (fields?: Partial<RefreshStateRequest>) => RefreshStateRequest;
  readState: () => string;
  indexRows: () => Record<string, unknown>[];
}

/** A project with one goal `g1`, its state file and (optionally) registered agents. */
export function refreshProject(state: string, options: { agents?: string[]; goalId?: string } = {}): RefreshProject {
  const goalId = options.goalId ?? 'g1';
  const dir = tempDir('loopx-refresh-');
  const statePath = writeStateFile(dir, goalId, state);
  const registryPath = writeRegistry(dir, [
    registryGoal(dir, goalId, {
      domain: 'd',
      adapter: { kind: 'fixture' },
      ...(options.agents ? { coordination: { agent_model: 'peer_v1', registered_agents: options.agents } } : {}),
    }),
  ]);
  const runtimeRoot = path.join(dir, '.loopx', 'runtime');
  const indexPath = runIndexPathOf(runtimeRoot, goalId);
  return {
    dir,
    registryPath,
    statePath,
    runtimeRoot,
    indexPath,
    goal: () => goalOfRegistry(registryPath, dir, goalId),
    request: (fields = {}) => ({ classification: 'state_refreshed', ...fields }),
    readState: () => fs.readFileSync(statePath, 'utf8'),
    indexRows: () => readRunIndexRows(indexPath),
  };
}

/** `goalId` of the registry at `registryPath` as the operations resolve it (`resolveGoal`), `homeDir` its home. */
export function goalOfRegistry(registryPath: string, homeDir: string, goalId = 'g1'): Promise<ResolvedGoal> {
  return resolveGoal(
    { cwd: homeDir, env: {}, clock: fixedClock('2026-07-01T00:00:00Z'), homeDir, registryPath },
    goalId,
  );
}

export const BASIC_STATE = [
  '---',
  'status: active',
  'updated_at: 2026-07-01T00:00:00+00:00',
  '---',
  '## Agent Todo',
  '- [ ] [P1] Validate the primary lane.',
  '  <!-- loopx:todo todo_id=todo_primary status=open task_class=advancement_task -->',
  '## Next Action',
  '- old',
  '## Recent User Feedback',
  '- fb1',
  '## Progress Ledger',
  '- Fixture initialized.',
  '',
].join('\n');
