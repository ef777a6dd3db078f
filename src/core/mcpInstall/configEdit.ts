import { isDeepStrictEqual } from 'node:util';
// The ES module build: the package's `main` is a UMD wrapper whose relative requires a bundle cannot follow.
import { applyEdits, modify, parse, printParseErrorCode, type ParseError } from 'jsonc-parser/lib/esm/main.js';
import type * as SmolToml from 'smol-toml' with { 'resolution-mode': 'import' };
import { LoopxError } from '../errors';
import { MCP_SERVER_NAME, type McpServerLaunch, type McpTarget } from './targets';

// smol-toml ships CommonJS beside its ES module, under ES-module typings: its types are imported as such.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parse: parseToml, TomlError } = require('smol-toml') as typeof SmolToml;

/**
 * Puts LoopX's server entry into one agent config file's text, keeping everything else: the JSON
 * configs are edited in place with `jsonc-parser` (comments, order and formatting stay), the Codex TOML
 * gets its `[mcp_servers.loopx]` table replaced or appended as text and the result parsed again, which
 * must equal the old document plus our entry. A file that does not parse is refused (never rewritten);
 * so is one whose layout cannot take the entry without changing something else.
 */

export interface ConfigEdit {
  /** The new text, or the old one when the entry is already there as wanted. */
  text: string;
  changed: boolean;
}

function refuse(file: string, problem: string, fix: string, details: Record<string, unknown> = {}): LoopxError {
  return new LoopxError('mcp_config_unparseable', `${file}: ${problem}; nothing was written. ${fix}`, {
    file,
    ...details,
  });
}

function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The entry each JSON target stores, and where (its key path). */
function jsonEntry(target: Exclude<McpTarget, 'codex'>, launch: McpServerLaunch, document: JsonObject) {
  const env = Object.keys(launch.env).length > 0;
  switch (target) {
    case 'claude-code':
      return {
        keyPath: ['mcpServers', MCP_SERVER_NAME],
        value: { command: launch.command, args: launch.args, ...(env ? { env: launch.env } : {}) },
      };
    case 'vscode':
      return {
        keyPath: ['servers', MCP_SERVER_NAME],
        value: { type: 'stdio', command: launch.command, args: launch.args, ...(env ? { env: launch.env } : {}) },
      };
    case 'opencode': {
      const mcp = document['mcp'];
      // opencode's newer layout keeps servers under `mcp.servers`; the documented one directly under `mcp`.
      const nested = isObject(mcp) && isObject(mcp['servers']);
      return {
        keyPath: nested ? ['mcp', 'servers', MCP_SERVER_NAME] : ['mcp', MCP_SERVER_NAME],
        value: {
          type: 'local',
          command: [launch.command, ...launch.args],
          enabled: true,
          ...(env ? { environment: launch.env } : {}),
        },
      };
    }
  }
}

const NEW_FILE_HEADERS: Partial<Record<McpTarget, JsonObject>> = {
  opencode: { $schema: 'https://opencode.ai/config.json' },
};

function valueAt(document: JsonObject, keyPath: readonly string[]): unknown {
  let current: unknown = document;
  for (const key of keyPath) current = isObject(current) ? current[key] : undefined;
  return current;
}

export function editJsonConfig(
  target: Exclude<McpTarget, 'codex'>,
  file: string,
  existing: string | null,
  launch: McpServerLaunch,
): ConfigEdit {
  const source = existing ?? `${JSON.stringify(NEW_FILE_HEADERS[target] ?? {}, null, 2)}\n`;
  const errors: ParseError[] = [];
  const document: unknown = parse(source, errors, { allowTrailingComma: true, disallowComments: false });
  const first = errors[0];
  if (first !== undefined)
    throw refuse(
      file,
      `does not parse as JSON (${printParseErrorCode(first.error)} at line ${lineOf(source, first.offset)})`,
      'Fix the file (or move it away) and run the install again.',
      { line: lineOf(source, first.offset) },
    );
  if (!isObject(document))
    throw refuse(file, 'is not a JSON object', 'Make the file an object (`{ … }`) and run the install again.');
  const { keyPath, value } = jsonEntry(target, launch, document);
  for (let depth = 1; depth < keyPath.length; depth++) {
    const parent = valueAt(document, keyPath.slice(0, depth));
    if (parent !== undefined && !isObject(parent))
      throw refuse(
        file,
        `"${keyPath.slice(0, depth).join('.')}" is not an object`,
        'Make it an object of servers and run the install again.',
        { field: keyPath.slice(0, depth).join('.') },
      );
  }
  if (existing !== null && isDeepStrictEqual(valueAt(document, keyPath), value))
    return { text: existing, changed: false };
  const indent = /\n(\t| +)"/.exec(source)?.[1];
  const edits = modify(source, keyPath, value, {
    formattingOptions: {
      insertSpaces: indent === undefined || indent[0] === ' ',
      tabSize: indent === undefined || indent[0] === '\t' ? 2 : indent.length,
      eol: source.includes('\r\n') ? '\r\n' : '\n',
    },
  });
  let text = applyEdits(source, edits);
  if (!text.endsWith('\n')) text += '\n';
  return { text, changed: true };
}

/** A TOML basic string (JSON's escapes are TOML's, and JSON.stringify escapes every control character). */
function tomlString(value: string): string {
  return JSON.stringify(value);
}

