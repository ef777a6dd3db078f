import * as fs from 'node:fs';
import * as path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { z } from 'zod';
import { writeFileAtomic } from '../fs/atomicWrite';
import { assertInside } from '../fs/contain';
import { readFileSafe } from '../fs/safeRead';
import { editCodexConfig, editJsonConfig } from './configEdit';
import {
  MCP_SCOPES,
  MCP_SERVER_NAME,
  mcpConfigFile,
  McpServerLaunchSchema,
  McpTargetSchema,
  type McpScope,
  type McpServerLaunch,
  type McpTarget,
} from './targets';

/**
 * `loopx mcp install`: writes LoopX's MCP server into one agent's config (see targets.ts), previewing
 * by default. The preview is the unified diff of the file; applying writes it atomically (temporary
 * file, fsync, rename), so the file holds the old text or the new, never half. Installing twice
 * changes nothing the second time.
 */

export const McpInstallResultSchema = z.object({
  ok: z.literal(true),
  schema_version: z.literal('loopx_mcp_install_v0'),
  target: McpTargetSchema,
  scope: z.enum(MCP_SCOPES),
  dry_run: z.boolean(),
  /** The config file, absolute. */
  config_file: z.string(),
  status: z.enum(['created', 'updated', 'unchanged']),
  /** False for a preview and for an unchanged file. */
  written: z.boolean(),
  server_name: z.literal(MCP_SERVER_NAME),
  server: McpServerLaunchSchema,
  /** The unified diff of the config file ('' when unchanged). */
  diff: z.string(),
});
export type McpInstallResult = z.infer<typeof McpInstallResultSchema>;

export interface McpInstallRequest {
  target: McpTarget;
  scope: McpScope;
  projectRoot: string;
  homeDir: string;
  env: NodeJS.ProcessEnv;
  launch: McpServerLaunch;
  dryRun: boolean;
}

async function readIfExists(file: string): Promise<string | null> {
  try {
    return await readFileSafe(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

export async function installMcpServer(request: McpInstallRequest): Promise<McpInstallResult> {
  const file = mcpConfigFile(request.target, request.scope, request.projectRoot, request.homeDir, request.env, (f) =>
    fs.existsSync(f),
  );
  // A project file stays inside the project, even through a symlink; a user file inside its own folder.
  const within = request.scope === 'project' ? request.projectRoot : path.dirname(file);
  assertInside(within, file);
  const existing = await readIfExists(file);
  const edit =
    request.target === 'codex'
      ? editCodexConfig(file, existing, request.launch)
      : editJsonConfig(request.target, file, existing, request.launch);
  const status = existing === null ? 'created' : edit.changed ? 'updated' : 'unchanged';
  const write = !request.dryRun && status !== 'unchanged';
  if (write) await writeFileAtomic(file, edit.text, { within });
  const shown = request.scope === 'project' ? path.relative(request.projectRoot, file).split(path.sep).join('/') : file;
  return {
    ok: true,
    schema_version: 'loopx_mcp_install_v0',
    target: request.target,
    scope: request.scope,
    dry_run: request.dryRun,
    config_file: file,
    status,
    written: write,
    server_name: MCP_SERVER_NAME,
    server: request.launch,
    diff:
      status === 'unchanged'
        ? ''
        : createTwoFilesPatch(shown, shown, existing ?? '', edit.text, '', '', { context: 3 }),
  };
}
