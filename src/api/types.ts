import type * as vscode from 'vscode';

/**
 * The API the LoopX extension exports to other extensions:
 *
 *   const api = await vscode.extensions.getExtension<LoopxExtensionApi>('loopx.loopx-vscode')?.activate();
 *
 * This file depends on nothing but `vscode`, so other extensions can copy it as it is. The API is
 * read-only: operations that change goals stay behind the editor's own confirmations. `apiVersion`
 * changes only with an incompatible change; fields may be added within a version. The shapes copy
 * the core's zod schemas; test/unit/api/typesPinned.test.ts fails the build if they drift apart.
 */

export const LOOPX_EXTENSION_ID = 'loopx.loopx-vscode';

/** A goal's quota settings after normalization. */
export interface LoopxQuota {
  /** Share of the window the goal may use, 0…1 (0 pauses it). */
  compute: number;
  window_hours: number;
  slot_minutes: number;
  allowed_slots: number;
  /** Only when the registry stores it; accounting recomputes spend from the run history. */
  spent_slots?: number;
}

/** One goal of a registry this workspace shows. */
export interface LoopxGoal {
  goalId: string;
  displayName: string;
  status: string;
  domain: string | null;
  /** The registry file the goal is listed in. */
  registryPath: string;
  projectRoot: string;
  runtimeRoot: string;
  /** Its ACTIVE_GOAL_STATE.md, or null when the registry names none. */
  stateFile: string | null;
  /** Registered agent ids. */
  agents: string[];
  quota: LoopxQuota;
}

export type LoopxTodoStatus = 'open' | 'done' | 'blocked' | 'deferred';
export type LoopxGateState = 'open' | 'rejected' | 'cancelled';

export interface LoopxGateBlock {
  gate_todo_id: string;
  relation: 'global_gate' | 'gate_targets_todo' | 'gate_covers_action' | 'projection_repair_required';
  gate_state: LoopxGateState;
}

export interface LoopxTodo {
  index: number;
  done: boolean;
  text: string;
  title: string;
  todo_id: string;
  todo_id_source: 'metadata' | 'generated';
  priority: string | null;
  status: LoopxTodoStatus;
  claimed_by: string | null;
  task_class: string | null;
  role: 'user' | 'agent';
  section: string;
  /** 1-based line of the checkbox in the state file. */
  line: number;
  metadata: Record<string, string>;
  /** For agent todos: the user gates holding it back. */
  blocked_by: LoopxGateBlock[];
}

export interface LoopxGate {
  todo_id: string;
  text: string;
  title: string;
  status: string;
  gate_state: LoopxGateState;
  line: number;
  blocks_agent: string | null;
  global_gate: boolean;
  unblocks_todo_ids: string[];
  decision_scope: string | null;
  decision_outcome: string | null;
  unscoped: boolean;
  blocked_todo_ids: string[];
  /** When the person should have decided (ISO-8601), or null. */
  due_at: string | null;
  /** When the gate was last written (its `updated_at`), or null. */
  updated_at: string | null;
}

/** What `loopx todo list --format json` prints. */
export interface LoopxTodoList {
  goal_id: string;
  state_file: string;
  count: number;
  todos: LoopxTodo[];
  open_gates: LoopxGate[];
  holding_gates: LoopxGate[];
  lane_gates_by_agent: Record<string, string[]>;
}

export interface LoopxGateList {
  goal_id: string;
  state_file: string;
  open_gates: LoopxGate[];
  holding_gates: LoopxGate[];
  agent_todos: { todo_id: string; claimed_by: string | null; blocked: boolean; blocked_by: LoopxGateBlock[] }[];
  lane_gates_by_agent: Record<string, string[]>;
}

export interface LoopxRoleCounts {
  total_count: number;
  open_count: number;
  done_count: number;
  blocked_count: number;
  deferred_count: number;
}

/** A drift warning between the state file and the run history; more fields per `kind`. */
export interface LoopxWarning {
  kind: string;
  severity: 'warning' | 'info';
  /** What is wrong and what to do, for people. */
  message: string;
  /** Stable while the same texts disagree. */
  id: string;
}

export interface LoopxGoalStatus {
  goal: LoopxGoal;
  /** Null when the state file cannot be read; `state_error` says why. */
  state: {
    state_file: string;
    updated_at: string | null;
    next_action: string | null;
    todos: { user: LoopxRoleCounts; agent: LoopxRoleCounts };
    open_gate_count: number;
    diagnostics: { parseable: boolean; warning_count: number; error_count: number };
  } | null;
  state_error: { code: string; message: string } | null;
  runs: {
    count: number;
    /** The newest run that speaks for the goal, as its run-index row. */
    latest_status_run: {
      generated_at?: string;
      classification?: string;
      recommended_action?: string | null;
      agent_id?: string | null;
      todo_id?: string | null;
    } | null;
  };
  warnings: LoopxWarning[];
}

export interface LoopxTodoQuery {
  role?: 'user' | 'agent';
  status?: LoopxTodoStatus;
  claimedBy?: string;
  /** Include done and deferred todos (default: only open and blocked). */
  includeTerminal?: boolean;
}

/** A turn of an agent on a goal ended (its run was recorded). */
export interface LoopxTurnEnded {
  goalId: string;
  registryPath: string;
  agentId: string | null;
  todoId: string | null;
  /** The run's classification, e.g. `validated_progress`. */
  classification: string;
  generatedAt: string;
}

/** A goal's quota settings or spend changed. */
export interface LoopxQuotaChanged {
  goalId: string;
  registryPath: string;
  quota: LoopxQuota;
}

/**
 * Operations that take a goal id look it up among `getGoals()` (in `registryPath` when given) and
 * reject with an error whose `code` is `goal_not_found` when it is not there.
 */
export interface LoopxExtensionApi {
  readonly apiVersion: 1;
  /** The extension's version. */
  readonly version: string;
  /** The goals of every registry the workspace shows, as last loaded. */
  getGoals(): readonly LoopxGoal[];
  getGoal(goalId: string, registryPath?: string): LoopxGoal | undefined;
  getGoalStatus(goalId: string, registryPath?: string): Promise<LoopxGoalStatus>;
  getTodos(goalId: string, query?: LoopxTodoQuery & { registryPath?: string }): Promise<LoopxTodoList>;
  getGates(goalId: string, registryPath?: string): Promise<LoopxGateList>;
  /** The goal's normalized quota settings, or undefined for an unknown goal. */
  getQuota(goalId: string, registryPath?: string): LoopxQuota | undefined;
  /** The goals were reloaded (files changed on disk, folders or settings changed). */
  readonly onDidChangeGoals: vscode.Event<readonly LoopxGoal[]>;
  readonly onDidEndTurn: vscode.Event<LoopxTurnEnded>;
  /** A goal's quota settings changed in its registry, or its spend changed. */
  readonly onDidChangeQuota: vscode.Event<LoopxQuotaChanged>;
}
