import { requireRegisteredAgent } from '../../core/agents/identity';
import { cliCommands } from '../../core/commands/catalog';
import { LoopxError, isLoopxError } from '../../core/errors';
import { DEFAULT_TIMEOUT_MINUTES, readAgentExecutorConfig } from '../../core/executors/config';
import { readQuotaConfig } from '../../core/quota/config';
import { computeLedger } from '../../core/quota/ledger';
import { selectTodo } from '../../core/quota/selection';
import { checkGoalIdSegment } from '../../core/registry/goalId';
import {
  locateRegistry,
  registryProjectRoot,
  resolveGoalStatePath,
  resolveRuntimeRoot,
} from '../../core/registry/locate';
import { findRawRegistryGoal, readRegistry } from '../../core/registry/read';
import { readGoalRuns } from '../../core/runtime/runIndex';
import { readStateFile } from '../../core/state/stateFile';
import {
  budgetBrief,
  buildTurnBrief,
  PROMPT_SIZES,
  renderTurnPrompt,
  type HeartbeatStep,
  type PromptSize,
} from '../../core/turn/prompt';
import type { CommandOutput } from '../context';
import type { CliHandler } from './index';
import { cliHomeDir } from './registry';

/**
 * `loopx heartbeat-prompt --goal-id G --agent-id A [--thin|--brief|--compact|--full]`: the task
 * body of one bounded turn (spec §7) for an agent driven from a terminal. Reads the registry,
 * the state file and the run index; writes nothing.
 */

function cliExists(words: string): boolean {
  return cliCommands().some((c) => c.cli === words);
}

/** The CLI steps of a heartbeat turn, limited to the commands this LoopX has. */
function heartbeatSteps(goalId: string, agentId: string, todoId: string | null): HeartbeatStep[] {
  const todo = todoId ?? '<todo_id>';
  const steps: HeartbeatStep[] = [];
  if (cliExists('quota should-run')) {
    steps.push({
      command: `loopx quota should-run --goal-id ${goalId} --agent-id ${agentId} --turn-instance-id "$LOOPX_TURN"`,
      when: 'first; stop if should_run is false',
    });
  }
  if (todoId !== null && cliExists('todo complete')) {
    steps.push({
      command: `loopx todo complete --goal-id ${goalId} --todo-id ${todo} --evidence "<evidence>" --successor-text "<next todo>"`,
      when: 'when the todo is done and work follows; before recording',
    });
  }
  if (cliExists('refresh-state')) {
    steps.push({
      command: `loopx refresh-state --goal-id ${goalId} --classification <classification> --delivery-batch-scale <scale> --delivery-outcome <outcome> --todo-id ${todo} --turn-instance-id "$LOOPX_TURN" --agent-id ${agentId}`,
      when: 'after the work and its validation',
    });
  }
  if (cliExists('quota spend-slot')) {
    steps.push({
      command: `loopx quota spend-slot --goal-id ${goalId} --slots 1 --source heartbeat --execute --todo-id ${todo} --turn-instance-id "$LOOPX_TURN" --agent-id ${agentId}`,
      when: 'exactly once, after recording',
    });
  }
  if (todoId !== null && cliExists('todo complete')) {
    steps.push({
      command: `loopx todo complete --goal-id ${goalId} --todo-id ${todo} --evidence "<evidence>" --no-follow-up`,
      when: 'when the todo is done and nothing follows; only after the spend',
    });
  }
  return steps;
}

function sizeOption(options: Record<string, unknown>): PromptSize {
  const chosen = PROMPT_SIZES.filter((size) => options[size] === true);
  if (chosen.length > 1)
    throw new LoopxError('usage', `choose one prompt size, not ${chosen.map((s) => `--${s}`).join(' and ')}`);
  return chosen[0] ?? 'thin';
}

export const heartbeatPromptCommand: CliHandler = {
  configure: (command) => {
    command
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--agent-id <agent>', 'the registered agent the prompt is for')
      .option('--thin', 'the essentials (default)')
      .option('--brief', 'plus the recorded next action, recent evidence and the validator')
      .option('--compact', 'plus user feedback, gate decisions and the full field rules')
      .option('--full', 'everything, as LoopX gives agents it runs itself');
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
    const size = sizeOption(options);
    let goalId: string;
    try {
      goalId = checkGoalIdSegment(String(options['goalId'] ?? ''));
    } catch (error) {
      throw isLoopxError(error) ? new LoopxError('usage', error.message, error.details) : error;
    }
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
    const document = await readRegistry(registry.path);
    const goal = findRawRegistryGoal(document, goalId);
    if (goal === undefined)
      throw new LoopxError('goal_not_found', `goal '${goalId}' is not in the registry ${registry.path}`, {
        goal_id: goalId,
        registry: registry.path,
      });
    const agentId = requireRegisteredAgent(goal, options['agentId'], { field: 'agent_id' });

    const statePath = resolveGoalStatePath(goal, goalId, homeDir);
    if (statePath === null)
      throw new LoopxError(
        'state_file_unresolved',
        `goal '${goalId}' has no state_file and no absolute repo; set state_file in ${registry.path}`,
        { goal_id: goalId },
      );
    const state = await readStateFile(statePath);
    const projectRoot = registryProjectRoot(registry.path);
    const runtimeRoot = resolveRuntimeRoot({
      registryPath: registry.path,
      registry: document,
      override: globals.runtimeRoot,
      homeDir,
    });
    const runs = (await readGoalRuns(runtimeRoot, goalId, { projectRoot, artifactChecks: 0 })).rows;

    const selection = selectTodo({
      doc: state.document,
      agentId,
      availableCapabilities: [],
      now: ctx.clock.now().getTime(),
    });
    const quota = readQuotaConfig(goal);
    const ledger = computeLedger({ rows: runs, projectRoot, windowHours: quota.slots.window_hours, clock: ctx.clock });
    const executor = readAgentExecutorConfig(goal, agentId);
    const turnTimeoutMinutes =
      executor === null ? null : (executor.timeout_minutes ?? DEFAULT_TIMEOUT_MINUTES[executor.preset]);
    const brief = buildTurnBrief({
      goal,
      agentId,
      doc: state.document,
      runs,
      selectedTodoId: selection.selected?.todo_id ?? null,
      budget: budgetBrief(quota, ledger, { turnTimeoutMinutes }),
    });
    const prompt = renderTurnPrompt(brief, {
      size,
      mode: 'heartbeat',
      heartbeatSteps: heartbeatSteps(goalId, agentId, brief.selected_todo?.todo_id ?? null),
    });
    return {
      ok: true,
      json: {
        ok: true,
        schema_version: 'loopx_heartbeat_prompt_v1',
        goal_id: goalId,
        agent_id: agentId,
        size,
        selected_todo_id: brief.selected_todo?.todo_id ?? null,
        prompt,
        brief,
      },
      markdown: prompt,
    };
  },
};
