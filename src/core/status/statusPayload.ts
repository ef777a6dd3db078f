import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { LoopxError } from '../errors';
import { DEFAULT_RUNTIME_ROOT_RELATIVE_TO_HOME, registryProjectRoot, resolveRuntimeRoot } from '../registry/locate';
import { validateRegistryDocument } from '../registry/validate';
import { registryGoalEntries, registryGoalsOfDocument } from '../registry/read';
import type { GoalRef } from '../registry/goalRef';
import type { RegistryGoal } from '../registry/schema';
import { runIndexPath } from '../runtime/layout';
import { PersistentCache, statusCachePath } from '../goal/persistentCache';
import type { StatusIndexRead } from './statusQuota';
import type { FileStamp } from '../goal/files';
import { errorMessage } from '../errors';
import { cleanCopyOf, markCredentialClean, redactCredentialsShared } from '../privacy/scrub';
import { dashboardBase, dashboardFieldsOf, DashboardGoalFieldsSchema, type DashboardBase } from './goalChannel';
import type { HardLeaseRead } from './channelProjection';
import { readHardLeases } from './hardLeaseReads';
import {
  StatusItemQuotaSchema,
  GoalStatusCache,
  GoalStatusItemSchema,
  StatusRunSchema,
  type GoalStatusItem,
  type StatusRefKeys,
} from './goalStatus';
import { OPERATOR_WAITS } from '../todo/attention';
import { withQuotaSignals } from './projection/quotaSignals';
import { TodoProjectionGapSchema } from './projection/projectAsset';
import { dependencyBlockers, DependencyBlockersSchema, type DependencyBlockers } from './projection/dependencyBlockers';
import { systemClock, type Clock } from '../clock';
import { REPORT_SAMPLE_LIMIT, type GoalReportFacts, type ReadinessEvent, type SampleRun } from '../goal/runSample';
import { goalReportFacts, readinessExtras } from '../goal/reportReads';
import { DEFAULT_STATUS_RUN_LIMIT } from './goalStatusSchema';
import { globalRegistryHealth } from './reports/globalRegistryHealth';
import {
  GlobalRegistryAttentionItemSchema,
  GlobalRegistryShadowFindingSchema,
  isGlobalRegistryAttentionItem,
  mergeGlobalRegistryFindings,
  type GlobalRegistryAttentionItem,
} from './globalRegistryAttention';
import { runtimeProjectionRoutes } from './reports/runtimeProjectionRoutes';
import { runtimeReports, type RuntimeReportInputs } from './reports/runtimeReports';
import {
  contractAttentionItem,
  ContractAttentionItemSchema,
  indexDuplicateFinding,
  isContractAttentionItem,
  type ContractAttentionItem,
} from './contractCheck';
import { statusReports, type StatusReports } from './reports/statusReports';
import { goalAgentRows } from './reports/agentManagement';
import type { TodoRow } from './projection/handoffNote';
import {
  PUBLIC_BOUNDARY_SCAN_DEFERRED,
  probeRegistryGit,
  registryBoundaryFindings,
  userGateScopesCheck,
} from './reports/contractScans';
import type { GitProbe } from '../privacy/gitProbe';
import { byGoalId } from './reports/statusOrder';

/**
 * The status payload (`loopx status --format json`, and `/status.json` of the status server): the
 * original's top level — `ok`, `registry`, `runtime_root`, `goal_count`, `run_count`,
 * `status_contract`, `contract`, `attention_queue`, `run_history` — with one status item per
 * registry goal, carrying the dashboards' per-goal blocks (`project_asset`, `activation_state`,
 * `goal_channel_projection`). Field names and types follow the dashboards' contract
 * (status-contract-fields.txt) for every field emitted.
 */

/** The dashboard schema this payload satisfies; dashboards refuse payloads below their minimum. */
export const STATUS_CONTRACT_SCHEMA_VERSION = 2;

export const StatusContractVersionSchema = z.object({
  schema_version: z.literal(STATUS_CONTRACT_SCHEMA_VERSION),
  minimum_dashboard_schema_version: z.number().int(),
  producer: z.string(),
  reload_hint: z.string(),
});
export type StatusContractVersion = z.infer<typeof StatusContractVersionSchema>;

const STATUS_CONTRACT_VERSION: StatusContractVersion = {
  schema_version: STATUS_CONTRACT_SCHEMA_VERSION,
  minimum_dashboard_schema_version: STATUS_CONTRACT_SCHEMA_VERSION,
  producer: 'loopx status',
  reload_hint: 'restart `loopx serve-status`, or turn the loopx.statusServer.enabled setting off and on',
};

/** An attention item: the goal's status item plus the dashboards' per-goal blocks. */
export const StatusPayloadItemSchema = GoalStatusItemSchema.extend(DashboardGoalFieldsSchema.shape).extend({
  /** Open user todos of the other goals (projection/dependencyBlockers.ts); absent when none. */
  dependency_blockers: DependencyBlockersSchema.optional(),
  /** The roles without a todo summary, as `project_asset.todo_projection_gap` (projection/projectAsset.ts). */
  todo_projection_gap: TodoProjectionGapSchema.optional(),
  /** The global registry's findings about this goal's source registry (globalRegistryAttention.ts); absent when none. */
  global_registry_shadow_findings: z.array(GlobalRegistryShadowFindingSchema).optional(),
});
export type StatusPayloadItem = z.infer<typeof StatusPayloadItemSchema>;

