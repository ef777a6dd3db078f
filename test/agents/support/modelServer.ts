/**
 * A scripted stand-in for the paid model APIs the agent CLIs call: the Anthropic Messages API
 * (`POST /v1/messages`, streaming SSE) for Claude Code and the OpenAI Responses API
 * (`POST /v1/responses`, streaming SSE) for Codex and opencode. It answers with real tool calls
 * (Write, Edit, Bash / shell, apply_patch …) so the CLI runs its own tools on the project, then with
 * a final text holding LoopX's result object.
 *
 * Which answer a request gets is decided by the conversation it carries, not by a counter: step N is
 * the answer after N earlier assistant turns in the request. That keeps the script right when a CLI
 * retries a request, sends a side request (a title, a token count) or resumes a session. Requests that
 * offer no tools (Claude Code's side requests on its small model) get a short plain text.
 *
 * Every request is logged (method, path, model, tool names, step) for the report; an unknown path is
 * answered 404 with a message naming it, so a CLI version that calls something new fails loudly.
 * Binds 127.0.0.1 on a free port: it runs inside the scenario's loopback-only network namespace.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { appendFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';

/** One answer of the script; `{{TURN_KEY}}` and `{{TODO_ID}}` in any string are filled from the prompt. */
export type ScriptedAnswer =
  | {
      kind: 'tool';
      name: string;
      input: Record<string, unknown>;
      text?: string;
      /** Responses API only: the tool namespace the call is in (Codex offers an MCP server's tools as `mcp__<server>`). */
      namespace?: string;
    }
  | { kind: 'text'; text: string }
  /** An HTTP error with the API's own error body. */
  | { kind: 'http_error'; status: number; errorType: string; message: string }
  /** Starts the stream, sends some text, then closes the connection without finishing the message. */
  | { kind: 'drop' }
  /** Accepts the request and never answers. */
  | { kind: 'hang' };

export interface ScriptedStep {
  /** Answers for successive attempts at this step (a retry gets the next one; the last one repeats). */
  attempts: ScriptedAnswer[];
  /** Tokens the API reports for this answer (default 1000 in, 100 out). */
  usage?: { input_tokens: number; output_tokens: number };
}

export interface ModelScript {
  steps: ScriptedStep[];
}

export interface LoggedRequest {
  at: string;
  method: string;
  path: string;
  model: string | null;
  stream: boolean;
  tools: string[];
  step: number | null;
  answer: string;
  /** A header a gateway would look at (present or not), to prove the CLI sent its key. */
  authorization: boolean;
}

export interface RunningModelServer {
  url: string;
  port: number;
  log: LoggedRequest[];
  /** The last conversation each API saw, for assertions on what the CLI sent back (tool results). */
  lastBodies: Record<string, unknown>[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

function fill(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === 'string') return value.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => vars[name] ?? whole);
  if (Array.isArray(value)) return value.map((v) => fill(v, vars));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, vars)]));
  return value;
}

/** All the text of a request body (system prompt, messages, input items), to find the turn key in. */
function allText(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) allText(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) allText(v, out);
  return out;
}

