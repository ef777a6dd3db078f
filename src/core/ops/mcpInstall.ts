import * as path from 'node:path';
import { z } from 'zod';
import { LoopxError } from '../errors';
import { installMcpServer, type McpInstallResult } from '../mcpInstall/install';
import { MCP_SCOPES, MCP_TARGETS, mcpServerLaunch } from '../mcpInstall/targets';
import { expandHome } from '../registry/locate';
import { defineOperation } from './operation';

/**
 * `mcp install`: connects an agent to LoopX's MCP server (`loopx mcp --project-root <project>`) by
 * writing the server into that agent's config file: Claude Code's `.mcp.json`, Codex's
 * `.codex/config.toml` (or `~/.codex/config.toml` with scope user), opencode's `opencode.json`, VS Code's
 * `.vscode/mcp.json`. Previews (the file's diff) unless `execute`; the user's other entries, comments
 * and formatting are kept; a config that does not parse is refused and left as it is.
 */

export { MCP_SCOPES, MCP_SERVER_NAME, MCP_TARGETS, type McpScope, type McpTarget } from '../mcpInstall/targets';
export type { McpInstallResult } from '../mcpInstall/install';

export const mcpInstall = defineOperation({
  key: 'mcpInstall',
  args: z.strictObject({
    target: z
      .enum(MCP_TARGETS)
      .meta({ placeholder: 'agent' })
      .describe(`the agent to connect: ${MCP_TARGETS.join(', ')}`),
    project: z
      .string()
      .optional()
      .meta({ placeholder: 'dir' })
      .describe('the project folder whose LoopX the server serves (default: the current folder)'),
    scope: z
      .enum(MCP_SCOPES)
      .default('project')
      .describe("project (the project's own config file) or user (Codex only: ~/.codex/config.toml)"),
    command: z
      .string()
      .min(1)
      .optional()
      .meta({ placeholder: 'program' })
      .describe('the Node that starts the server (default: the Node running this CLI)'),
    cli: z
      .string()
      .min(1)
      .optional()
      .meta({ placeholder: 'path' })
      .describe("LoopX's CLI script the server runs (default: this CLI)"),
    electronRunAsNode: z
      .boolean()
      .default(false)
      .meta({ hidden: true })
      .describe('the command is an Electron that runs as Node only with ELECTRON_RUN_AS_NODE=1 (VS Code desktop)'),
    execute: z.boolean().default(false).describe('write the config (default: preview the diff only)'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<McpInstallResult> => {
    if (args.scope === 'user' && args.target !== 'codex')
      throw new LoopxError(
        'usage',
        `--scope user is for --target codex only (${args.target} is installed per project)`,
      );
    if (args.command === undefined || args.cli === undefined)
      throw new LoopxError(
        'usage',
        'mcp install needs --command and --cli: the Node and the LoopX CLI script to start',
      );
    const projectRoot = path.resolve(env.cwd, expandHome(args.project ?? '.', env.homeDir));
    const cliScript = path.resolve(env.cwd, expandHome(args.cli, env.homeDir));
    return installMcpServer({
      target: args.target,
      scope: args.scope,
      projectRoot,
      homeDir: env.homeDir,
      env: env.env,
      launch: mcpServerLaunch({
        command: args.command,
        cliScript,
        projectRoot,
        electronRunAsNode: args.electronRunAsNode,
      }),
      dryRun: !args.execute,
    });
  },
});
