import * as path from 'node:path';
import { z } from 'zod';
import { checkHostResult, HOST_RESULT_SCHEMA_VERSION, type HostRequest, type HostResult } from '../protocol/contract';
import { renderTurnPrompt } from '../protocol/prompt';
import { extractObjectFromMessage } from './extract';
import { outputExcerpt } from './process';

/**
 * The surface-neutral half of the `vscode-lm` agent: the prompt it sends a language model, the reply
 * it expects back, and the write-scope check of the edits a reply proposes. The editor's half
 * (src/lm/) talks to `vscode.lm` and applies the edits with a `WorkspaceEdit`; nothing here imports
 * `vscode`, so the rules are unit-tested without an editor.
 *
 * A language model cannot edit files itself. It ends its reply with one JSON object:
 *
 *   { "edits": [{ "path": "notes/index.md", "content": "…whole new file…" }], "result": { …loopx_turn_result_v0… } }
 *
 * or with the bare result object when it changes no file. Every edit must lie inside the goal's
 * `coordination.write_scope`; one edit outside it refuses the whole reply (nothing is written).
 */

export const LM_REPLY_MAX_EDITS = 20;
/** Bytes of one proposed file; a model that writes more is refused rather than truncated. */
export const LM_EDIT_MAX_BYTES = 256 * 1024;
/** What one turn may use when the agent profile sets no `max_tokens_per_turn`. */
export const DEFAULT_LM_TOKENS_PER_TURN = 32_000;

const EditSchema = z.strictObject({
  path: z.string().min(1).max(500),
  content: z.string().refine((text) => Buffer.byteLength(text, 'utf8') <= LM_EDIT_MAX_BYTES, {
    message: `is over ${LM_EDIT_MAX_BYTES} bytes`,
  }),
});
export type LmEdit = z.infer<typeof EditSchema>;

const EnvelopeSchema = z.strictObject({
  edits: z.array(EditSchema).max(LM_REPLY_MAX_EDITS).default([]),
  result: z.record(z.string(), z.unknown()),
});

export type LmReplyReading =
  | { ok: true; result: HostResult; edits: LmEdit[] }
  | {
      ok: false;
      reason: 'malformed_result' | 'contract_violation' | 'result_too_large';
      message: string;
      problems: string[];
    };

/** Forward-slash, no leading `./`; null when the path is absolute or climbs out of the project. */
export function normalizeProjectPath(raw: string): string | null {
  if (raw.includes('\0') || path.posix.isAbsolute(raw) || path.win32.isAbsolute(raw) || /^~/.test(raw)) return null;
  const normalized = path.posix.normalize(raw.replace(/\\/g, '/'));
  if (normalized === '.' || normalized === '..' || normalized.startsWith('../')) return null;
  return normalized.replace(/^\.\//, '');
}

function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] ?? '';
    if (c === '*') {
      if (glob[i + 1] === '*') {
        // `**/` matches zero or more folders; a trailing `**` matches everything below.
        const slash = glob[i + 2] === '/';
        out += slash ? '(?:.*/)?' : '.*';
        i += slash ? 2 : 1;
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

/**
 * Whether a project-relative path lies in the write scope. A scope entry is a glob (`*`, `**`, `?`)
 * or a folder: `notes` and `notes/` both cover everything below `notes/`. An empty scope covers
 * nothing: an agent that edits files needs a write scope (`loopx configure-goal --write-scope`).
 */
export function inWriteScope(relativePath: string, scope: readonly string[]): boolean {
  const file = normalizeProjectPath(relativePath);
  if (file === null) return false;
  return scope.some((raw) => {
    const entry = normalizeProjectPath(raw.trim());
    if (entry === null) return false;
    if (/[*?]/.test(entry)) return globToRegExp(entry).test(file);
    return file === entry || file.startsWith(`${entry.replace(/\/$/, '')}/`);
  });
}

/** The reply format and the write scope, appended to the turn prompt. */
export function languageModelInstructions(writeScope: readonly string[]): string {
  const scope =
    writeScope.length === 0
      ? 'This goal has no write scope: propose no edits ("edits": []).'
      : `You may edit only files inside the goal's write scope: ${writeScope.map((s) => `\`${s}\``).join(', ')}.`;
  return [
    '## How to answer (vscode-lm)',
    '',
    'You cannot run commands or edit files yourself. End your reply with one JSON object, in a ```json fence:',
    '',
    '```json',
    `{ "edits": [{ "path": "relative/path.md", "content": "the whole new content of the file" }], "result": { "schema_version": "${HOST_RESULT_SCHEMA_VERSION}", … } }`,
    '```',
    '',
    `${scope} Each edit replaces (or creates) the whole file. List every edited path in result.changed_files.`,
    'An edit outside the write scope refuses the whole turn.',
  ].join('\n');
}