export const StatusContractSchema = z.object({
  ok: z.boolean(),
  summary: z.object({ errors: z.number().int(), warnings: z.number().int(), checks: z.number().int() }),
  errors: z.array(z.string()),
  warnings: z.array(z.string()),
  checks: z.array(z.string()),
});
export type StatusContract = z.infer<typeof StatusContractSchema>;

/**
 * An attention item: a goal's, the `loopx-contract` item of a failed contract check (contractCheck.ts), or a global
 * registry finding's own item (globalRegistryAttention.ts).
 */
export const AttentionItemSchema = z.union([
  StatusPayloadItemSchema,
  ContractAttentionItemSchema,
  GlobalRegistryAttentionItemSchema,
]);
export type AttentionItem = StatusPayloadItem | ContractAttentionItem | GlobalRegistryAttentionItem;

export const AttentionQueueSchema = z.object({
  available: z.boolean(),
  item_count: z.number().int(),
  needs_user_or_controller: z.number().int(),
  needs_codex: z.number().int(),
  watching_external_evidence: z.number().int(),
  /** Items waiting on `monitor_signal` (LoopX's `watching_monitor`). */
  watching_monitor: z.number().int(),
  items: z.array(AttentionItemSchema),
});
export type AttentionQueue = z.infer<typeof AttentionQueueSchema>;

/** A run as the history lists it: `generated_at` is always a string there (empty when the row had none). */
export const RunHistoryRunSchema = StatusRunSchema.extend({ generated_at: z.string() });

export const RunHistoryGoalSchema = z.object({
  id: z.string(),
  display_name: z.string(),
  domain: z.string().nullable(),
  status: z.string(),
  registry_member: z.boolean(),
  index_exists: z.boolean(),
  raw_index_records: z.number().int(),
  unique_runs: z.number().int(),
  quota: StatusItemQuotaSchema.optional(),
  latest_runs: z.array(RunHistoryRunSchema),
});

export const RunHistorySchema = z.object({
  available: z.boolean(),
  goal_count: z.number().int(),
  run_count: z.number().int(),
  goals: z.array(RunHistoryGoalSchema),
});
export type RunHistory = z.infer<typeof RunHistorySchema>;

export const StatusPayloadSchema = z.object({
  /** False when the contract check found errors (`contract.ok`); the CLI then exits 1. */
  ok: z.boolean(),
  registry: z.string(),
  runtime_root: z.string(),
  goal_count: z.number().int(),
  run_count: z.number().int(),
  /** Set when the status was asked for one agent. */
  agent_id: z.string().optional(),
  status_contract: StatusContractVersionSchema,
  contract: StatusContractSchema,
  /** `contract.summary` at the top level, where LoopX's own contract readers and agents look for it. */
  contract_summary: StatusContractSchema.shape.summary,
  /** The original's contract health projection: the first 3 errors and warnings, their counts, whether cut. */
  contract_errors: z.array(z.string()),
  contract_errors_total_count: z.number().int(),
  contract_errors_truncated: z.boolean(),
  contract_warnings: z.array(z.string()),
  contract_warnings_total_count: z.number().int(),
  contract_warnings_truncated: z.boolean(),
  /** The goal asked for (`--goal-id`), or null. */
  goal_filter: z.string().nullable(),
  /** The runtime's global registry checked against this one (reports/globalRegistryHealth.ts). */
  global_registry: z.record(z.string(), z.unknown()).optional(),
  attention_queue: AttentionQueueSchema,
  run_history: RunHistorySchema,
  /** The run-history reports, windowed on the time of the answer (reports/runtimeReports.ts). */
  event_ledger_summary: z.record(z.string(), z.unknown()).optional(),
  promotion_readiness_summary: z.record(z.string(), z.unknown()).optional(),
  decision_freshness_summary: z.record(z.string(), z.unknown()).optional(),
  usage_summary: z.record(z.string(), z.unknown()).optional(),
  promotion_gate: z.record(z.string(), z.unknown()).optional(),
  /** Whether the goals' runtime projection routes are healthy (null: none looked at). */
  runtime_projection_routes: z.object({ healthy: z.boolean().nullable() }).optional(),
  /** The original's top-level reports built from the items (reports/statusReports.ts). */
  todo_index: z.record(z.string(), z.unknown()),
  agent_management_projection: z.record(z.string(), z.unknown()).optional(),
});
export type StatusPayload = z.infer<typeof StatusPayloadSchema> & StatusReports;

/** The goals' items of a status payload, without the contract item and the global registry findings' items. */
export function goalItems(payload: Pick<StatusPayload, 'attention_queue'>): StatusPayloadItem[] {
  return payload.attention_queue.items.filter(
    (item): item is StatusPayloadItem => !isContractAttentionItem(item) && !isGlobalRegistryAttentionItem(item),
  );
}

