import { z } from 'zod';
import { agentProfileForGoal, type GoalRecord } from '../registry/agentIds';
import { LoopxError } from '../errors';
import { createClaudeCodeExecutor } from './claudeCode';
import { createCodexExecutor } from './codex';
import { createCommandExecutor, type ProcessAgentExecutor, type ResumePolicy } from './command';
import { createOpencodeExecutor } from './opencode';
import { ENV_NAME_PATTERN } from './process';
import type { AgentExecutor } from './types';
import { installedDemoAgent } from './installedDemoAgent';

export { installDemoAgent } from './installedDemoAgent';

/**
 * How an agent is run, configured per agent in the registry:
 *
 *   coordination.agent_profiles.<agent id>.executor = {
 *     preset: "claude-code" | "codex" | "opencode" | "command" | "demo" | "vscode-lm",  // alias: kind
 *     command?: ["claude"],            // argv of the tool (required for "command")
 *     args?: ["--model", "sonnet"],    // extra arguments after the preset's own
 *     timeout_minutes?: 20,
 *     env_allowlist?: ["MY_TOKEN"],    // variables passed through besides PATH, HOME, LANG and the preset's own
 *     resume?: "auto" | "never",       // auto: a turn on an in-progress todo resumes the agent's session
 *     max_output_bytes?: 1048576,
 *     estimated_cost_usd?: 0.05,       // one turn's usual usage, reserved at admission
 *     estimated_tokens?: 40000,
 *     vendor?: "copilot", family?: "gpt-4o", // vscode-lm only: which VS Code language model
 *     max_tokens_per_turn?: 32000       // vscode-lm only: prompt + reply tokens one turn may use
 *   }
 *
 * Unknown keys are refused, so a typo does not silently fall back to a default.
 */

export const EXECUTOR_PRESETS = ['claude-code', 'codex', 'opencode', 'command', 'demo', 'vscode-lm'] as const;
export type ExecutorPreset = (typeof EXECUTOR_PRESETS)[number];

/** Whether a turn on an in-progress todo continues the agent CLI's recorded session (default `auto`). */
export const RESUME_POLICIES = ['auto', 'never'] as const satisfies readonly ResumePolicy[];
export type { ResumePolicy };
/** The presets that run an agent CLI with sessions of its own, which `resume` applies to. */
export const SESSION_PRESETS: readonly ExecutorPreset[] = ['claude-code', 'codex', 'opencode'];

export const DEFAULT_TIMEOUT_MINUTES: Readonly<Record<ExecutorPreset, number>> = {
  'claude-code': 20,
  codex: 20,
  opencode: 20,
  command: 10,
  demo: 2,
  'vscode-lm': 5,
};

/**
 * `kind` is accepted as an alias of `preset` (the LoopX issues call the executor type
 * `executor.kind`): the parsed configuration always carries `preset`. Both given and different is refused.
 */
const ExecutorConfigInputSchema = z
  .strictObject({
    preset: z.enum(EXECUTOR_PRESETS).optional(),
    kind: z.enum(EXECUTOR_PRESETS).optional(),
    command: z.array(z.string().min(1)).min(1).optional(),
    args: z.array(z.string()).optional(),
    timeout_minutes: z
      .number()
      .positive()
      .max(24 * 60)
      .optional(),
    env_allowlist: z.array(z.string().regex(ENV_NAME_PATTERN, 'must be an environment variable name')).optional(),
    max_output_bytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .optional(),
    // What one turn of this agent usually costs: reserved at admission against max_cost_usd / max_tokens.
    estimated_cost_usd: z.number().min(0).optional(),
    estimated_tokens: z.number().int().min(0).optional(),
    // vscode-lm: which of VS Code's language models runs the turn, and how many tokens one turn may use.
    vendor: z.string().min(1).max(100).optional(),
    family: z.string().min(1).max(100).optional(),
    max_tokens_per_turn: z.number().int().min(256).optional(),
    // auto: when the plan says `resume` (a second turn on an in-progress todo), the agent CLI continues
    // the recorded session (claude --resume, codex exec resume, opencode --session); never: always a new one.
    resume: z.enum(RESUME_POLICIES).optional(),
  })
  .superRefine(({ kind, ...input }, ctx) => {
    if (input.preset !== undefined && kind !== undefined && input.preset !== kind) {
      ctx.addIssue({
        code: 'custom',
        path: ['kind'],
        message: `is an alias of preset and says '${kind}' while preset says '${input.preset}'; keep one of them`,
      });
      return;
    }
    const preset = input.preset ?? kind;
    if (preset === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['preset'],
        message: `is required (or its alias kind): one of ${EXECUTOR_PRESETS.join(', ')}`,
      });
      return;
    }
    const config = { ...input, preset };
    (config.env_allowlist ?? []).forEach((name, index) => {
      if (name.toUpperCase().startsWith('LOOPX_'))
        ctx.addIssue({
          code: 'custom',
          path: ['env_allowlist', index],
          message: `${name} is one of LoopX's own variables, which never reach an agent (LoopX sets the LOOPX_* an agent needs); remove it`,
        });
    });
    if (config.preset === 'command' && config.command === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['command'],
        message: 'is required for the command preset: the agent\'s argv, e.g. ["node", "agent.js"]',
      });
    }
    if (config.preset === 'demo' && (config.command !== undefined || config.args !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['command'],
        message: "the demo preset runs LoopX's built-in demo agent; it takes no command or args",
      });
    }
    if (config.preset === 'vscode-lm' && (config.command !== undefined || config.args !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['command'],
        message:
          "the vscode-lm preset runs one of VS Code's language models; it takes no command or args (use vendor and family)",
      });
    }
    if (config.resume !== undefined && !SESSION_PRESETS.includes(config.preset)) {
      ctx.addIssue({
        code: 'custom',
        path: ['resume'],
        message: `is only for the presets with agent sessions (${SESSION_PRESETS.join(', ')})`,
      });
    }
    if (config.preset !== 'vscode-lm') {
      for (const field of ['vendor', 'family', 'max_tokens_per_turn'] as const) {
        if (config[field] !== undefined)
          ctx.addIssue({ code: 'custom', path: [field], message: 'is only for the vscode-lm preset' });
      }
    }
  });

