import type { GlobalSyncResult } from '../../core/globalRegistry/sync';
import { syncGlobal } from '../../core/ops/syncGlobal';
import { markdownTable } from '../output';
import { operationCommand } from '../operationHandler';

/** `loopx sync-global`: projects this project's goals into `<runtime root>/registry.global.json`. */

function syncMarkdown(result: GlobalSyncResult): string {
  const verb = result.dry_run ? 'would sync' : 'synced';
  const lines = [
    `# LoopX global sync${result.dry_run ? ' (dry run)' : ''}`,
    '',
    `- Project registry: \`${result.registry}\``,
    `- Global registry: \`${result.global_registry}\` (${result.global_goal_count} goal${result.global_goal_count === 1 ? '' : 's'})`,
    `- Result: ${result.goals.length} goal${result.goals.length === 1 ? '' : 's'} ${verb}; ${result.written ? 'written' : result.dry_run ? 'nothing written' : 'already up to date'}`,
  ];
  if (result.backup_path !== null) lines.push(`- Backup before route replacement: \`${result.backup_path}\``);
  if (result.goals.length > 0) {
    lines.push(
      '',
      markdownTable(
        ['Goal', 'Action', 'Notes'],
        result.goals.map((goal) => [
          goal.goal_id,
          goal.action,
          [
            goal.route_changes.length > 0 ? `route changed: ${goal.route_changes.join(', ')}` : '',
            goal.attention_carried.length > 0 ? `kept attention: ${goal.attention_carried.join(', ')}` : '',
          ]
            .filter((note) => note !== '')
            .join('; '),
        ]),
      ),
    );
  }
  if (result.dry_run) lines.push('', 'Run again without `--dry-run` to write.');
  return lines.join('\n');
}

export const syncGlobalCommand = operationCommand(syncGlobal, syncMarkdown);
