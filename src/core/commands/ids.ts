/**
 * One place for the ids the manifest and the code share: the extension, its views, context keys
 * and settings. `package.json` is generated from or checked against these (test/unit/catalog.test.ts).
 */
export const EXTENSION_ID = 'loopx.loopx-vscode';
export const VIEW_CONTAINER_ID = 'loopx';
export const VIEW_IDS = {
  goals: 'loopx.goals',
  /** Every open gate of every goal, longest blocked first (docs/review.md#gate-inbox). */
  gateInbox: 'loopx.gateInbox',
  agents: 'loopx.agents',
  /** Every recorded turn not yet reviewed (docs/review.md). */
  review: 'loopx.review',
  warnings: 'loopx.warnings',
  /** Shown only in an untrusted workspace: its welcome content says what is read-only and how to trust. */
  restricted: 'loopx.restricted',
} as const;

export const CONTEXT_KEYS = {
  /** True once activation finished; welcome views wait for it. */
  ready: 'loopx.ready',
  hasGoals: 'loopx.hasGoals',
} as const;

/** Settings under `loopx.*`. */
export const SETTINGS = {
  section: 'loopx',
  registryPath: 'registryPath',
  statusServerEnabled: 'statusServer.enabled',
  statusServerPort: 'statusServer.port',
  statusServerRequireToken: 'statusServer.requireToken',
  /** Whether integrated terminals get our `loopx` first on PATH: whenMissing (default), always, never. */
  terminalCliOnPath: 'terminal.cliOnPath',
  /** One switch per notification kind (docs/review.md#notifications). */
  notifyGateOpened: 'notifications.gateOpened',
  notifyGateOverdue: 'notifications.gateOverdue',
  notifyQuotaReached: 'notifications.quotaReached',
  notifyReplanDue: 'notifications.replanDue',
  notifyLoopStopped: 'notifications.loopStopped',
  notifyLeaseExpiring: 'notifications.leaseExpiring',
  /** How Merge Lane merges a lane: ff (default), no-ff, ff-only (docs/lanes.md). */
  lanesMergeStrategy: 'lanes.mergeStrategy',
} as const;
