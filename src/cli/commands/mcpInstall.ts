import * as path from 'node:path';
import { mcpInstall, type McpInstallResult } from '../../core/ops/mcpInstall';
import { operationCommand } from '../operationHandler';
import type { CliHandler } from './index';

/**
 * `loopx mcp install --target claude-code|codex|opencode|vscode [--execute]`: connects an agent to
 * `loopx mcp` by writing the server into its config. The server is started the way this CLI was: the
 * same Node (`process.execPath`; an Electron launched with ELECTRON_RUN_AS_NODE keeps that variable)
 * running the same CLI script, unless `--command` / `--cli` say otherwise.
 */

const STATUS_WORDS: Record<McpInstallResult['status'], [string, string]> = {
  created: ['created', 'would create'],
  updated: ['updated', 'would update'],
  unchanged: ['unchanged (already connected)', 'unchanged (already connected)'],
};

export function mcpInstallMarkdown(result: McpInstallResult): string {
  const word = STATUS_WORDS[result.status][result.dry_run ? 1 : 0];
  const lines = [
    `# LoopX MCP server for ${result.target}${result.dry_run ? ' (preview, nothing written)' : ''}`,
    '',
    `\`${result.config_file}\`: ${word}.`,
    '',
    `Server \`${result.server_name}\`: \`${[result.server.command, ...result.server.args].join(' ')}\``,
  ];
  if (result.diff !== '') lines.push('', '```diff', result.diff.trimEnd(), '```');
  if (result.dry_run && result.status !== 'unchanged') lines.push('', 'Run again with `--execute` to write it.');
  return lines.join('\n');
}

/** The script this CLI runs from (`out/cli.js` of the extension or package). */
function ownCliScript(): string | undefined {
  const script = process.argv[1];
  return script === undefined ? undefined : path.resolve(script);
}

const base = operationCommand(mcpInstall, mcpInstallMarkdown);

export const mcpInstallCommand: CliHandler = {
  ...base,
  run: (invocation) => {
    const script = ownCliScript();
    const defaults: Record<string, unknown> = {
      command: process.execPath,
      ...(script === undefined ? {} : { cli: script }),
      ...(invocation.ctx.env['ELECTRON_RUN_AS_NODE'] === '1' && process.versions['electron'] !== undefined
        ? { electronRunAsNode: true }
        : {}),
    };
    return base.run({ ...invocation, options: { ...defaults, ...definedOnly(invocation.options) } });
  },
};

function definedOnly(options: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}
