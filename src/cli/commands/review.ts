import { reviewList, reviewListMarkdown, reviewRevert, type ReviewRevertResult } from '../../core/ops/review';
import { operationCommand } from '../operationHandler';

/** `loopx review list|revert`: the review queue's turns, and "Revert this turn" with its three-way check. */

function revertMarkdown(result: ReviewRevertResult): string {
  const lines = [`# Revert turn ${result.turn}${result.execute ? '' : ' (preview)'}`, ''];
  for (const f of result.files)
    lines.push(
      `- ${f.path}: ${f.conflict ? `CONFLICT (${f.conflict_reason ?? 'changed after the turn'})` : f.action} (${f.status} by the turn)`,
    );
  lines.push('', result.message);
  return `${lines.join('\n')}\n`;
}

export const reviewListCommand = operationCommand(reviewList, reviewListMarkdown);
export const reviewRevertCommand = operationCommand(reviewRevert, revertMarkdown);