/** The reply format when the model is offered the workspace tools (src/core/executors/workspaceTools.ts). */
export function languageModelToolInstructions(writeScope: readonly string[]): string {
  const scope =
    writeScope.length === 0
      ? 'This goal has no write scope: apply_edit refuses every file.'
      : `apply_edit takes only files inside the goal's write scope: ${writeScope.map((s) => `\`${s}\``).join(', ')}.`;
  return [
    '## How to work (vscode-lm, with tools)',
    '',
    'Use the tools read_file, list_files and search_workspace to look at the project, and apply_edit to change a file.',
    `${scope} Paths are relative to the project; nothing outside it can be read or written.`,
    'Your edits are written only when your final result validates. When you are done, answer without a tool call,',
    'ending with the result object in a ```json fence:',
    '',
    '```json',
    `{ "schema_version": "${HOST_RESULT_SCHEMA_VERSION}", … }`,
    '```',
  ].join('\n');
}

/** The prompt of one turn on a model that calls tools: LoopX's turn prompt plus how to work with the tools. */
export function languageModelToolPrompt(request: HostRequest, writeScope: readonly string[]): string {
  return `${renderTurnPrompt(request, { size: 'full', mode: 'executor' })}\n\n${languageModelToolInstructions(writeScope)}\n`;
}

/** The prompt of one turn: LoopX's turn prompt plus the reply format. */
export function languageModelPrompt(request: HostRequest, writeScope: readonly string[]): string {
  return `${renderTurnPrompt(request, { size: 'full', mode: 'executor' })}\n\n${languageModelInstructions(writeScope)}\n`;
}

/**
 * Reads a model's reply: the envelope (or bare result), the result against the contract and the
 * request, and every edit against the write scope. Any problem refuses the whole reply.
 */
export function readLanguageModelReply(
  text: string,
  request: Pick<HostRequest, 'turn_key' | 'selected_todo'>,
  writeScope: readonly string[],
): LmReplyReading {
  const found = extractObjectFromMessage(text);
  if (found === null)
    return {
      ok: false,
      reason: 'malformed_result',
      message: 'the language model ended its reply with no JSON object; the prompt asks for one in a ```json fence',
      problems: [],
    };
  const bare = found['schema_version'] === HOST_RESULT_SCHEMA_VERSION;
  const envelope = EnvelopeSchema.safeParse(bare ? { result: found } : found);
  if (!envelope.success) {
    const problems = envelope.error.issues.map(
      (i) => `${i.path.length > 0 ? i.path.join('.') : '(reply)'}: ${i.message}`,
    );
    return {
      ok: false,
      reason: 'contract_violation',
      message: `the language model's reply is not {edits, result}: ${problems.slice(0, 3).join('; ')}`,
      problems,
    };
  }
  const problems: string[] = [];
  const edits: LmEdit[] = [];
  envelope.data.edits.forEach((edit, i) => {
    const normalized = normalizeProjectPath(edit.path);
    if (normalized === null)
      problems.push(`edits.${i}.path: ${JSON.stringify(edit.path)} must be relative to the project, without ".."`);
    else if (!inWriteScope(normalized, writeScope))
      problems.push(
        `edits.${i}.path: ${normalized} is outside the goal's write scope (${writeScope.length === 0 ? 'none is set' : writeScope.join(', ')})`,
      );
    else edits.push({ path: normalized, content: edit.content });
  });
  if (problems.length > 0)
    return {
      ok: false,
      reason: 'contract_violation',
      message: `the language model proposed edits LoopX refuses, so nothing was written: ${problems.slice(0, 3).join('; ')}`,
      problems,
    };
  const check = checkHostResult(envelope.data.result, {
    turn_key: request.turn_key,
    selected_todo: request.selected_todo,
  });
  if (!check.ok)
    return {
      ok: false,
      reason: check.reason,
      message: `the language model's result breaks the ${HOST_RESULT_SCHEMA_VERSION} contract: ${check.problems.slice(0, 3).join('; ')}`,
      problems: check.problems,
    };
  // The files the turn changed are the ones it edited, whatever the model listed.
  const changed = [...new Set([...check.result.changed_files, ...edits.map((e) => e.path)])];
  return { ok: true, result: { ...check.result, changed_files: changed }, edits };
}

/** A token count when the model's tokenizer is not at hand: characters / 4, rounded up (marked estimated). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The first 2 KiB of a model's reply for the journal, scrubbed of absolute paths and credentials. */
export function replyExcerpt(text: string, projectRoot: string, homeDir: string): string {
  const bytes = Buffer.from(text, 'utf8');
  return outputExcerpt(bytes, bytes.length, { projectRoots: [projectRoot], homeDir });
}
