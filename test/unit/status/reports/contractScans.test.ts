import assert from 'node:assert/strict';
import * as path from 'node:path';
import { registryBoundaryFindings, userGateScopesCheck } from '../../../../src/core/status/reports/contractScans';
import type { GitProbe } from '../../../../src/core/privacy/gitProbe';

/** The original's registry-boundary and user-gate scope checks in the status contract (contract.py `check_contract`). */

const OUTSIDE: GitProbe = {
  available: false,
  probe_status: 'git_unavailable',
  inside_worktree: false,
  tracked: false,
  ignored: false,
};
const git = (fields: Partial<GitProbe>): GitProbe => ({
  ...OUTSIDE,
  available: true,
  probe_status: 'ok',
  inside_worktree: true,
  ...fields,
});
const PROJECT = path.join(path.sep, 'work', 'p', '.loopx', 'registry.json');

describe('status contract: the original scans', () => {
  it('registry boundary: a check with its classification and git view; a warning when it should be ignored', () => {
    assert.deepEqual(registryBoundaryFindings(PROJECT, { goals: [] }, OUTSIDE), {
      check: 'registry boundary: project_local_private_registry push_allowed=False tracked=False ignored=False',
      warnings: [],
      errors: [],
    });
    assert.deepEqual(registryBoundaryFindings(PROJECT, { goals: [] }, git({})).warnings, [
      `registry should be gitignored: ${PROJECT}`,
    ]);
    assert.deepEqual(
      registryBoundaryFindings(PROJECT, { goals: [] }, git({ ignored: true })).check,
      'registry boundary: project_local_private_registry push_allowed=False tracked=False ignored=True',
    );
  });

  it('registry boundary: a tracked private registry fails with each of its risks', () => {
    assert.deepEqual(registryBoundaryFindings(PROJECT, { goals: [] }, git({ tracked: true })), {
      check: null,
      warnings: [],
      errors: ['registry boundary risk: registry_tracked_but_not_push_allowed'],
    });
  });

  it('user-gate scopes: the open user todos of the goals checked, when any', () => {
    const summary = (total: number, done: number) =>
      ({ user_todos: { total_count: total, done_count: done } }) as never;
    assert.equal(
      userGateScopesCheck([summary(3, 1), summary(1, 0), { user_todos: null } as never]),
      'user-gate scopes checked: 3 open multi-agent gates',
    );
    assert.equal(userGateScopesCheck([summary(2, 2)]), null);
  });
});
