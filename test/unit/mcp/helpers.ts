import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer } from '../../../src/core/agentTools/mcpServer';
import { fixedClock } from '../../../src/core/clock';
import { REPO_ROOT } from '../../support/demoWorkspace';
import { runLoopx } from '../cli/run';

/** A project the server answers for: its folder, and the clock both the server and the CLI run at. */
export interface Project {
  dir: string;
  now: string;
}

/** An SDK client connected to an in-process server of `project` (the same server `loopx mcp` runs, without stdio). */
export async function connectInMemory(project: Project): Promise<Client> {
  const server = createMcpServer(() => ({
    cwd: project.dir,
    env: { HOME: project.dir },
    clock: fixedClock(project.now),
    homeDir: project.dir,
  }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'loopx-test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

/** tsx's loader by its path, so a process started in any folder (a project outside the repository) finds it. */
export const TSX_LOADER = pathToFileURL(path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

/** An SDK client talking to a real `loopx mcp` process over stdio (from source, through tsx). */
export async function connectStdio(project: Project, args: readonly string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', TSX_LOADER, path.join(REPO_ROOT, 'src', 'cli', 'main.ts'), 'mcp', ...args],
    cwd: project.dir,
    env: { PATH: process.env['PATH'] ?? '', HOME: project.dir, LOOPX_NOW: project.now },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'loopx-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** Calls a tool; returns the result with its structured content typed loosely. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult & { structured: Record<string, unknown> }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { ...result, structured: (result.structuredContent ?? {}) as Record<string, unknown> };
}

/** `loopx --format json …` in the project at its clock, in-process. */
export async function cliJson(project: Project, argv: string[]): Promise<Record<string, unknown>> {
  const run = await runLoopx(['--format', 'json', ...argv], {
    cwd: project.dir,
    env: { HOME: project.dir },
    now: project.now,
  });
  return JSON.parse(run.stdout) as Record<string, unknown>;
}
