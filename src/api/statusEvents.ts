import type * as vscode from 'vscode';
import type { StatusDiff } from '../core/status/liveStatus';
import type { ApiEventSources } from './extensionApi';
import type { LoopxQuotaChanged, LoopxTurnEnded } from './types';

/**
 * The extension API's events, derived from the live status model's diffs: a run recorded by any
 * process (this editor, the CLI, an agent driven by its own scheduler) ends a turn, and a changed
 * quota summary (spend, reservations or settings) changes the quota.
 */
export function statusEvents(onDidChangeStatus: vscode.Event<StatusDiff>): ApiEventSources {
  const onDidEndTurn: vscode.Event<LoopxTurnEnded> = (listener, thisArgs, disposables) =>
    onDidChangeStatus(
      (diff) => {
        for (const { goalId, runs } of diff.newRuns) {
          // Oldest first, the order they happened in.
          for (const run of [...runs].reverse()) {
            listener.call(thisArgs, {
              goalId,
              registryPath: diff.registryPath,
              agentId: run.agent_id,
              todoId: run.todo_id,
              classification: run.classification ?? 'unknown',
              generatedAt: run.generated_at ?? '',
            });
          }
        }
      },
      undefined,
      disposables,
    );
  const onDidChangeQuota: vscode.Event<LoopxQuotaChanged> = (listener, thisArgs, disposables) =>
    onDidChangeStatus(
      (diff) => {
        for (const { goalId, quota } of diff.quotaChanged) {
          if (quota === null) continue;
          listener.call(thisArgs, {
            goalId,
            registryPath: diff.registryPath,
            quota: {
              compute: quota.compute,
              window_hours: quota.window_hours,
              slot_minutes: quota.slot_minutes,
              allowed_slots: quota.allowed_slots,
              spent_slots: quota.spent_slots,
            },
          });
        }
      },
      undefined,
      disposables,
    );
  return { onDidEndTurn, onDidChangeQuota };
}