/** The contract item of a status payload, when the contract check failed. */
export function contractItem(payload: Pick<StatusPayload, 'attention_queue'>): ContractAttentionItem | undefined {
  return payload.attention_queue.items.find(isContractAttentionItem);
}

/**
 * A registry as status reads it (`readStatusRegistry`): its document, through the status cache's stamped
 * read, and the runtime root it resolves to.
 */
export interface StatusRegistry {
  registryPath: string;
  homeDir: string;
  runtimeRootOverride: string | null;
  runtimeRoot: string;
  document: Record<string, unknown>;
}

/**
 * Reads the registry for a status (through `cache`, default one of its own) and resolves its runtime root.
 * Throws `registry_missing` when the file does not exist, and what the read throws when it cannot be
 * parsed (bad JSON, not an object).
 */
export async function readStatusRegistry(
  place: { registryPath: string; homeDir: string; runtimeRootOverride?: string | null },
  cache: GoalStatusCache = new GoalStatusCache(),
): Promise<StatusRegistry> {
  const { exists, registry } = await cache.registry(place.registryPath);
  if (!exists) {
    throw new LoopxError(
      'registry_missing',
      `registry file does not exist: ${place.registryPath}; connect a project with loopx bootstrap, or pass --registry`,
      { registry: place.registryPath },
    );
  }
  const runtimeRootOverride = place.runtimeRootOverride ?? null;
  return {
    registryPath: place.registryPath,
    homeDir: place.homeDir,
    runtimeRootOverride,
    runtimeRoot: resolveRuntimeRoot({
      registryPath: place.registryPath,
      registry,
      override: runtimeRootOverride ?? undefined,
      homeDir: place.homeDir,
    }),
    document: registry,
  };
}

export interface StatusRequest {
  /** The registry, as read for this status (`readStatusRegistry`, through the same cache as `cache`). */
  registry: StatusRegistry;
  /** Only this goal. */
  goalId?: string | null;
  agentId?: string | null;
  /** Latest runs per goal (default 5). */
  limit?: number;
  cache?: GoalStatusCache;
  /**
   * The quota summary of a goal (see `StatusItemQuotaSchema`), attached as the item's `quota`. It depends on the time (a
   * rolling window), so it is asked for on every call and never cached with the item. A goal
   * whose summary fails keeps no `quota` and gets a contract warning. Summaries are never mutated:
   * handing out the same object again means the same summary (the item is then reused as it was).
   */
  quotaSummary?: (goal: Pick<GoalRef, StatusRefKeys>, sources: StatusQuotaSources) => Promise<object>;
  /**
   * Use the persistent cache in the runtime root (goal/persistentCache.ts): items and run-index digests of
   * unchanged files are taken from it, and it is saved when anything changed. Off by default.
   */
  persistentCache?: boolean;
  /**
   * With the persistent cache: hands its save to the caller instead of awaiting it, so a
   * long-lived reader (the live model behind the status server and the editor) answers first
   * and writes the cache after. The CLI awaits the save (it exits right after).
   */
  deferCacheSave?: (save: () => Promise<boolean>) => void;
  /**
   * The caller redacts the payload with `redactCredentialsShared` (as `loopx status` does): each
   * goal's item is redacted as it is built, so the persistent cache records which items hold
   * nothing to redact and a warm call redacts only what is new in this call.
   */
  redact?: boolean;
  /** "Now": the run-history reports and the summaries' monitor-due fields (projection/monitorDue.ts); default the system clock. */
  clock?: Clock;
  /**
   * Compute the top-level reports (default true). A caller that takes only one goal's item from the payload (the
   * live model's one-goal refresh) skips them: their readiness scan looks at every goal's index.
   */
  reports?: boolean;
  /** `LOOPX_RUNTIME_ROOT` of the caller's environment: a candidate runtime of the projection routes. */
  envRuntimeRoot?: string | null;
}

/** The goal as status loaded it, which its quota summary is computed from. */
export interface StatusQuotaSources {
  /** The registry document the targets come from (read from `registryPath`). */
  registry: Record<string, unknown>;
  /** The goal's raw entry in it (the first of its id). */
  registryEntry: Record<string, unknown> | undefined;
  /**
   * The goal's run index as status holds it, with the stamp it was read at: its rows, the persistent
   * cache's digest of it (with the persistent cache), or `unread` when status holds neither.
   */
  index: StatusIndexRead;
  /** Who the goal's status item waits on and how severe it is: the status view's quota state follows them. */
  attention: Pick<GoalStatusItem, 'waiting_on' | 'severity'>;
}

/**
 * The registry's goals, parsed once per document (status reads them twice per call, and the live
 * model keeps the same document while the registry file is unchanged; the raw entries of
 * `registryGoalEntries` come from the same parse). Read-only.
 */
function parsedGoals(registry: Record<string, unknown>): readonly RegistryGoal[] {
  return registryGoalsOfDocument(registry);
}

/**
 * The targets of a registry document, per document and the paths they were resolved against: a
 * long-lived reader keeps the same document while the registry file is unchanged, and the same
 * target objects let the per-target memos below (and the status cache's) hold.
 */
