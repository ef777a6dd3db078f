import { Option } from 'commander';
import { isLoopxError, LoopxError } from '../../core/errors';
import { locateRegistry } from '../../core/registry/locate';
import { REFRESH_ARGUMENT_ERROR_CODES, refreshState } from '../../core/refresh/refreshState';
import type { ProgressScope, RefreshStatePayload } from '../../core/refresh/schemas';
import type { CommandOutput } from '../context';
import type { CliHandler } from './index';
import { cliHomeDir } from './registry';

/**
 * `loopx refresh-state`: records a snapshot run of a goal's state and, with `--next-action`,
 * rewrites the durable route first (goal scope only). `--dry-run` writes nothing and shows what
 * would change.
 */
export const refreshStateCommand: CliHandler = {
  configure: (command) => {
    command
      .requiredOption('--goal-id <id>', 'the goal to refresh')
      .requiredOption(
        '--classification <token>',
        'what happened, as a public-safe token (e.g. state_refreshed, validated_progress)',
      )
      .option('--next-action <text>', 'write this as the durable Next Action (goal scope only)')
      .option(
        '--recommended-action <text>',
        'record this recommended action instead of deriving it from the state file',
      )
      .option(
        '--agent-id <agent>',
        'the registered agent this refresh is for (required when the goal registers several)',
      )
      .addOption(
        new Option(
          '--progress-scope <scope>',
          'goal, or agent_lane (default: agent_lane with --agent-id, else goal)',
        ).choices(['goal', 'agent_lane']),
      )
      .option('--todo-id <id>', 'the todo this run delivered on')
      .option('--turn-instance-id <id>', 'the turn this run belongs to')
      .option('--delivery-batch-scale <scale>', 'size of the delivered batch, e.g. single_surface')
      .option('--delivery-outcome <outcome>', 'what the delivery achieved, e.g. outcome_progress')
      .option('--dry-run', 'write nothing; show what would change');
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
    const text = (key: string): string | null => (typeof options[key] === 'string' ? options[key] : null);
    const homeDir = cliHomeDir(ctx);
    const registry = locateRegistry({
      flag: globals.registry,
      env: ctx.env,
      cwd: ctx.cwd,
      homeDir,
      runtimeRootOverride: globals.runtimeRoot,
    });
    if (!registry.exists) {
      throw new LoopxError(
        'registry_missing',
        `registry file does not exist: ${registry.path}; pass --registry or run loopx bootstrap`,
        { registry: registry.path },
      );
    }
    let payload: RefreshStatePayload;
    try {
      payload = await refreshState(
        {
          registryPath: registry.path,
          goalId: String(options['goalId'] ?? ''),
          classification: String(options['classification'] ?? ''),
          nextAction: text('nextAction'),
          recommendedAction: text('recommendedAction'),
          agentId: text('agentId'),
          progressScope: text('progressScope') as ProgressScope | null,
          todoId: text('todoId'),
          turnInstanceId: text('turnInstanceId'),
          deliveryBatchScale: text('deliveryBatchScale'),
          deliveryOutcome: text('deliveryOutcome'),
          homeDir,
          runtimeRootOverride: globals.runtimeRoot ?? null,
        },
        { clock: ctx.clock, dryRun: options['dryRun'] === true, lock: { clock: ctx.clock, env: ctx.env } },
      );
    } catch (error) {
      if (isLoopxError(error) && REFRESH_ARGUMENT_ERROR_CODES.has(error.code))
        throw new LoopxError('usage', error.message, { ...error.details, code: error.code });
      throw error;
    }
    return { ok: true, json: payload, markdown: refreshMarkdown(payload) };
  },
};

function refreshMarkdown(payload: RefreshStatePayload): string {
  const update = payload.active_state_next_action_update;
  const scope = payload.progress_scope === 'agent_lane' ? `agent lane ${payload.agent_lane ?? ''}` : 'goal scope';
  const lines = [
    `# refresh-state: ${payload.goal_id}`,
    '',
    payload.dry_run
      ? `Dry run: nothing was written. The run would be recorded as \`${payload.json_path}\`.`
      : `Recorded run ${payload.generated_at} (${payload.classification}, ${scope}) as \`${payload.json_path}\`.`,
    '',
    `- Recommended action: ${payload.recommended_action} (from ${payload.recommended_action_source})`,
  ];
  if (update !== undefined) {
    const before = update.previous_next_action === null ? '(none)' : `"${update.previous_next_action}"`;
    if (!update.would_update) lines.push(`- Next Action: unchanged ("${update.next_action}")`);
    else if (update.updated)
      lines.push(
        `- Next Action: changed from ${before} to "${update.next_action}"; updated_at set to ${update.updated_at ?? ''}`,
      );
    else lines.push(`- Next Action: would change from ${before} to "${update.next_action}"`);
  } else {
    lines.push(
      `- Next Action: ${payload.state.next_action[0] !== undefined ? `"${payload.state.next_action[0]}"` : '(none)'} (not changed; use --next-action to change it)`,
    );
  }
  lines.push(
    `- State snapshot: sha256_16 ${payload.state.sha256_16}, updated_at ${payload.state.frontmatter['updated_at'] ?? '(none)'}`,
  );
  if (payload.state_projection_gap) lines.push('', `Warning: ${payload.state_projection_gap.message}`);
  return lines.join('\n');
}
