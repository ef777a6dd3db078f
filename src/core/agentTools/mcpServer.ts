import type { Readable, Writable } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ErrorCode,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Resource,
} from '@modelcontextprotocol/sdk/types.js';
import { heartbeatPrompt } from '../ops/heartbeat';
import type { OperationEnvironment } from '../ops/operation';
import { runOperation } from '../ops/run';
import { status, type StatusPayload } from '../ops/status';
import { isGlobalRegistryAttentionItem } from '../status/globalRegistryAttention';
import { LOOPX_VERSION } from '../version';
import { AGENT_TOOLS } from './catalog';
import { agentToolFailure, invokeAgentTool } from './invoke';

/**
 * `loopx mcp`: the agent tools (catalog.ts) as a Model Context Protocol server, with the official
 * SDK's low-level `Server` (the tools' schemas are ours, generated from the operations, and a call is
 * checked by the operation's own zod schema, so errors name the field as the CLI does). One
 * long-lived process answers every call: no start-up per call; reads go through the same stamp-checked
 * caches as `loopx status` and `quota should-run` (the persistent status cache, the run index cache).
 *
 * - tools: each call runs its operation; the result is `structuredContent` (the JSON of
 *   `loopx … --format json`) plus a short text; a failure is `isError` with the LoopxError code.
 * - resources: per goal its status (`loopx://goals/<id>/status`) and its warnings
 *   (`loopx://goals/<id>/warnings`), from the status read model.
 * - prompts: `heartbeat`, the task body of one bounded turn (`loopx heartbeat-prompt`).
 */

export const MCP_SERVER_NAME = 'loopx';

const RESOURCE_PREFIX = 'loopx://goals/';
const RESOURCE_KINDS = ['status', 'warnings'] as const;
type ResourceKind = (typeof RESOURCE_KINDS)[number];

/** What every call of the server runs in: the project's environment (its clock is read per call). */
export type McpEnvironment = () => OperationEnvironment;

/** The MCP server of one project, not yet connected to a transport. */
export function createMcpServer(environment: McpEnvironment): Server {
  const server = new Server(
    { name: MCP_SERVER_NAME, version: LOOPX_VERSION, title: 'LoopX' },
    {
      capabilities: { tools: {}, resources: {}, prompts: {} },
      instructions:
        'LoopX governs this project: quota, gates, todos and evidence. A heartbeat turn is should_run (with agentId and a turnInstanceId you reuse on retries) → the work → todo_complete → refresh_state → spend_slot (execute: true), each with the same turnInstanceId and agentId. Ask a person for a decision by adding a user gate (todo_add); gates, merges, quota and executors are decided by people, not by tools.',
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: AGENT_TOOLS.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      annotations: { readOnlyHint: tool.readOnly, destructiveHint: false, openWorldHint: false },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    try {
      const result = await invokeAgentTool(name, args ?? {}, environment());
      return {
        content: [{ type: 'text', text: result.text }],
        structuredContent: result.structured,
        // The CLI exits 1 on such a result: the agent must not read it as done.
        ...(result.ok ? {} : { isError: true }),
      };
    } catch (error) {
      const failure = agentToolFailure(name, error);
      return { isError: true, content: [{ type: 'text', text: failure.text }], structuredContent: failure.structured };
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const payload = await statusOf(environment(), undefined);
    const resources: Resource[] = [];
    for (const item of goalItems(payload)) {
      const label = typeof item['display_name'] === 'string' ? item['display_name'] : item.goal_id;
      for (const kind of RESOURCE_KINDS)
        resources.push({
          uri: resourceUri(item.goal_id, kind),
          name: `${item.goal_id} ${kind}`,
          title: `${label}: ${kind}`,
          description:
            kind === 'status'
              ? "the goal's status item (as loopx status --format json lists it)"
              : "the goal's drift and contract warnings, with the command that resolves each",
          mimeType: 'application/json',
        });
    }
    return { resources };
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: RESOURCE_KINDS.map((kind) => ({
      uriTemplate: `${RESOURCE_PREFIX}{goalId}/${kind}`,
      name: `goal ${kind}`,
      mimeType: 'application/json',
    })),
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    const parsed = parseResourceUri(uri);
    if (parsed === null)
      throw new McpError(
        ErrorCode.InvalidParams,
        `unknown resource ${uri}: expected ${RESOURCE_PREFIX}<goal id>/status|warnings`,
      );
    let payload: StatusPayload;
    try {
      payload = await statusOf(environment(), parsed.goalId);
    } catch (error) {
      throw new McpError(ErrorCode.InvalidParams, agentToolFailure('resources/read', error).text);
    }
    const item = goalItems(payload).find((candidate) => candidate.goal_id === parsed.goalId);
    if (item === undefined) throw new McpError(ErrorCode.InvalidParams, `goal ${parsed.goalId} is not in the registry`);
    const body = parsed.kind === 'status' ? item : warningsOf(item);
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(body, null, 2) }] };
  });

  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: [
      {
        name: 'heartbeat',
        title: 'LoopX heartbeat turn',
        description:
          'the task body of one bounded turn for an agent: objective, its todo, open gates, budget left and the steps',
        arguments: [
          { name: 'goalId', description: 'the goal', required: true },
          { name: 'agentId', description: 'the registered agent the prompt is for', required: true },
          { name: 'size', description: 'thin (default), brief, compact or full', required: false },
        ],
      },
    ],
  }));

  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    if (request.params.name !== 'heartbeat')
      throw new McpError(ErrorCode.InvalidParams, `unknown prompt ${request.params.name}: the prompt is heartbeat`);
    const args = request.params.arguments ?? {};
    const size = args['size'];
    const input: Record<string, unknown> = { goalId: args['goalId'], agentId: args['agentId'] };
    if (size !== undefined && size !== '') input[size] = true;
    try {
      const result = await runOperation(heartbeatPrompt, input, environment());
      return {
        description: `LoopX heartbeat for ${result.agent_id} on ${result.goal_id}`,
        messages: [{ role: 'user', content: { type: 'text', text: result.prompt } }],
      };
    } catch (error) {
      throw new McpError(ErrorCode.InvalidParams, agentToolFailure('heartbeat', error).text);
    }
  });

  return server;
}