const targetsOf = new WeakMap<object, { key: string; targets: readonly Pick<GoalRef, StatusRefKeys>[] }>();

/**
 * The status targets of a registry document: its goals in order, the first entry of a repeated id only, each as
 * the part of its `GoalRef` status reads (where its files are and its typed entry).
 */
export function statusTargets(
  registry: Record<string, unknown>,
  registryPath: string,
  options: { homeDir: string; runtimeRootOverride?: string | null },
): Pick<GoalRef, StatusRefKeys>[] {
  // The project root follows symlinks, so it is part of the key, not derived from it.
  const projectRoot = registryProjectRoot(registryPath);
  const key = JSON.stringify([registryPath, projectRoot, options.homeDir, options.runtimeRootOverride ?? null]);
  const kept = targetsOf.get(registry);
  if (kept !== undefined && kept.key === key) return [...kept.targets];
  const targets = resolveStatusTargets(registry, registryPath, projectRoot, options);
  targetsOf.set(registry, { key, targets });
  return [...targets];
}

function resolveStatusTargets(
  registry: Record<string, unknown>,
  registryPath: string,
  projectRoot: string,
  options: { homeDir: string; runtimeRootOverride?: string | null },
): Pick<GoalRef, StatusRefKeys>[] {
  const runtimeRoot = resolveRuntimeRoot({
    registryPath,
    registry,
    override: options.runtimeRootOverride ?? undefined,
    homeDir: options.homeDir,
  });
  const seen = new Set<string>();
  const targets: Pick<GoalRef, StatusRefKeys>[] = [];
  for (const goal of parsedGoals(registry)) {
    if (seen.has(goal.id)) continue;
    seen.add(goal.id);
    targets.push({ goalId: goal.id, projectRoot, runtimeRoot, homeDir: options.homeDir, entry: goal });
  }
  return targets;
}

/**
 * Projects the status of the registry's goals (or of one) from their files. Throws only when the
 * asked-for goal is not in the registry; anything wrong with a goal's own files shows up in its item instead.
 */
