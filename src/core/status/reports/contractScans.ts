import { buildPrivacyReport } from '../../privacy/classify';
import { probeGit, type GitProbe } from '../../privacy/gitProbe';
import type { GoalStatusItem } from '../goalStatus';

/**
 * The scans the original's contract check (loopx/contract.py `check_contract`) runs besides ours, for the status
 * payload's `contract.checks`:
 * - **registry boundary** (`inspect_registry_boundary`): the registry's classification (privacy/classify.ts, the
 *   same table) and git's view of the file. No blocking risk: the check `registry boundary: <classification>
 *   push_allowed=<True|False> tracked=<…> ignored=<…>`, and the warning `registry should be gitignored: <path>` when
 *   it should be, sits in a git worktree and is neither ignored nor tracked. A blocking risk (private markers in a
 *   public registry; a tracked registry that may not be pushed): each of its risks an error `registry boundary risk:
 *   <code>`.
 * - **user-gate scopes** (`_active_state_todo_contract_diagnostics`'s count): `user-gate scopes checked: <n> open
 *   multi-agent gates`, n = the open (not done, not deferred) user todos of the checked goals, when n > 0.
 * - **public boundary**: the original scans its scan roots (by default its own installed package) for leaks on
 *   every status; ours defers it, as the original's status hot path does: `public boundary scan deferred for status
 *   hot path`.
 */

export interface BoundaryFindings {
  check: string | null;
  warnings: string[];
  errors: string[];
}

function py(value: boolean): string {
  return value ? 'True' : 'False';
}

/** The registry-boundary findings of a registry document read from `registryPath`, with git's view of it. */
export function registryBoundaryFindings(
  registryPath: string,
  document: Record<string, unknown>,
  git: GitProbe,
): BoundaryFindings {
  const report = buildPrivacyReport(registryPath, document, git, {
    requireGitignored: false,
    requireNotTracked: false,
  });
  if (!report.ok)
    return { check: null, warnings: [], errors: report.risks.map((r) => `registry boundary risk: ${r.code}`) };
  const warnings =
    report.should_be_gitignored && git.inside_worktree && !git.ignored && !git.tracked
      ? [`registry should be gitignored: ${registryPath}`]
      : [];
  return {
    check:
      `registry boundary: ${report.classification} push_allowed=${py(report.github_push_allowed)} ` +
      `tracked=${py(git.tracked)} ignored=${py(git.ignored)}`,
    warnings,
    errors: [],
  };
}

/** Git's view of the registry file (started early: its processes run while the goals load). */
export function probeRegistryGit(registryPath: string): Promise<GitProbe> {
  return probeGit(registryPath);
}

/** The user-gate scopes check, or null when no open user todo was checked. */
export function userGateScopesCheck(items: readonly Pick<GoalStatusItem, 'user_todos'>[]): string | null {
  let open = 0;
  for (const item of items) {
    const todos = item.user_todos;
    if (todos !== null && todos !== undefined) open += todos.total_count - todos.done_count;
  }
  return open > 0 ? `user-gate scopes checked: ${open} open multi-agent gates` : null;
}

export const PUBLIC_BOUNDARY_SCAN_DEFERRED = 'public boundary scan deferred for status hot path';
