import * as path from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import { laneList, type LaneListResult } from '../core/ops/lanes';
import { runOperation } from '../core/ops/run';
import type { GoalSummary } from '../core/ops/goalRows';
import { editorEnvironment } from '../commands/operationRunner';
import { goalKey, type WorkspaceModel } from './workspaceModel';

/** One file a lane is changing, as the editor marks it. */
export interface LaneFile {
  /** Absolute path in the main checkout. */
  file: string;
  goalId: string;
  registryPath: string;
  /** The agents whose unmerged lanes change it (two or more: an overlap). */
  agents: string[];
  branches: string[];
}

/**
 * The editor's view of the workspace's lanes (docs/lanes.md): `lane list` per goal, read again when
 * the goals change (a turn committed on a lane, a merge), so the Agents view, the file decorations
 * and the edit banner show each lane's branch, ahead/behind, pending merge and the files it changes.
 */
export class LaneState extends Disposable {
  private readonly changed = this.register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.changed.event;
  private byGoal = new Map<string, LaneListResult>();
  private files = new Map<string, LaneFile>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly model: WorkspaceModel) {
    super();
    this.register(model.onDidChangeGoals(() => this.schedule()));
    this.register({ dispose: () => clearTimeout(this.timer) });
    this.schedule();
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), 300);
  }

  /** Reads every goal's lanes again (one at a time; a goal whose folder is not a git repository has none). */
  refresh(): Promise<void> {
    this.running = this.running.then(async () => {
      const byGoal = new Map<string, LaneListResult>();
      for (const goal of this.model.goals) {
        try {
          const result = await runOperation(laneList, { goalId: goal.goalId }, editorEnvironment(goal.registryPath));
          if (result.lanes.length > 0) byGoal.set(goalKey(goal), result);
        } catch {
          // no lanes to show for this goal (no git, a goal being edited): nothing to mark
        }
      }
      this.byGoal = byGoal;
      this.files = collectFiles(this.model.goals, byGoal);
      this.changed.fire();
    });
    return this.running;
  }

  lanesOf(goal: GoalSummary): LaneListResult | undefined {
    return this.byGoal.get(goalKey(goal));
  }

  /** The lanes of one agent, across the workspace's goals. */
  lanesOfAgent(agentId: string): { goal: GoalSummary; lane: LaneListResult['lanes'][number] }[] {
    const out: { goal: GoalSummary; lane: LaneListResult['lanes'][number] }[] = [];
    for (const goal of this.model.goals)
      for (const lane of this.lanesOf(goal)?.lanes ?? []) if (lane.agent_id === agentId) out.push({ goal, lane });
    return out;
  }

  fileInfo(file: string): LaneFile | undefined {
    return this.files.get(path.resolve(file));
  }

  changedFiles(): LaneFile[] {
    return [...this.files.values()];
  }
}

function collectFiles(goals: readonly GoalSummary[], byGoal: Map<string, LaneListResult>): Map<string, LaneFile> {
  const files = new Map<string, LaneFile>();
  for (const goal of goals) {
    const result = byGoal.get(goalKey(goal));
    if (result === undefined) continue;
    for (const lane of result.lanes) {
      if (lane.ahead === 0) continue;
      for (const relative of lane.pending_files) {
        const file = path.resolve(result.main_checkout, relative);
        const entry = files.get(file) ?? {
          file,
          goalId: goal.goalId,
          registryPath: goal.registryPath,
          agents: [],
          branches: [],
        };
        entry.agents.push(lane.agent_id);
        entry.branches.push(lane.branch);
        files.set(file, entry);
      }
    }
  }
  return files;
}
