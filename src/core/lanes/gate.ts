import { isLoopxError } from '../errors';
import { parseStateDocument, type StateDocument, type TodoItem } from '../state/document';
import { isMergeLaneGate, MERGE_GATE_TITLE } from '../state/gates';
import { applyStateEdit } from '../state/stateFile';
import { addTodo, completeTodo, updateTodo, type OperationContext } from '../state/todos';
import type { LaneRef } from './lane';

/**
 * The "merge lane" gate (docs/lanes.md#merging-back): an ordinary user gate of the goal's state file,
 * in the original's format (`task_class=user_gate`), with three more metadata keys naming the lane
 * (`gate_kind=merge_lane lane_branch=… lane_agent=…`), which the original's parser keeps as it keeps
 * any key. It holds no agent back: the lane's agent keeps working while its commits wait for review.
 */

export const MERGE_GATE_KIND = 'merge_lane';

/** How often a gate edit is recomputed when another writer (a parallel lane's turn) changed the state file meanwhile. */
const CAS_ATTEMPTS = 8;

/** The state edit, computed again from the file's current text when someone else wrote it first. */
async function editWithRetry(
  statePath: string,
  edit: (text: string) => { text: string; changed: boolean },
  lock: { agentId?: string },
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await applyStateEdit(statePath, edit, { operation: 'lane merge gate', lock });
      return;
    } catch (error) {
      if (!isLoopxError(error, 'state_changed_concurrently') || attempt >= CAS_ATTEMPTS) throw error;
    }
  }
}

export function isMergeGate(item: TodoItem): boolean {
  return isMergeLaneGate(item);
}

function branchOf(item: TodoItem): string | undefined {
  return item.meta['lane_branch'] ?? MERGE_GATE_TITLE.exec(item.title)?.[1];
}

const TERMINAL = new Set(['done', 'superseded', 'cancelled']);

/** The lane's open merge gate, or undefined. */
export function openMergeGate(doc: StateDocument, branch: string): TodoItem | undefined {
  return doc.todos.find((t) => isMergeGate(t) && branchOf(t) === branch && !TERMINAL.has(t.status));
}

/** Every open merge gate of the document. */
export function openMergeGates(doc: StateDocument): TodoItem[] {
  return doc.todos.filter((t) => isMergeGate(t) && !TERMINAL.has(t.status));
}

/** The lane a merge gate's title names (the gate views carry the title, not the metadata), or null. */
export function mergeGateLaneOf(title: string): { branch: string; agentId: string } | null {
  const match = MERGE_GATE_TITLE.exec(title);
  return match?.[1] !== undefined && match[2] !== undefined ? { branch: match[1], agentId: match[2] } : null;
}

export function mergeGateText(ref: Pick<LaneRef, 'branch' | 'agentId'>): string {
  return `[P1] Review and merge lane ${ref.branch} (agent ${ref.agentId}) into main`;
}

/**
 * Opens the lane's merge gate when it has none open (idempotent: a second call, or a resumed turn,
 * finds it). Returns the gate's todo id.
 */
export async function ensureMergeGate(
  ref: Pick<LaneRef, 'branch' | 'agentId'>,
  options: { statePath: string; context: OperationContext; lock: { agentId: string } },
): Promise<{ todoId: string; opened: boolean }> {
  let todoId = '';
  let opened = false;
  await editWithRetry(
    options.statePath,
    (text) => {
      const existing = openMergeGate(parseStateDocument(text), ref.branch);
      if (existing !== undefined) {
        todoId = existing.todoId;
        return { text, changed: false };
      }
      const added = addTodo(
        text,
        {
          role: 'user',
          text: mergeGateText(ref),
          taskClass: 'user_gate',
          // Scoped to the lane's agent, as a multi-agent goal's gate must be (the original's contract); it
          // names no todo, so it holds none back, and LoopX's scheduler lets the agent go on (docs/lanes.md).
          gate: { blocksAgent: ref.agentId },
          extraMetadata: [
            ['gate_kind', MERGE_GATE_KIND],
            ['lane_branch', ref.branch],
            ['lane_agent', ref.agentId],
          ],
        },
        options.context,
      );
      todoId = added.summary.todo_id;
      opened = added.added === true;
      return added;
    },
    options.lock,
  );
  return { todoId, opened };
}

/** Closes the lane's open merge gate with an outcome (and evidence), adding `agentTodo` for the lane's agent when given. */
export async function resolveMergeGate(
  ref: Pick<LaneRef, 'branch' | 'agentId'>,
  options: {
    statePath: string;
    context: OperationContext;
    lock: { agentId?: string };
    outcome: 'approve' | 'reject' | 'cancel';
    evidence: string;
    agentTodo?: string | undefined;
  },
): Promise<{ gateTodoId: string | null; agentTodoId: string | null }> {
  let gateTodoId: string | null = null;
  let agentTodoId: string | null = null;
  await editWithRetry(
    options.statePath,
    (text) => {
      const gate = openMergeGate(parseStateDocument(text), ref.branch);
      let current = text;
      let changed = false;
      if (gate !== undefined) {
        gateTodoId = gate.todoId;
        current = completeTodo(
          current,
          {
            todoId: gate.todoId,
            evidence: options.evidence,
            decisionOutcome: options.outcome,
            noFollowUp: true,
            mergeApproval: options.outcome === 'approve',
          },
          options.context,
        ).text;
        changed = true;
      }
      if (options.agentTodo !== undefined) {
        const added = addTodo(
          current,
          { role: 'agent', text: options.agentTodo, claimedBy: ref.agentId, taskClass: 'advancement_task' },
          options.context,
        );
        agentTodoId = added.summary.todo_id;
        current = added.text;
        changed = true;
      }
      return { text: current, changed };
    },
    options.lock,
  );
  return { gateTodoId, agentTodoId };
}

/** Writes what a merge attempt found on the open gate (its note: the conflicting files or overlaps). */
export async function noteMergeGate(
  ref: Pick<LaneRef, 'branch'>,
  options: { statePath: string; context: OperationContext; lock: { agentId?: string }; note: string },
): Promise<void> {
  await editWithRetry(
    options.statePath,
    (text) => {
      const gate = openMergeGate(parseStateDocument(text), ref.branch);
      if (gate === undefined || gate.meta['note'] === options.note) return { text, changed: false };
      return updateTodo(text, { todoId: gate.todoId, note: options.note }, options.context);
    },
    options.lock,
  );
}