export async function loadStatus(request: StatusRequest): Promise<StatusPayload> {
  // A cache of our own serves this call only: each goal's files are let go once its item is built.
  const ownCache = request.cache === undefined;
  const cache = request.cache ?? new GoalStatusCache();
  const { registryPath, homeDir, runtimeRoot, document: registry } = request.registry;
  // The original's order: goal ids sorted (code points), as its run history discovers them (statusOrder.ts).
  let targets = statusTargets(registry, registryPath, request.registry).sort(byGoalId);
  // The contract's registry-boundary scan asks git about the registry file; its processes run while the goals load.
  const registryGit = probeRegistryGit(registryPath);
  // Looked at before anything is saved into it (the persistent cache): a contract warning when missing.
  const runtimeRootExists = fs.existsSync(runtimeRoot);
  const diskFile = request.persistentCache === true && runtimeRootExists ? statusCachePath(runtimeRoot) : null;
  if (diskFile !== null && cache.disk?.file !== diskFile) cache.disk = PersistentCache.open(diskFile);
  const disk = diskFile === null ? undefined : cache.disk;
  const allTargets = targets;
  if (request.goalId !== undefined && request.goalId !== null) {
    targets = targets.filter((target) => target.goalId === request.goalId);
    if (targets.length === 0) {
      throw new LoopxError('goal_not_found', `goal '${request.goalId}' is not in the registry ${registryPath}`, {
        goal_id: request.goalId,
        registry: registryPath,
      });
    }
  }
  const registryEntries = new Map<string, RegistryGoal>();
  for (const goal of parsedGoals(registry)) if (!registryEntries.has(goal.id)) registryEntries.set(goal.id, goal);
  const rawEntryById = request.quotaSummary === undefined ? null : registryGoalEntries(registry);
  const items: StatusPayloadItem[] = [];
  const goalIndexes: (GoalStatusItem['todo_index'] | undefined)[] = [];
  const agentRows: (readonly TodoRow[])[] = [];
  const quotaWarnings: string[] = [];
  const sampleLimit = Math.max(request.limit ?? DEFAULT_STATUS_RUN_LIMIT, REPORT_SAMPLE_LIMIT);
  const reportFacts = new Map<string, GoalReportFacts>();
  for (const target of targets) {
    const answered = await cache.goalStatus(target, {
      homeDir,
      ...(request.clock !== undefined ? { now: request.clock.now() } : {}),
      ...(request.redact === true ? { redact: true } : {}),
      agentId: request.agentId ?? null,
      ...(request.limit !== undefined ? { limit: request.limit } : {}),
    });
    let item: GoalStatusItem = answered;
    if (request.redact === true) redactCredentialsShared(item);
    const indexFile = runIndexPath(target.runtimeRoot, target.goalId);
    // What is derived from the read is keyed by the stamp it was read at (see heldRunIndex).
    const held = cache.heldRunIndex(target);
    let indexStamp: FileStamp | null | undefined = held?.stamp;
    let keptFacts: GoalReportFacts | undefined;
    if (request.quotaSummary !== undefined) {
      try {
        const runIndex = held?.read;
        indexStamp = held !== undefined ? held.stamp : await cache.files.reader.stat(indexFile);
        const digested =
          disk === undefined ? undefined : await disk.digestOf(indexFile, target.projectRoot, indexStamp, runIndex);
        keptFacts = digested?.reportFacts;
        // Before the quota summary: a caller's summary may let go of the goal's held rows.
        if (request.reports !== false)
          reportFacts.set(
            target.goalId,
            await goalReportFacts({
              goalId: target.goalId,
              indexFile,
              projectRoot: target.projectRoot,
              stamp: indexStamp,
              held: runIndex,
              kept: keptFacts,
              disk,
              limit: sampleLimit,
            }),
          );
        const index: StatusIndexRead =
          digested !== undefined
            ? { kind: 'digest', digest: digested.digest, recentRuns: digested.recentRuns ?? null, stamp: indexStamp }
            : runIndex !== undefined
              ? { kind: 'rows', runIndex, stamp: indexStamp }
              : { kind: 'unread' };
        item = withQuota(
          item,
          await request.quotaSummary(target, {
            registry,
            registryEntry: rawEntryById?.get(target.goalId),
            index,
            // A quiet-monitor item's quota follows its route, as in LoopX (the display is applied after the quota).
            attention: {
              waiting_on: item.execution_waiting_on ?? item.waiting_on,
              severity: item.execution_severity ?? item.severity,
            },
          }),
        );
      } catch (error) {
        quotaWarnings.push(`${target.goalId}: quota summary unavailable: ${errorMessage(error)}`);
      }
    }
    if (request.reports !== false && !reportFacts.has(target.goalId))
      reportFacts.set(
        target.goalId,
        await goalReportFacts({
          goalId: target.goalId,
          indexFile,
          projectRoot: target.projectRoot,
          stamp: indexStamp,
          held: cache.heldRunIndex(target)?.read,
          kept: keptFacts,
          disk,
          limit: sampleLimit,
        }),
      );
    if (ownCache) cache.release(target);
    goalIndexes.push(item.todo_index);
    const registryGoal = registryEntries.get(target.goalId);
    // What is derived from the answer alone, kept with the goal's item (the registry entry is read by the blocks).
    const parts = cache.itemParts(
      answered,
      JSON.stringify(registryGoal ?? null),
      () => goalParts(answered, registryGoal),
      { redact: request.redact === true, markClean: markCleanParts },
    );
    agentRows.push(parts.agent_rows);
    items.push(withDashboardFields(item, parts.dashboard, readHardLeases(target)));
  }
  if (disk !== undefined) {
    if (request.goalId === undefined || request.goalId === null)
      disk.retain(
        new Set(allTargets.map((t) => t.goalId)),
        new Set(allTargets.map((t) => runIndexPath(t.runtimeRoot, t.goalId))),
      );
    if (request.deferCacheSave !== undefined) request.deferCacheSave(() => disk.save(runtimeRoot));
    else await disk.save(runtimeRoot);
  }
  const blockers = dependencyBlockers(items);
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as StatusPayloadItem;
    items[i] = withDependencyBlockers(item, blockers.get(item.goal_id));
  }
  const runCount = items.reduce((sum, item) => sum + item.unique_runs, 0);
  const agentId = request.agentId ?? null;
  const contract = statusContract({
    registry,
    registryPath: registryPath,
    homeDir,
    goalId: request.goalId ?? null,
    items,
    runtimeRoot,
    runtimeRootExists,
    runCount,
    extraWarnings: quotaWarnings,
    registryGit: await registryGit,
  });
  const goalFilter = request.goalId?.trim() || null;
  const globalRegistry =
    request.reports === false ? null : globalRegistryHealth({ registryPath, runtimeRoot, current: registry, homeDir });
  // The global registry's action findings: a shadow on a goal's item, or an item of their own (globalRegistryAttention.ts).
  const merged = mergeGlobalRegistryFindings({ items, findings: globalRegistry?.['findings'], goalFilter });
  const queue: AttentionItem[] = [
    ...(contract.ok ? [] : [contractAttentionItem(contract.errors)]),
    ...merged.findingItems,
    ...merged.items,
  ];
  const withReports = request.reports !== false;
  const reportInputs = !withReports
    ? null
    : await runtimeReportInputs({
        all: allTargets,
        loaded: reportFacts,
        disk,
        registryPath,
        runtimeRoot,
        goalFilter,
        sampleLimit,
        stat: (file) => cache.files.reader.stat(file),
      });
  const reports =
    reportInputs === null ? null : runtimeReports(reportInputs, (request.clock ?? systemClock).now().getTime());
  // Items were validated when they were projected; parsing the payload again would copy every
  // cached item, so it is assembled as typed instead.
  const payload: StatusPayload = {
    ok: contract.ok && (globalRegistry?.ok ?? true),
    registry: registryPath,
    runtime_root: runtimeRoot,
    goal_count: items.length,
    run_count: runCount,
    ...(agentId !== null ? { agent_id: agentId } : {}),
    status_contract: STATUS_CONTRACT_VERSION,
    contract,
    contract_summary: contract.summary,
    ...contractHealth(contract),
    goal_filter: goalFilter,
    ...(globalRegistry !== null ? { global_registry: globalRegistry } : {}),
    attention_queue: {
      available: true,
      item_count: queue.length,
      needs_user_or_controller: queue.filter((item) => OPERATOR_WAITS.has(item.waiting_on)).length,
      needs_codex: queue.filter((item) => item.waiting_on === 'codex').length,
      watching_external_evidence: queue.filter((item) => item.waiting_on === 'external_evidence').length,
      watching_monitor: queue.filter((item) => item.waiting_on === 'monitor_signal').length,
      items: queue,
    },
    run_history: {
      available: true,
      goal_count: items.length,
      run_count: runCount,
      goals: items.map(runHistoryGoal),
    },
    ...(reports === null
      ? {}
      : {
          ...reports,
          runtime_projection_routes: runtimeProjectionRoutes({
            registryPath,
            runtimeRoot,
            registry,
            goalId: goalFilter,
            homeDir,
            envRuntimeRoot: request.envRuntimeRoot ?? null,
          }),
        }),
    ...statusReports({
      items,
      agentRows,
      goalIndexes,
      registry,
      goalFilter: request.goalId?.trim() || null,
      agentLane: agentId !== null,
      limit: request.limit,
      now: (request.clock ?? systemClock).now(),
    }),
  };
  if (reportInputs !== null) reportInputsOf.set(payload, reportInputs);
  return payload;
}

