import * as fs from 'node:fs';
import * as path from 'node:path';
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
    request: (fields = {}) => ({ registryPath, goalId, classification: 'state_refreshed', homeDir: dir, ...fields }),
    readState: () => fs.readFileSync(statePath, 'utf8'),
    indexRows: () => readRunIndexRows(indexPath),
  };
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
