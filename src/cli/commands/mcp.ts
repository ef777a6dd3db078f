import * as fs from 'node:fs';
import * as path from 'node:path';
import { LoopxError } from '../../core/errors';
import { locateRegistryOf } from '../../core/ops/goalHandle';
import type { CommandOutput } from '../context';
import { cliEnvironment } from '../operationHandler';
import type { CliHandler } from './index';

/**
 * `loopx mcp [--project-root <dir>]`: the project's agent tools as an MCP server on stdio
 * (docs/mcp.md), until the client closes stdin. The project is found as every command finds it
 * (`--registry`, `LOOPX_REGISTRY`, `<project root>/.loopx/registry.json`), from the current folder
 * unless `--project-root` names another. stdout is the protocol's; the banner goes to stderr.
 *
 * A CLI command rather than an operation, like `serve-status`: it runs until its client leaves and
 * owns the process's stdin and stdout. The server and the SDK are loaded only here.
 */
export const mcpCommand: CliHandler = {
  configure: (command) => {
    command.option(
      '--project-root <dir>',
      "the project folder whose registry to serve (default: the current folder's)",
    );
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
    const root = projectRootOf(ctx.cwd, options['projectRoot']);
    const env = { ...cliEnvironment(ctx, globals), cwd: root };
    const registry = locateRegistryOf(env);
    const { serveMcp } = await import('../../core/agentTools/mcpServer.js');
    const served = await serveMcp(() => ({ ...env, clock: ctx.clock }));
    ctx.stderr(
      `loopx mcp: serving ${registry.path}${registry.exists ? '' : ' (not there yet: tools answer registry_missing)'} over stdio\n`,
    );
    await served.closed;
    return { ok: true, quiet: true, json: { ok: true }, markdown: '' };
  },
};

function projectRootOf(cwd: string, value: unknown): string {
  if (value === undefined) return cwd;
  const root = path.resolve(cwd, String(value));
  let isDirectory = false;
  try {
    isDirectory = fs.statSync(root).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory)
    throw new LoopxError(
      'usage',
      `--project-root ${JSON.stringify(value)}: not a folder (${root}); name the project folder`,
    );
  return root;
}
