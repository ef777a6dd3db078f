import type { Command } from 'commander';
import { configureGoal, parseGoalConfigChanges, type ConfigureGoalResult } from '../../core/agents/goalConfig';
import { checkGoalIdSegment } from '../../core/registry/goalId';
import { locateRegistry } from '../../core/registry/locate';
import type { CommandOutput } from '../context';
import { markdownTable } from '../output';
import type { CliHandler } from './index';
import { collect, usage } from './registerAgent';
import { cliHomeDir } from './registry';
import { numericOption } from '../numbers';

/** `loopx configure-goal`: preview, or with --execute write, a goal's quota, agents, write scope and spawn policy. */
export const configureGoalCommand: CliHandler = {
  configure: (command: Command) => {
    command
      .requiredOption('--goal-id <id>', 'the goal to configure')
      .option('--quota-compute <fraction>', 'share of each quota window the goal may use, 0 to 1 (0 pauses it)')
      .option('--quota-window-hours <hours>', 'length of the rolling quota window in whole hours (> 0)')
      .option(
        '--registered-agent <id>',
        'register an agent id (repeatable, commas allowed); never removes one',
        collect,
        undefined,
      )
      .option(
        '--write-scope <glob>',
        'a path glob the goal may write, relative to its repo (repeatable); replaces the list',
        collect,
        undefined,
      )
      .option('--spawn-allowed', 'allow the goal to run several agents at once')
      .option('--no-spawn-allowed', 'run one agent turn at a time')
      .option('--max-children <n>', 'how many agent turns may run at once when spawning is allowed')
      .option('--explore-harness', 'opt the goal in to the explore harness')
      .option('--no-explore-harness', 'opt the goal out of the explore harness')
      .option('--explore-harness-profile <profile>', 'generic, adaptive-resilient or moe-router')
      .option('--execute', 'write the registry (default: preview only)');
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
    const goalId = usage(() => checkGoalIdSegment(String(options['goalId'])));
    const changes = usage(() =>
      parseGoalConfigChanges({
        // Only the form is checked here; the library checks the ranges, with the original's messages.
        quotaCompute: numericOption(options, 'quotaCompute', '--quota-compute', {}),
        quotaWindowHours: numericOption(options, 'quotaWindowHours', '--quota-window-hours', {}),
        registeredAgents: options['registeredAgent'] as string[] | undefined,
        writeScope: options['writeScope'] as string[] | undefined,
        spawnAllowed: options['spawnAllowed'] as boolean | undefined,
        maxChildren: numericOption(options, 'maxChildren', '--max-children', { integer: true }),
        exploreHarness: options['exploreHarness'] as boolean | undefined,
        exploreHarnessProfile: options['exploreHarnessProfile'] as string | undefined,
      }),
    );
    const registry = locateRegistry({
      flag: globals.registry,
      env: ctx.env,
      cwd: ctx.cwd,
      homeDir: cliHomeDir(ctx),
      runtimeRootOverride: globals.runtimeRoot,
    });
    const result = await configureGoal({
      registryPath: registry.path,
      goalId,
      changes,
      execute: options['execute'] === true,
      clock: ctx.clock,
      env: ctx.env,
    });
    return { ok: result.ok, json: { ...result }, markdown: configureMarkdown(result) };
  },
};

function configureMarkdown(result: ConfigureGoalResult): string {
  const lines = [`# Configure goal ${result.goal_id}`, ''];
  lines.push(
    markdownTable(
      ['Field', 'Before', 'After', 'Changed'],
      Object.keys(result.after).map((field) => [
        `\`${field}\``,
        JSON.stringify(result.before[field]),
        JSON.stringify(result.after[field]),
        result.changed_fields.includes(field) ? 'yes' : '',
      ]),
    ),
  );
  if (result.orchestration.before !== result.orchestration.after) {
    lines.push('', `Orchestration: \`${result.orchestration.before}\` → \`${result.orchestration.after}\``);
  }
  lines.push('');
  if (result.dry_run)
    lines.push(result.changed ? 'Preview only; re-run with --execute to write the registry.' : 'Nothing would change.');
  else if (!result.written) lines.push('Nothing changed; the registry was not written.');
  else lines.push(`Written and read back: ${result.verified ? 'verified' : 'NOT verified'}.`);
  lines.push('', `Registry: \`${result.registry}\``);
  return lines.join('\n');
}
