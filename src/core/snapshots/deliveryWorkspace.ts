import * as path from 'node:path';
import { git } from './gitSnapshot';

/**
 * Settlement evidence the original accepts (issue 30, docs/compatibility.md#mixed-teams). The original's `quota
 * spend-slot` of a turn asks whether the turn's todo makes a repository workspace causal (its *delivery workspace
 * causality*, `loopx/control_plane/quota/settlement_workspace_causality.ts`): a todo that declares a
 * `task_repository`, `required_write_scopes` or the `filesystem_write` capability requires it, one whose
 * `continuation_policy` is `same_agent_non_delivery` does not, any other is unknown. Unless it is not required, the
 * spend needs the accountable writeback row to carry a **delivery workspace snapshot** (`delivery_workspace`, taken
 * by `refresh-state` in the git checkout that produced the delivery, `workspace_guard.capture_delivery_workspace`):
 * without one it refuses ("quota spend requires a valid delivery workspace snapshot"). The snapshot names the
 * checkout's `origin` as a credential-free identity (`git:<host>/<path>`), so a checkout without an origin gets
 * none, and then the original refuses to spend its own turns too.
 */

export const DELIVERY_WORKSPACE_SCHEMA_VERSION = 'delivery_workspace_v0';
export const DELIVERY_WORKSPACE_CAUSALITY_SCHEMA_VERSION = 'delivery_workspace_causality_v0';

export type DeliveryWorkspaceRequirement = 'required' | 'not_required' | 'unknown';

export interface DeliveryWorkspaceCausality {
  schema_version: typeof DELIVERY_WORKSPACE_CAUSALITY_SCHEMA_VERSION;
  todo_id: string;
  requirement: DeliveryWorkspaceRequirement;
  source: string;
  reason: string;
}

export interface DeliveryWorkspace {
  schema_version: typeof DELIVERY_WORKSPACE_SCHEMA_VERSION;
  task_repository: string;
  repository_source: 'current_git_origin';
  workspace_kind: 'canonical_checkout' | 'independent_git_worktree';
  peer_independent_worktree_required: boolean;
}

const WRITE_SCOPE_MAX_CHARS = 160;
const CAPABILITY_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

function listOf(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(/[,;|]/)
    .map((item) => item.replace(/\s+/g, ' ').trim())
    .filter((item) => item !== '');
}

/** The original's `normalize_required_write_scopes`: public-safe relative scope tokens only. */
export function requiredWriteScopes(value: string | undefined): string[] {
  const scopes = listOf(value).filter(
    (scope) =>
      scope.length <= WRITE_SCOPE_MAX_CHARS &&
      !scope.startsWith('/') &&
      !scope.startsWith('~') &&
      !scope.split('/').includes('..') &&
      !/[\s<>]/.test(scope),
  );
  return [...new Set(scopes)];
}

function requiredCapabilities(value: string | undefined): string[] {
  return listOf(value)
    .map((c) => c.toLowerCase().replace(/-/g, '_').replace(/ /g, '_'))
    .filter((c) => CAPABILITY_PATTERN.test(c));
}

/**
 * The original's `normalize_repository_identity`: a credential-free `git:<host>/<path>` for the common git transports
 * (https, http, ssh, git, scp-like `user@host:path`), `.git` dropped, default ports dropped; null when not one.
 */