export interface McpStdioOptions {
  stdin?: Readable;
  stdout?: Writable;
}

/**
 * Serves the project over stdio until the client closes the stream (or the host calls `close`).
 * stdout carries only the protocol: nothing else may print there while it runs.
 */
export async function serveMcp(
  environment: McpEnvironment,
  options: McpStdioOptions = {},
): Promise<{ closed: Promise<void>; close: () => Promise<void> }> {
  const server = createMcpServer(environment);
  const transport: Transport = new StdioServerTransport(options.stdin, options.stdout);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  // The stdio transport does not notice the client's end of stdin itself: that is the client leaving.
  const stdin = options.stdin ?? process.stdin;
  stdin.once('end', () => void server.close());
  await server.connect(transport);
  return { closed, close: () => server.close() };
}

function statusOf(env: OperationEnvironment, goalId: string | undefined): Promise<StatusPayload> {
  return runOperation(status, goalId === undefined ? {} : { goalId }, env);
}

interface GoalItem extends Record<string, unknown> {
  goal_id: string;
}

function goalItems(payload: StatusPayload): GoalItem[] {
  const queue = (payload as unknown as { attention_queue?: { items?: unknown[] } }).attention_queue;
  return (queue?.items ?? []).filter(
    (item): item is GoalItem =>
      typeof item === 'object' &&
      item !== null &&
      typeof (item as GoalItem).goal_id === 'string' &&
      // A global registry finding's own item may carry a goal's id: the goal's resources are its own item's.
      !isGlobalRegistryAttentionItem(item as { source?: unknown }),
  );
}

function warningsOf(item: GoalItem): Record<string, unknown> {
  return {
    goal_id: item.goal_id,
    projection_warnings: item['projection_warnings'] ?? [],
    stale_latest_run_warning: item['stale_latest_run_warning'] ?? null,
    state_diagnostics: item['state_diagnostics'] ?? [],
    contract_diagnostics: item['contract_diagnostics'] ?? [],
  };
}

function resourceUri(goalId: string, kind: ResourceKind): string {
  return `${RESOURCE_PREFIX}${encodeURIComponent(goalId)}/${kind}`;
}

function parseResourceUri(uri: string): { goalId: string; kind: ResourceKind } | null {
  if (!uri.startsWith(RESOURCE_PREFIX)) return null;
  const [goal, kind, ...rest] = uri.slice(RESOURCE_PREFIX.length).split('/');
  if (goal === undefined || goal === '' || rest.length > 0) return null;
  if (!RESOURCE_KINDS.includes(kind as ResourceKind)) return null;
  try {
    return { goalId: decodeURIComponent(goal), kind: kind as ResourceKind };
  } catch {
    return null;
  }
}