/** The inputs of a payload's run-history reports, to compute them again at another time (`withRuntimeReports`). */
const reportInputsOf = new WeakMap<StatusPayload, RuntimeReportInputs>();

/**
 * The payload with its run-history reports computed at `nowMs` (a long-lived reader answering later than it loaded:
 * the windows and ages move with the time of the answer); the payload itself when it carries none.
 */
export function withRuntimeReports(payload: StatusPayload, nowMs: number): StatusPayload {
  const inputs = reportInputsOf.get(payload);
  if (inputs === undefined) return payload;
  const refreshed: StatusPayload = { ...payload, ...runtimeReports(inputs, nowMs) };
  reportInputsOf.set(refreshed, inputs);
  return refreshed;
}

/**
 * What the reports read beyond the loaded goals: the full readiness scan covers every goal folder of the runtime
 * (the release ledger, registry goals a `--goal-id` filtered out, folders the registry does not list), and the
 * sample only the goals loaded.
 */
async function runtimeReportInputs(input: {
  all: readonly Pick<GoalRef, StatusRefKeys>[];
  loaded: ReadonlyMap<string, GoalReportFacts>;
  disk: PersistentCache | undefined;
  registryPath: string;
  runtimeRoot: string;
  goalFilter: string | null;
  sampleLimit: number;
  stat: (file: string) => Promise<FileStamp | null>;
}): Promise<RuntimeReportInputs> {
  const goals = new Map<string, ReadinessEvent | null>();
  const perGoal = new Map<string, readonly SampleRun[]>();
  for (const [goalId, facts] of input.loaded) {
    perGoal.set(goalId, facts.sample);
    goals.set(goalId, facts.readiness);
  }
  const projectRoot = registryProjectRoot(input.registryPath);
  for (const target of input.all) {
    if (goals.has(target.goalId)) continue;
    const indexFile = runIndexPath(target.runtimeRoot, target.goalId);
    const stamp = input.disk === undefined ? undefined : await input.stat(indexFile);
    const kept = stamp === undefined ? undefined : input.disk?.indexDigest(indexFile, stamp, target.projectRoot);
    const facts = await goalReportFacts({
      goalId: target.goalId,
      indexFile,
      projectRoot: target.projectRoot,
      stamp,
      held: undefined,
      kept: kept === undefined ? undefined : input.disk?.keptReportFacts(indexFile),
      disk: input.disk,
      limit: REPORT_SAMPLE_LIMIT,
    });
    goals.set(target.goalId, facts.readiness);
  }
  const extras = readinessExtras(input.runtimeRoot, projectRoot, new Set(goals.keys()));
  for (const [goalId, event] of extras.others) goals.set(goalId, event);
  return {
    perGoal,
    limit: input.sampleLimit,
    scan: {
      runtimeRoot: input.runtimeRoot,
      goalsDirExists: extras.goalsDirExists,
      releaseLedgerExists: extras.releaseLedgerExists,
      release: extras.release,
      goals,
    },
    goalFilter: input.goalFilter,
    registry: input.registryPath,
    runtimeRoot: input.runtimeRoot,
  };
}

/** The original's contract signals shown at the top level (`build_contract_health_projection`, 3 of each). */
const CONTRACT_SIGNAL_LIMIT = 3;