export const ExecutorConfigSchema = ExecutorConfigInputSchema.transform(({ kind, ...config }) => ({
  ...config,
  // superRefine above refused a configuration with neither.
  preset: (config.preset ?? kind) as ExecutorPreset,
}));
export type ExecutorConfig = z.infer<typeof ExecutorConfigSchema>;

/**
 * The executor configuration of one agent of a goal, or null when its profile has none.
 * An invalid one is an error naming the field and the fix.
 */
export function readAgentExecutorConfig(goal: GoalRecord, agentId: string): ExecutorConfig | null {
  const profile = agentProfileForGoal(goal, agentId);
  const raw = profile?.['executor'];
  if (raw === undefined || raw === null) return null;
  const parsed = ExecutorConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const goalId = String(goal['id'] ?? '');
    const problems = parsed.error.issues.map((i) => `${['executor', ...i.path.map(String)].join('.')}: ${i.message}`);
    throw new LoopxError(
      'executor_config_invalid',
      `goal '${goalId}', agent '${agentId}': coordination.agent_profiles.${agentId}.executor is invalid (${problems.join('; ')}); fix it in the registry (see docs/executors.md)`,
      { goal_id: goalId, agent_id: agentId, problems },
    );
  }
  return parsed.data;
}

export function executorTimeoutMs(config: ExecutorConfig): number {
  return Math.round((config.timeout_minutes ?? DEFAULT_TIMEOUT_MINUTES[config.preset]) * 60_000);
}

export interface ExecutorFactoryContext {
  /**
   * How to start the built-in demo agent (src/core/executors/demoAgentMain.ts) as a process:
   * the host knows whether it runs from a bundle or from source. See `demoAgentArgv`.
   */
  demoAgentArgv?: readonly string[];
}

/** Builds the executor an agent's configuration describes. */
export function createAgentExecutor(config: ExecutorConfig, context: ExecutorFactoryContext = {}): AgentExecutor {
  const demoAgentArgv = context.demoAgentArgv ?? installedDemoAgent();
  const common = {
    ...(config.env_allowlist !== undefined ? { envAllowlist: config.env_allowlist } : {}),
    ...(config.max_output_bytes !== undefined ? { maxOutputBytes: config.max_output_bytes } : {}),
  };
  const cli = {
    ...common,
    ...(config.command ? { command: config.command } : {}),
    ...(config.args ? { args: config.args } : {}),
    resume: config.resume ?? 'auto',
  };
  switch (config.preset) {
    case 'claude-code':
      return createClaudeCodeExecutor(cli);
    case 'codex':
      return createCodexExecutor(cli);
    case 'opencode':
      return createOpencodeExecutor(cli);
    case 'command':
      return createCommandExecutor([...(config.command ?? []), ...(config.args ?? [])], common);
    case 'vscode-lm':
      throw new LoopxError(
        'executor_unavailable_here',
        "the vscode-lm agent runs one of VS Code's language models, so it runs only inside VS Code (Run One Turn, Run Loop or @loopx /run); from a terminal, give the agent another executor preset",
        { preset: config.preset },
      );
    case 'demo': {
      if (demoAgentArgv === undefined || demoAgentArgv.length === 0) {
        throw new LoopxError(
          'demo_agent_unavailable',
          'the demo agent is not available in this build of LoopX; configure another executor preset',
        );
      }
      return createDemoExecutor(demoAgentArgv, common);
    }
  }
}

/** The built-in demo agent, run as a real process speaking LoopX's stdin/stdout protocol. */
export function createDemoExecutor(
  argv: readonly string[],
  options: { envAllowlist?: readonly string[]; maxOutputBytes?: number } = {},
): ProcessAgentExecutor {
  return createCommandExecutor(argv, { ...options, kind: 'demo' });
}