/*
 * `required = true`: Codex starts MCP servers in the background and, for one it does not require, sends the
 * model its first request without waiting (Codex 0.171.0 offered LoopX's tools from the fourth request on, so
 * the heartbeat's should_run was an "unsupported call"). Required, `codex exec` waits for the server before the
 * first request, and fails loudly instead of running a turn ungoverned when LoopX's server cannot start.
 */
function codexTable(launch: McpServerLaunch, eol: string): string {
  const lines = [
    `[mcp_servers.${MCP_SERVER_NAME}]`,
    `command = ${tomlString(launch.command)}`,
    `args = [${launch.args.map(tomlString).join(', ')}]`,
  ];
  const env = Object.entries(launch.env);
  if (env.length > 0) lines.push(`env = { ${env.map(([k, v]) => `${tomlString(k)} = ${tomlString(v)}`).join(', ')} }`);
  lines.push('required = true');
  return lines.join(eol) + eol;
}

function codexEntry(launch: McpServerLaunch): JsonObject {
  return {
    command: launch.command,
    args: launch.args,
    ...(Object.keys(launch.env).length > 0 ? { env: launch.env } : {}),
    required: true,
  };
}

/** A parsed TOML document as plain JSON values (smol-toml's tables have no prototype; dates become text). */
function plainToml(text: string): JsonObject {
  return JSON.parse(JSON.stringify(parseToml(text))) as JsonObject;
}

function parseTomlOrRefuse(file: string, text: string): JsonObject {
  try {
    return plainToml(text);
  } catch (error) {
    if (error instanceof TomlError)
      throw refuse(
        file,
        `does not parse as TOML (line ${error.line}, column ${error.column}: ${error.message.split('\n')[0] ?? ''})`,
        'Fix the file (or move it away) and run the install again.',
        { line: error.line },
      );
    throw error;
  }
}

/** The table header of our server (`[mcp_servers.loopx]`, quoted or spaced alike). */
const OUR_HEADER = /^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*("loopx"|'loopx'|loopx)[ \t]*\][ \t]*(#.*)?$/;
/** Any table header; ours and our sub-tables (`[mcp_servers.loopx.env]`) end where another begins. */
const ANY_HEADER = /^[ \t]*\[/;
const OUR_SUBTABLE = /^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*("loopx"|'loopx'|loopx)[ \t]*\./;

function withoutOurs(document: JsonObject): JsonObject {
  const servers = document['mcp_servers'];
  if (!isObject(servers)) return document;
  const { [MCP_SERVER_NAME]: _ours, ...others } = servers;
  const rest = { ...document };
  if (Object.keys(others).length === 0) delete rest['mcp_servers'];
  else rest['mcp_servers'] = others;
  return rest;
}

export function editCodexConfig(file: string, existing: string | null, launch: McpServerLaunch): ConfigEdit {
  const wanted = codexEntry(launch);
  const source = existing ?? '';
  const before = parseTomlOrRefuse(file, source);
  const servers = before['mcp_servers'];
  if (servers !== undefined && !isObject(servers))
    throw refuse(file, '"mcp_servers" is not a table', 'Make it a table of servers and run the install again.', {
      field: 'mcp_servers',
    });
  const current = isObject(servers) ? servers[MCP_SERVER_NAME] : undefined;
  if (existing !== null && isDeepStrictEqual(current, wanted)) return { text: existing, changed: false };
  const eol = source.includes('\r\n') ? '\r\n' : '\n';
  const lines = source === '' ? [] : source.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  const start = lines.findIndex((line) => OUR_HEADER.test(line));
  let text: string;
  if (start >= 0) {
    let end = start + 1;
    while (end < lines.length && !(ANY_HEADER.test(lines[end] ?? '') && !OUR_SUBTABLE.test(lines[end] ?? ''))) end++;
    // Comments and blank lines just above the next table belong to it.
    while (end > start + 1 && /^[ \t]*(#.*)?$/.test(lines[end - 1] ?? '')) end--;
    const head = lines.slice(0, start).join(eol);
    const tail = lines.slice(end).join(eol);
    text = `${head}${start > 0 ? eol : ''}${codexTable(launch, eol)}${tail === '' ? '' : `${tail}${eol}`}`;
  } else if (current !== undefined) {
    throw refuse(
      file,
      `"mcp_servers.${MCP_SERVER_NAME}" is written without its own [mcp_servers.${MCP_SERVER_NAME}] table (inline or dotted keys)`,
      `Remove that entry (or write it as a [mcp_servers.${MCP_SERVER_NAME}] table) and run the install again.`,
      { field: `mcp_servers.${MCP_SERVER_NAME}` },
    );
  } else {
    const body = lines.join(eol);
    text = `${body}${body === '' ? '' : `${eol}${eol}`}${codexTable(launch, eol)}`;
  }
  // The text edit must change our entry and nothing else: parse the result and compare.
  const after = (() => {
    try {
      return plainToml(text);
    } catch {
      return null;
    }
  })();
  const ours = after !== null && isObject(after['mcp_servers']) ? after['mcp_servers'][MCP_SERVER_NAME] : undefined;
  if (after === null || !isDeepStrictEqual(ours, wanted) || !isDeepStrictEqual(withoutOurs(after), withoutOurs(before)))
    throw refuse(
      file,
      `its [mcp_servers.${MCP_SERVER_NAME}] table cannot be replaced without changing other settings`,
      `Remove the [mcp_servers.${MCP_SERVER_NAME}] table (and its sub-tables) by hand and run the install again.`,
      { field: `mcp_servers.${MCP_SERVER_NAME}` },
    );
  return { text, changed: true };
}