/** The turn key and todo id of the LAST LoopX prompt in the conversation (a resumed session holds earlier ones). */
function promptVars(body: Json): Record<string, string> {
  const text = allText(body.messages ?? body.input ?? []).join('\n');
  const last = (pattern: RegExp): string | undefined => [...text.matchAll(pattern)].at(-1)?.[1];
  const turnKey = last(/`turn_key` must be exactly `?(sha256:[0-9a-f]{16,})/g) ?? last(/(sha256:[0-9a-f]{16,})/g);
  const todoId = last(/- id: `([^`]+)`/g);
  return { TURN_KEY: turnKey ?? 'sha256:unknown', TODO_ID: todoId ?? 'unknown' };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sse(res: ServerResponse, event: string, data: Json): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** How many assistant turns the conversation already holds: the index of the step to answer. */
function anthropicStep(body: Json): number {
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  return messages.filter((m) => m.role === 'assistant').length;
}

function openaiStep(body: Json): number {
  const input = Array.isArray(body.input) ? (body.input as Json[]) : [];
  // One assistant turn = one run of consecutive output items (message / function_call / custom_tool_call …).
  let steps = 0;
  let inAssistant = false;
  for (const item of input) {
    const type = String(item.type ?? 'message');
    const assistant =
      (type === 'message' && item.role === 'assistant') ||
      type === 'function_call' ||
      type === 'custom_tool_call' ||
      type === 'local_shell_call' ||
      type === 'reasoning';
    if (assistant && !inAssistant) steps++;
    inAssistant = assistant;
  }
  return steps;
}

export async function startModelServer(script: ModelScript): Promise<RunningModelServer> {
  const log: LoggedRequest[] = [];
  const lastBodies: Json[] = [];
  const attemptsByStep = new Map<string, number>();
  const hanging = new Set<ServerResponse>();
  let ids = 0;

  function pick(
    api: string,
    step: number,
  ): { answer: ScriptedAnswer; usage: { input_tokens: number; output_tokens: number } } {
    const scripted = script.steps[Math.min(step, script.steps.length - 1)];
    const key = `${api}:${step}`;
    const attempt = attemptsByStep.get(key) ?? 0;
    attemptsByStep.set(key, attempt + 1);
    const attempts = scripted?.attempts ?? [{ kind: 'text', text: 'done' }];
    return {
      answer: attempts[Math.min(attempt, attempts.length - 1)] as ScriptedAnswer,
      usage: scripted?.usage ?? { input_tokens: 1000, output_tokens: 100 },
    };
  }

  function anthropicError(res: ServerResponse, status: number, type: string, message: string): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ type: 'error', error: { type, message } }));
  }

  function answerAnthropic(body: Json, res: ServerResponse, entry: LoggedRequest): void {
    const tools = Array.isArray(body.tools) ? (body.tools as Json[]) : [];
    const model = String(body.model ?? 'claude-sonnet-4-5');
    const sideRequest = tools.length === 0;
    const step = anthropicStep(body);
    const vars = promptVars(body);
    const picked = sideRequest
      ? { answer: { kind: 'text', text: 'OK' } as ScriptedAnswer, usage: { input_tokens: 10, output_tokens: 2 } }
      : pick('anthropic', step);
    entry.step = sideRequest ? null : step;
    const answer = fill(picked.answer, vars) as ScriptedAnswer;
    entry.answer = answer.kind;
    if (!sideRequest) lastBodies.push(body);
    if (answer.kind === 'http_error') return anthropicError(res, answer.status, answer.errorType, answer.message);
    if (answer.kind === 'hang') {
      hanging.add(res);
      return;
    }
    const id = `msg_${++ids}`;
    const blocks: Json[] = [];
    if (answer.kind === 'text' || answer.kind === 'drop')
      blocks.push({ type: 'text', text: answer.kind === 'text' ? answer.text : 'Working on' });
    if (answer.kind === 'tool') {
      if (answer.text) blocks.push({ type: 'text', text: answer.text });
      blocks.push({ type: 'tool_use', id: `toolu_${ids}`, name: answer.name, input: answer.input });
    }
    const stopReason = answer.kind === 'tool' ? 'tool_use' : 'end_turn';
    const usage = { input_tokens: picked.usage.input_tokens, output_tokens: picked.usage.output_tokens };
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: blocks,
          stop_reason: stopReason,
          stop_sequence: null,
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    sse(res, 'message_start', {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
      },
    });
    blocks.forEach((block, index) => {
      if (block.type === 'text') {
        sse(res, 'content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'text', text: '' },
        });
        sse(res, 'content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text: block.text },
        });
      } else {
        sse(res, 'content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        });
        sse(res, 'content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
        });
      }
      if (answer.kind !== 'drop') sse(res, 'content_block_stop', { type: 'content_block_stop', index });
    });
    if (answer.kind === 'drop') {
      res.socket?.destroy();
      return;
    }
    sse(res, 'message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    sse(res, 'message_stop', { type: 'message_stop' });
    res.end();
  }

  function openaiError(res: ServerResponse, status: number, type: string, message: string): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { type, message, code: type, param: null } }));
  }

  function answerResponses(body: Json, res: ServerResponse, entry: LoggedRequest): void {
    const step = openaiStep(body);
    const vars = promptVars(body);
    const picked = pick('openai', step);
    entry.step = step;
    const answer = fill(picked.answer, vars) as ScriptedAnswer;
    entry.answer = answer.kind;
    lastBodies.push(body);
    if (answer.kind === 'http_error') return openaiError(res, answer.status, answer.errorType, answer.message);
    if (answer.kind === 'hang') {
      hanging.add(res);
      return;
    }
    const responseId = `resp_${++ids}`;
    const model = String(body.model ?? 'gpt-5');
    const items: Json[] = [];
    const messageItem = (text: string): Json => ({
      type: 'message',
      id: `msg_${ids}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }],
    });
    if (answer.kind === 'text') items.push(messageItem(answer.text));
    if (answer.kind === 'tool') {
      if (answer.text) items.push(messageItem(answer.text));
      // A freeform (custom) tool such as Codex's apply_patch takes its input as one string.
      const custom = typeof answer.input.__custom_input === 'string';
      items.push(
        custom
          ? {
              type: 'custom_tool_call',
              id: `ctc_${ids}`,
              call_id: `call_${ids}`,
              name: answer.name,
              input: answer.input.__custom_input,
              status: 'completed',
            }
          : {
              type: 'function_call',
              id: `fc_${ids}`,
              call_id: `call_${ids}`,
              name: answer.name,
              ...(answer.namespace === undefined ? {} : { namespace: answer.namespace }),
              arguments: JSON.stringify(answer.input),
              status: 'completed',
            },
      );
    }
    const base = { id: responseId, object: 'response', created_at: Math.floor(Date.now() / 1000), model };
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...base, status: 'completed', output: items, usage: responsesUsage(picked.usage) }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    let seq = 0;
    const send = (type: string, data: Json): void => sse(res, type, { type, sequence_number: seq++, ...data });
    send('response.created', { response: { ...base, status: 'in_progress', output: [] } });
    send('response.in_progress', { response: { ...base, status: 'in_progress', output: [] } });
    if (answer.kind === 'drop') {
      const item = messageItem('Working on');
      send('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
      send('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: 'Working on' });
      res.socket?.destroy();
      return;
    }
    items.forEach((item, index) => {
      const added =
        item.type === 'message' ? { ...item, status: 'in_progress', content: [] } : { ...item, status: 'in_progress' };
      send('response.output_item.added', { output_index: index, item: added });
      if (item.type === 'message') {
        const text = String(((item.content as Json[])[0] as Json).text);
        send('response.content_part.added', {
          item_id: item.id,
          output_index: index,
          content_index: 0,
          part: { type: 'output_text', text: '', annotations: [] },
        });
        send('response.output_text.delta', { item_id: item.id, output_index: index, content_index: 0, delta: text });
        send('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text });
        send('response.content_part.done', {
          item_id: item.id,
          output_index: index,
          content_index: 0,
          part: (item.content as Json[])[0] as Json,
        });
      } else if (item.type === 'function_call') {
        send('response.function_call_arguments.delta', {
          item_id: item.id,
          output_index: index,
          delta: item.arguments,
        });
        send('response.function_call_arguments.done', {
          item_id: item.id,
          output_index: index,
          arguments: item.arguments,
        });
      }
      send('response.output_item.done', { output_index: index, item });
    });
    send('response.completed', {
      response: { ...base, status: 'completed', output: items, usage: responsesUsage(picked.usage) },
    });
    res.end();
  }

  function responsesUsage(usage: { input_tokens: number; output_tokens: number }): Json {
    return {
      input_tokens: usage.input_tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: usage.output_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input_tokens + usage.output_tokens,
    };
  }

  const server: Server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      let body: Json = {};
      try {
        body = raw === '' ? {} : (JSON.parse(raw) as Json);
      } catch {
        body = {};
      }
      const entry: LoggedRequest = {
        at: new Date().toISOString(),
        method: req.method ?? 'GET',
        path,
        model: typeof body.model === 'string' ? body.model : null,
        stream: body.stream === true,
        tools: Array.isArray(body.tools)
          ? (body.tools as Json[]).flatMap((t) => {
              const name = String(t.name ?? t.type ?? '?');
              // A Responses API namespace (Codex's MCP servers): itself, then `<namespace>/<tool>` for each tool in it.
              return t.type === 'namespace' && Array.isArray(t.tools)
                ? [name, ...(t.tools as Json[]).map((inner) => `${name}/${String(inner.name ?? '?')}`)]
                : [name];
            })
          : [],
        step: null,
        answer: '',
        authorization: req.headers.authorization !== undefined || req.headers['x-api-key'] !== undefined,
      };
      log.push(entry);
      // For finding out what a new CLI version sends: LOOPX_AGENTS_DUMP=<file> appends every request body.
      if (process.env['LOOPX_AGENTS_DUMP']) appendFileSync(process.env['LOOPX_AGENTS_DUMP'], `${path}\t${raw}\n`);
      if (req.method === 'POST' && /\/messages$/.test(path)) return answerAnthropic(body, res, entry);
      if (req.method === 'POST' && /\/messages\/count_tokens$/.test(path)) {
        entry.answer = 'count_tokens';
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ input_tokens: 1000 }));
      }
      if (req.method === 'POST' && /\/responses$/.test(path)) return answerResponses(body, res, entry);
      if (req.method === 'GET' && /\/models$/.test(path)) {
        entry.answer = 'models';
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ object: 'list', data: [], models: [] }));
      }
      entry.answer = '404';
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          type: 'error',
          error: { type: 'not_found_error', message: `the scripted model server has no ${req.method} ${path}` },
        }),
      );
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    log,
    lastBodies,
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.socket?.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Text of the tool results the CLI sent back to the model (Anthropic tool_result blocks, Responses tool outputs). */
export function toolResultText(bodies: Record<string, unknown>[]): string[] {
  const out: string[] = [];
  for (const body of bodies) {
    for (const message of (body.messages as Record<string, unknown>[] | undefined) ?? []) {
      const content = message.content;
      if (!Array.isArray(content)) continue;
      for (const block of content as Record<string, unknown>[]) {
        if (block.type !== 'tool_result') continue;
        const inner = block.content;
        out.push(
          typeof inner === 'string'
            ? inner
            : Array.isArray(inner)
              ? (inner as Record<string, unknown>[]).map((b) => String(b.text ?? '')).join('\n')
              : '',
        );
      }
    }
    for (const item of (body.input as Record<string, unknown>[] | undefined) ?? []) {
      if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
        const output = item.output;
        out.push(typeof output === 'string' ? output : JSON.stringify(output));
      }
    }
  }
  return [...new Set(out)];
}

/**
 * The text the CLI sent as the user's words and its own instructions (not tool results): Anthropic user
 * messages and `system`, OpenAI `instructions` and user/developer input messages. What proves a CLI expanded
 * an installed slash prompt or skill: its body is here, not the `/name` that was typed.
 */
export function promptText(bodies: Record<string, unknown>[]): string[] {
  const out: string[] = [];
  const texts = (content: unknown): void => {
    if (typeof content === 'string') out.push(content);
    else if (Array.isArray(content))
      for (const block of content as Record<string, unknown>[])
        if ((block.type === 'text' || block.type === 'input_text') && typeof block.text === 'string')
          out.push(block.text);
  };
  for (const body of bodies) {
    texts(body.system);
    texts(body.instructions);
    for (const message of (body.messages as Record<string, unknown>[] | undefined) ?? [])
      if (message.role === 'user') texts(message.content);
    for (const item of (body.input as Record<string, unknown>[] | undefined) ?? [])
      if ((item.type ?? 'message') === 'message' && (item.role === 'user' || item.role === 'developer'))
        texts(item.content);
  }
  return [...new Set(out)];
}