export function repositoryIdentity(remote: string | null | undefined): string | null {
  let raw = (remote ?? '').trim();
  if (raw === '') return null;
  const canonical = /^git:([a-z0-9.-]+(?::[0-9]{1,5})?)\/([A-Za-z0-9._~+/-]+)$/.exec(raw);
  if (canonical !== null) {
    const repoPath = repositoryPath(canonical[2] ?? '');
    return repoPath === null ? null : `git:${(canonical[1] ?? '').toLowerCase()}/${repoPath}`;
  }
  const scp = /^(?:[^@/]+@)?([^:/]+):(.+)$/.exec(raw);
  if (scp !== null && !raw.includes('://')) raw = `ssh://${scp[1] ?? ''}/${scp[2] ?? ''}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  const scheme = url.protocol.replace(/:$/, '');
  if (!['git', 'http', 'https', 'ssh'].includes(scheme) || url.hostname === '' || url.password !== '') return null;
  if (url.search !== '' || url.hash !== '' || raw.endsWith('?') || raw.endsWith('#')) return null;
  let host = url.hostname.toLowerCase();
  // URL drops a scheme's default port (443 for https, 80 for http); the original also drops 22 and 443 on ssh.
  const port = url.port === '' ? null : Number(url.port);
  if (
    port !== null &&
    !(
      ((scheme === 'http' || scheme === 'git') && port === 80) ||
      ((scheme === 'https' || scheme === 'ssh') && [22, 443].includes(port))
    )
  )
    host = `${host}:${port}`;
  const repoPath = repositoryPath(decodeURIComponent(url.pathname));
  return repoPath === null ? null : `git:${host}/${repoPath}`;
}

function repositoryPath(value: string): string | null {
  let p = value.replace(/\/+/g, '/').replace(/^\/+|\/+$/g, '');
  if (p.endsWith('.git')) p = p.slice(0, -4);
  if (p === '' || p.split('/').some((segment) => segment === '.' || segment === '..')) return null;
  return p;
}

/**
 * Whether the todo makes its delivery workspace causal, as the original classifies it (`classifyDeliveryWorkspace
 * Causality`): a declared repository, write scope or `filesystem_write` capability requires it; an explicit
 * `same_agent_non_delivery` continuation without those does not; anything else is unknown (the original then still
 * asks for a snapshot).
 */
export function deliveryWorkspaceCausality(
  todo: { todoId: string; meta: Readonly<Record<string, string>> },
  source = 'selected_todo_contract',
): DeliveryWorkspaceCausality {
  const { meta } = todo;
  const declared =
    repositoryIdentity(meta['task_repository']) !== null ||
    requiredWriteScopes(meta['required_write_scopes'] ?? meta['required_write_scope']).length > 0 ||
    requiredCapabilities(meta['required_capabilities']).includes('filesystem_write');
  const nonDelivery = (meta['continuation_policy'] ?? '').trim().toLowerCase() === 'same_agent_non_delivery';
  const [requirement, reason]: [DeliveryWorkspaceRequirement, string] = declared
    ? ['required', 'declared_repository_or_write_contract']
    : nonDelivery
      ? ['not_required', 'explicit_non_delivery_without_repository_writes']
      : ['unknown', 'todo_write_contract_not_explicit'];
  return {
    schema_version: DELIVERY_WORKSPACE_CAUSALITY_SCHEMA_VERSION,
    todo_id: todo.todoId,
    requirement,
    source,
    reason,
  };
}

/** The flat fields the original writes into a heartbeat receipt's details (`delivery_workspace_causality_event_fields`). */
export function deliveryWorkspaceCausalityFields(causality: DeliveryWorkspaceCausality): Record<string, string> {
  return {
    delivery_workspace_causality_schema_version: causality.schema_version,
    delivery_workspace_causality_todo_id: causality.todo_id,
    delivery_workspace_requirement: causality.requirement,
    delivery_workspace_causality_source: causality.source,
    delivery_workspace_causality_reason: causality.reason,
  };
}

async function gitText(cwd: string, args: readonly string[]): Promise<string | null> {
  try {
    const out = (await git(cwd, args)).toString('utf8').trim();
    return out === '' ? null : out;
  } catch {
    return null;
  }
}

/**
 * The delivery workspace snapshot of the checkout at `where` (the original's `capture_delivery_workspace`): its
 * origin's identity and whether it is the repository's main checkout or a linked worktree; no local path, no branch.
 * Null outside git or without a credential-free `origin`.
 */
export async function captureDeliveryWorkspace(
  where: string,
  peerIndependentWorktreeRequired: boolean,
): Promise<DeliveryWorkspace | null> {
  const top = await gitText(where, ['rev-parse', '--show-toplevel']);
  if (top === null) return null;
  const [dirs, remote] = await Promise.all([
    gitText(top, ['rev-parse', '--git-common-dir', '--git-dir']),
    gitText(where, ['config', '--get', 'remote.origin.url']),
  ]);
  const taskRepository = repositoryIdentity(remote);
  const [common, gitDir] = (dirs ?? '').split('\n');
  if (taskRepository === null || common === undefined || gitDir === undefined || common === '' || gitDir === '')
    return null;
  const independent = path.resolve(top, gitDir) !== path.resolve(top, common);
  return {
    schema_version: DELIVERY_WORKSPACE_SCHEMA_VERSION,
    task_repository: taskRepository,
    repository_source: 'current_git_origin',
    workspace_kind: independent ? 'independent_git_worktree' : 'canonical_checkout',
    peer_independent_worktree_required: peerIndependentWorktreeRequired,
  };
}

/** The accountable delivery outcomes (the original's `ACCOUNTABLE_DELIVERY_OUTCOMES`). */
export const ACCOUNTABLE_DELIVERY_OUTCOMES: ReadonlySet<string> = new Set(['outcome_progress', 'primary_goal_outcome']);
