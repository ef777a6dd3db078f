import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RefreshStateRequest } from '../../../src/core/refresh/refreshState';

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
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-refresh-')));
  const relativeState = path.join('.codex', 'goals', goalId, 'ACTIVE_GOAL_STATE.md');
  const statePath = path.join(dir, relativeState);
  fs.mkdirSync(path.dirname(statePath), { recursive: true });
  fs.writeFileSync(statePath, state);
  const goal: Record<string, unknown> = {
    id: goalId,
    domain: 'd',
    status: 'active',
    repo: dir,
    state_file: relativeState,
    adapter: { kind: 'fixture' },
  };
  if (options.agents) goal['coordination'] = { agent_model: 'peer_v1', registered_agents: options.agents };
  const registryPath = path.join(dir, '.loopx', 'registry.json');
  fs.mkdirSync(path.dirname(registryPath), { recursive: true });
  fs.writeFileSync(
    registryPath,
    JSON.stringify({ schema_version: '0.1', common_runtime_root: '.loopx/runtime', goals: [goal] }, null, 2),
  );
  const runtimeRoot = path.join(dir, '.loopx', 'runtime');
  const indexPath = path.join(runtimeRoot, 'goals', goalId, 'runs', 'index.jsonl');
  return {
    dir,
    registryPath,
    statePath,
    runtimeRoot,
    indexPath,
    request: (fields = {}) => ({ registryPath, goalId, classification: 'state_refreshed', homeDir: dir, ...fields }),
    readState: () => fs.readFileSync(statePath, 'utf8'),
    indexRows: () =>
      fs.existsSync(indexPath)
        ? fs
            .readFileSync(indexPath, 'utf8')
            .trim()
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as Record<string, unknown>)
        : [],
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