function contractHealth(contract: StatusContract): {
  contract_errors: string[];
  contract_errors_total_count: number;
  contract_errors_truncated: boolean;
  contract_warnings: string[];
  contract_warnings_total_count: number;
  contract_warnings_truncated: boolean;
} {
  const signals = (values: readonly string[]): { items: string[]; total: number } => {
    const items = values.map((value) => value.trim()).filter((value) => value !== '');
    return { items: items.slice(0, CONTRACT_SIGNAL_LIMIT), total: items.length };
  };
  const errors = signals(contract.errors);
  const warnings = signals(contract.warnings);
  return {
    contract_errors: errors.items,
    contract_errors_total_count: errors.total,
    contract_errors_truncated: errors.total > errors.items.length,
    contract_warnings: warnings.items,
    contract_warnings_total_count: warnings.total,
    contract_warnings_truncated: warnings.total > warnings.items.length,
  };
}

/**
 * Items with their quota attached, per cached item: the same object while neither the item nor
 * the summary object changed (a long-lived reader's quota cache hands out the same summary while
 * it holds), so the dashboard fields, the run history entry and the status server's scrubbed JSON
 * of an unchanged goal are reused by identity instead of rebuilt and compared.
 */
const quotaItems = new WeakMap<GoalStatusItem, { summary: object; value: GoalStatusItem }>();

function withQuota(item: GoalStatusItem, summary: object): GoalStatusItem {
  const kept = quotaItems.get(item);
  if (kept !== undefined && kept.summary === summary) return kept.value;
  const quota = StatusItemQuotaSchema.parse(summary);
  const value: GoalStatusItem = { ...item, quota, ...withQuotaSignals(item, quota) };
  quotaItems.set(item, { summary, value });
  return value;
}

type RunHistoryGoal = z.infer<typeof RunHistoryGoalSchema>;
const runHistoryGoals = new WeakMap<StatusPayloadItem, RunHistoryGoal>();

/** The run history's entry of an item (the same object for the same item). */
function runHistoryGoal(item: StatusPayloadItem): RunHistoryGoal {
  let goal = runHistoryGoals.get(item);
  if (goal === undefined) {
    goal = {
      id: item.goal_id,
      display_name: item.display_name,
      domain: item.domain,
      status: item.goal_status,
      registry_member: item.registry_member,
      index_exists: item.index_exists,
      raw_index_records: item.raw_index_records,
      unique_runs: item.unique_runs,
      ...(item.quota !== undefined ? { quota: item.quota } : {}),
      // Clean when the run is (its own texts, or ''): the redaction need not walk the copy.
      latest_runs: item.latest_runs.map((run) => cleanCopyOf({ ...run, generated_at: run.generated_at ?? '' }, run)),
    };
    runHistoryGoals.set(item, goal);
  }
  return goal;
}

/**
 * What status derives from a goal's answer alone (goalStatus.ts `itemParts`: kept with its item, in the persistent
 * cache too): the dashboards' blocks without their time-dependent parts (`DashboardBase`: the quota, what its state
 * sets, the hard leases are put in when answering) and the goal's agent-management rows (reports/agentManagement.ts).
 */
interface GoalParts {
  dashboard: DashboardBase;
  agent_rows: TodoRow[];
}

function goalParts(answered: GoalStatusItem, goal: RegistryGoal | undefined): GoalParts {
  return {
    dashboard: dashboardBase(answered, goal),
    agent_rows: goalAgentRows({
      goalId: answered.goal_id,
      agentTodos: (answered.agent_todos as Record<string, unknown> | null | undefined) ?? null,
      budget: answered.todo_index?.budget ?? [],
    }),
  };
}

/**
 * Marks parts read back clean where the redaction meets them: the answer's blocks are copies of the kept blocks (their
 * members, and theirs, are the kept ones), and the agent rows are copied into the (small) agent view.
 */
function markCleanParts(parts: GoalParts): void {
  markCredentialClean(parts.dashboard.project_asset, 1, 1);
  markCredentialClean(parts.dashboard.goal_channel.projection, 1, 1);
  markCredentialClean(parts.dashboard.goal_channel.raw_keys, 1, 0);
}

/**
 * Extended items of status items, so an unchanged goal yields the same item object on every call (callers compare by
 * identity to skip work; see `withQuota` for items with a quota).
 */
const extendedItems = new WeakMap<GoalStatusItem, { base: DashboardBase; value: StatusPayloadItem }>();

function withDashboardFields(
  item: GoalStatusItem,
  base: DashboardBase,
  leases: readonly HardLeaseRead[],
): StatusPayloadItem {
  const build = (): StatusPayloadItem => {
    const fields = dashboardFieldsOf(base, item, leases.length > 0 ? { reads: leases, now: new Date() } : undefined);
    const gap = fields.project_asset.todo_projection_gap;
    // The goal's part of the todo index is the payload's `todo_index`, not the item's.
    const { todo_index: _index, latest_run_raw_keys: _rawKeys, ...emitted } = item;
    return { ...emitted, ...fields, ...(gap !== undefined ? { todo_projection_gap: gap } : {}) };
  };
  // A goal with hard task leases: its channel projection depends on the time (lease expiry), built on every answer.
  if (leases.length > 0) return build();
  const cached = extendedItems.get(item);
  if (cached !== undefined && cached.base === base) return cached.value;
  const value = build();
  extendedItems.set(item, { base, value });
  return value;
}

