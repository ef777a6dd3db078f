import * as path from 'node:path';
import { z } from 'zod';

/**
 * Where each agent reads a project's MCP servers, and the entry LoopX's server gets there. From each
 * tool's documentation:
 *   - claude-code: `<project>/.mcp.json`, `mcpServers.<name>` = `{ command, args, env }` (project scope);
 *   - codex:       `<project>/.codex/config.toml` (read in trusted projects only), or `~/.codex/config.toml`
 *                  (`$CODEX_HOME`) with `--scope user`: `[mcp_servers.<name>]` with `command`, `args`, `env`;
 *   - opencode:    `<project>/opencode.json` (or an existing `opencode.jsonc`), `mcp.<name>` =
 *                  `{ type: "local", command: [program, ...args], enabled, environment }`; a config already in
 *                  the newer layout (`mcp.servers`) gets the entry there;
 *   - vscode:      `<project>/.vscode/mcp.json`, `servers.<name>` = `{ type: "stdio", command, args, env }`.
 */

export const MCP_TARGETS = ['claude-code', 'codex', 'opencode', 'vscode'] as const;
export const McpTargetSchema = z.enum(MCP_TARGETS);
export type McpTarget = z.infer<typeof McpTargetSchema>;

export const MCP_SCOPES = ['project', 'user'] as const;
export type McpScope = (typeof MCP_SCOPES)[number];

/** The name LoopX's server has in every agent's configuration (Claude Code's tools become `mcp__loopx__…`). */
export const MCP_SERVER_NAME = 'loopx';

/** How an agent starts LoopX's stdio MCP server: `<command> <args…>` with `env` added. */
export const McpServerLaunchSchema = z.object({
  command: z.string().min(1),
  args: z.array(z.string()),
  env: z.record(z.string(), z.string()),
});
export type McpServerLaunch = z.infer<typeof McpServerLaunchSchema>;

/**
 * The launch of `loopx mcp --project-root <project>`: the program (a Node) runs the CLI script; an
 * Electron that runs the extension (VS Code's desktop) is a Node only with ELECTRON_RUN_AS_NODE set.
 */
export function mcpServerLaunch(options: {
  command: string;
  cliScript: string;
  projectRoot: string;
  electronRunAsNode: boolean;
}): McpServerLaunch {
  return {
    command: options.command,
    args: [options.cliScript, 'mcp', '--project-root', options.projectRoot],
    env: options.electronRunAsNode ? { ELECTRON_RUN_AS_NODE: '1' } : {},
  };
}

/** The config file an install of `target` edits. */
export function mcpConfigFile(
  target: McpTarget,
  scope: McpScope,
  projectRoot: string,
  homeDir: string,
  env: NodeJS.ProcessEnv,
  exists: (file: string) => boolean,
): string {
  switch (target) {
    case 'claude-code':
      return path.join(projectRoot, '.mcp.json');
    case 'codex': {
      if (scope === 'project') return path.join(projectRoot, '.codex', 'config.toml');
      const codexHome = env['CODEX_HOME'];
      return path.join(
        codexHome !== undefined && codexHome !== '' ? codexHome : path.join(homeDir, '.codex'),
        'config.toml',
      );
    }
    case 'opencode': {
      const jsonc = path.join(projectRoot, 'opencode.jsonc');
      const json = path.join(projectRoot, 'opencode.json');
      return !exists(json) && exists(jsonc) ? jsonc : json;
    }
    case 'vscode':
      return path.join(projectRoot, '.vscode', 'mcp.json');
  }
}
