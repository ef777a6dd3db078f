import { AGENT_ID_RULE, normalizeAgentId } from '../../core/agents/identity';
import { errorMessage, LoopxError } from '../../core/errors';
import { globalMarkdown } from '../../core/global/markdown';
import type { GlobalCommand } from '../../core/global/schemas';
import { loadGlobalSnapshot } from '../../core/global/snapshot';
import { globalUnavailable, globalView, parseTimeRange, type GlobalViewOptions } from '../../core/global/views';
import { registryProjectRoot, locateRegistry } from '../../core/registry/locate';
import type { CommandOutput } from '../context';
import type { CliHandler } from './index';
import { cliHomeDir } from './registry';
import { numericOption } from '../numbers';

/**
 * `loopx global-summary | global-gates | global-todos | global-risks`: read-only views over every
 * goal of the registry. Exit 1 with `ok:false, error:"Global status source unavailable."` when the
 * registry cannot be read; 2 for bad arguments.
 */
function globalCommand(command: GlobalCommand): CliHandler {
  return {
    configure: (cmd) => {
      cmd
        .option(
          '--agent-id <agent>',
          'look at the goals as this agent: goals it is registered on, its own and unclaimed todos',
        )
        .option('--limit <n>', 'rows listed per group (default 8; counts are always complete)')
        .option('--time-range <range>', 'window for run counts and stale checks, e.g. 24h, 7d, 90m (default 24h)');
    },
    run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
      const viewOptions = parseViewOptions(options);
      const homeDir = cliHomeDir(ctx);
      const registry = locateRegistry({
        flag: globals.registry,
        env: ctx.env,
        cwd: ctx.cwd,
        homeDir,
        runtimeRootOverride: globals.runtimeRoot,
      });
      let response;
      try {
        const snapshot = await loadGlobalSnapshot({
          registryPath: registry.path,
          homeDir,
          runtimeRootOverride: globals.runtimeRoot ?? null,
          clock: ctx.clock,
        });
        response = globalView(command, snapshot, viewOptions);
      } catch (error) {
        response = globalUnavailable(
          command,
          errorMessage(error),
          {
            projectRoots: [registryProjectRoot(registry.path)],
            homeDir,
            now: ctx.clock.now(),
            registryPath: registry.path,
          },
          viewOptions,
        );
      }
      return { ok: response.ok, json: response, markdown: globalMarkdown(response) };
    },
  };
}

function parseViewOptions(options: Record<string, unknown>): GlobalViewOptions {
  const result: GlobalViewOptions = {};
  if (typeof options['agentId'] === 'string') {
    const agentId = normalizeAgentId(options['agentId']);
    if (agentId === null)
      throw new LoopxError('usage', `--agent-id ${JSON.stringify(options['agentId'])} is not valid: ${AGENT_ID_RULE}`);
    result.agentId = agentId;
  }
  const limit = numericOption(options, 'limit', '--limit', { integer: true, min: 1, max: 1000 });
  if (limit !== undefined) result.limit = limit;
  if (options['timeRange'] !== undefined) {
    const text = String(options['timeRange']);
    try {
      parseTimeRange(text);
    } catch (error) {
      throw new LoopxError('usage', `--time-range: ${errorMessage(error)}`);
    }
    result.timeRange = text;
  }
  return result;
}

export const globalSummaryCommand = globalCommand('global-summary');
export const globalGatesCommand = globalCommand('global-gates');
export const globalTodosCommand = globalCommand('global-todos');
export const globalRisksCommand = globalCommand('global-risks');