/** Items with their dependency blockers, the same object while the blockers are the same (see `withQuota`). */
const blockedItems = new WeakMap<StatusPayloadItem, { key: string; value: StatusPayloadItem }>();

function withDependencyBlockers(item: StatusPayloadItem, blockers: DependencyBlockers | undefined): StatusPayloadItem {
  if (blockers === undefined) return item;
  const key = JSON.stringify(blockers);
  const kept = blockedItems.get(item);
  if (kept !== undefined && kept.key === key) return kept.value;
  const value: StatusPayloadItem = { ...item, dependency_blockers: blockers };
  blockedItems.set(item, { key, value });
  return value;
}

/**
 * The goals the original's contract check reads history of (`discover_goal_ids` with runtime goals): the asked-for
 * goal, else the registry's goal ids and every folder under `<runtime_root>/goals`, each once (one directory read).
 */
function historyGoalCount(input: StatusContractInput): number {
  if (input.goalId !== null) return 1;
  const ids = new Set(input.items.map((item) => item.goal_id));
  try {
    for (const entry of fs.readdirSync(path.join(input.runtimeRoot, 'goals'), { withFileTypes: true }))
      if (entry.isDirectory()) ids.add(entry.name);
  } catch {
    // No runtime goals folder: the registry's goals only.
  }
  return ids.size;
}

interface StatusContractInput {
  registry: Record<string, unknown>;
  registryPath: string;
  homeDir: string;
  /** Only this goal's findings (and the registry's global ones). */
  goalId: string | null;
  items: readonly GoalStatusItem[];
  runtimeRoot: string;
  runtimeRootExists: boolean;
  runCount: number;
  extraWarnings: readonly string[];
  /** Git's view of the registry file, for the registry-boundary scan. */
  registryGit: GitProbe;
}

/**
 * The `contract` block, LoopX's contract check (contractCheck.ts). Errors: the registry's problem
 * diagnostics (global ones, and those of the asked-for goal), then each goal's contract
 * diagnostics (todo metadata rules, an unreadable state file). Warnings: a Next Action with no
 * todo behind it (state projection gap), a runtime root that does not exist yet, run-index rows
 * that were merged or skipped, and quota summaries that failed.
 */
function statusContract(input: StatusContractInput): StatusContract {
  const { items, runtimeRoot, runCount } = input;
  const errors: string[] = [];
  const warnings: string[] = [];
  const checks: string[] = [`registry goals checked: ${items.length}`];
  try {
    const validation = validateRegistryDocument(input.registry, {
      registryPath: input.registryPath,
      homeDir: input.homeDir,
    });
    for (const diagnostic of validation.problem_diagnostics)
      if (input.goalId === null || diagnostic.scope === 'global' || diagnostic.goal_ids.includes(input.goalId))
        errors.push(diagnostic.message);
  } catch (error) {
    errors.push(errorMessage(error));
  }
  // The original's registry-boundary and user-gate scope scans (reports/contractScans.ts).
  const boundary = registryBoundaryFindings(input.registryPath, input.registry, input.registryGit);
  if (boundary.check !== null) checks.push(boundary.check);
  warnings.push(...boundary.warnings);
  errors.push(...boundary.errors);
  const gateScopes = userGateScopesCheck(items);
  if (gateScopes !== null) checks.push(gateScopes);
  for (const item of items) for (const diagnostic of item.contract_diagnostics) errors.push(diagnostic.message);
  for (const item of items) {
    const gap = item.state_projection_gap;
    if (gap !== undefined)
      warnings.push(
        `${item.goal_id}: active state has a state_projection_gap for ${gap.target_roles.join(',') || 'todo'}; ` +
          'expand executable Next Action work into an open Agent Todo or user wait into an open User Todo',
      );
  }
  const defaultRoot = path.join(input.homeDir, DEFAULT_RUNTIME_ROOT_RELATIVE_TO_HOME);
  if (input.runtimeRootExists || path.resolve(runtimeRoot) === path.resolve(defaultRoot))
    checks.push(`runtime root resolved: ${runtimeRoot}`);
  else warnings.push(`runtime root does not exist yet: ${runtimeRoot}`);
  checks.push(`run-history goals=${historyGoalCount(input)} runs=${runCount}`);
  for (const item of items) {
    if (item.run_index_unreadable !== undefined)
      warnings.push(
        `${item.goal_id}: run index unreadable, its runs and slot use are unknown: ${item.run_index_unreadable}`,
      );
    if (item.raw_index_records <= item.unique_runs) continue;
    const finding = indexDuplicateFinding({
      goalId: item.goal_id,
      raw: item.raw_index_records,
      unique: item.unique_runs,
      skipped: item.skipped_index_lines,
      indexFile: runIndexPath(runtimeRoot, item.goal_id),
    });
    if (finding.warning !== null) warnings.push(finding.warning);
    if (finding.check !== null) checks.push(finding.check);
  }
  warnings.push(...input.extraWarnings);
  checks.push(PUBLIC_BOUNDARY_SCAN_DEFERRED);
  return {
    ok: errors.length === 0,
    summary: { errors: errors.length, warnings: warnings.length, checks: checks.length },
    errors,
    warnings,
    checks,
  };
}
