import type { AttentionGoalFacts, AttentionSnapshot } from '../core/status/attentionEvents';
import type { GateInboxRow, InboxGateInput } from '../core/status/gateInbox';
import {
  FAILURE_RESULT_KINDS,
  gateInboxRows,
  rolloutLogStamp,
  STOPPED_GOAL_STATUSES,
  todoAddedTimes,
} from '../core/ops/editorHost';
import type { GoalSummary } from '../core/ops/goalRows';
import type { GoalDetails } from './workspaceModel';
import type { RecentRun, TodoLease } from './goalExtras';

/** What the attention facts and the inbox read of the workspace model (an interface, so tests can fake it). */
export interface AttentionSource {
  readonly goals: readonly GoalSummary[];
  detailsOf(goal: GoalSummary): GoalDetails | undefined;
  isReading(goal: GoalSummary): boolean;
  recentRunsOf(goal: GoalSummary): readonly RecentRun[];
  leasesOf(goal: GoalSummary): ReadonlyMap<string, TodoLease>;
}

const FAILURES: ReadonlySet<string> = new Set(FAILURE_RESULT_KINDS);

const keyOf = (goal: Pick<GoalSummary, 'registryPath' | 'goalId'>): string => `${goal.registryPath}#${goal.goalId}`;

/**
 * The attention snapshot of the workspace at `atMs`: only goals whose status has been read (a goal
 * listed but still being read is left out, so its gates are not "opened" when its status arrives).
 */
export function attentionSnapshot(source: AttentionSource, atMs: number): AttentionSnapshot {
  const goals = new Map<string, AttentionGoalFacts>();
  for (const goal of source.goals) {
    const details = source.detailsOf(goal);
    const status = details?.status;
    if (status === undefined || source.isReading(goal)) continue;
    const failure = source
      .recentRunsOf(goal)
      .find((run) => run.classification !== null && FAILURES.has(run.classification));
    goals.set(keyOf(goal), {
      goalKey: keyOf(goal),
      goalId: goal.goalId,
      registryPath: goal.registryPath,
      openGates: status.open_gates.map((gate) => ({
        todoId: gate.todo_id,
        title: gate.title,
        dueAt: gate.due_at ?? null,
      })),
      quota: details?.quota === undefined ? null : { exceeded: details.quota.exceeded, reason: details.quota.reason },
      replanLanes: (status.replan_obligations ?? []).map((o) => o.agent_id ?? ''),
      stopped: STOPPED_GOAL_STATUSES.has(goal.status.trim().toLowerCase()),
      latestFailure:
        failure === undefined || failure.generated_at === null || failure.classification === null
          ? null
          : { at: failure.generated_at, classification: failure.classification, agentId: failure.agent_id },
      leases: [...source.leasesOf(goal)].map(([todoId, lease]) => ({
        todoId,
        owner: lease.owner,
        expiresAt: lease.expires_at,
      })),
    });
  }
  return { atMs, goals };
}

/** One inbox row with the goal it belongs to (the tree's node and the quick pick's item carry it). */
export interface InboxEntry {
  goal: GoalSummary;
  row: GateInboxRow;
}

/**
 * The gate inbox of the workspace from the model's status items, each gate's open time from its
 * goal's rollout event log (kept once found: the time a gate was added never changes). A gate whose
 * event was not found is looked for again when the log changes: the CLI writes the state file
 * before it appends the `todo_add` event, so a rebuild between the two finds the gate, not its time.
 */
export class GateInboxSource {
  private readonly added = new Map<string, string>();
  /** Gates whose `todo_add` event the log did not hold, with the log's stamp when it was read. */
  private readonly missed = new Map<string, string>();

  constructor(private readonly source: AttentionSource) {}

  async entries(nowMs: number): Promise<InboxEntry[]> {
    const goalsByKey = new Map<string, GoalSummary>();
    const inputs: InboxGateInput[] = [];
    for (const goal of this.source.goals) {
      const status = this.source.detailsOf(goal)?.status;
      if (status === undefined || status.open_gates.length === 0) continue;
      goalsByKey.set(keyOf(goal), goal);
      const pending = status.open_gates
        .map((gate) => gate.todo_id)
        .filter((id) => !this.added.has(`${keyOf(goal)}#${id}`));
      if (pending.length > 0) {
        const stamp = await rolloutLogStamp(goal.runtimeRoot, goal.goalId);
        const unknown = pending.filter((id) => this.missed.get(`${keyOf(goal)}#${id}`) !== stamp);
        const found = unknown.length > 0 ? await todoAddedTimes(goal.runtimeRoot, goal.goalId, unknown) : new Map();
        for (const id of unknown) {
          const at = found.get(id);
          if (at !== undefined) this.added.set(`${keyOf(goal)}#${id}`, at);
          else this.missed.set(`${keyOf(goal)}#${id}`, stamp);
        }
      }
      for (const gate of status.open_gates)
        inputs.push({
          goalId: goal.goalId,
          registryPath: goal.registryPath,
          gate,
          addedAt: this.added.get(`${keyOf(goal)}#${gate.todo_id}`) ?? null,
        });
    }
    return gateInboxRows(inputs, nowMs).flatMap((row) => {
      const goal = goalsByKey.get(`${row.registry_path}#${row.goal_id}`);
      return goal === undefined ? [] : [{ goal, row }];
    });
  }
}
