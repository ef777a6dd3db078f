import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { z } from 'zod';
import { inWriteScope, LM_EDIT_MAX_BYTES, LM_REPLY_MAX_EDITS, normalizeProjectPath } from './languageModel';

/**
 * The tools a `vscode-lm` agent may call during its turn: read a file, list files, search the
 * workspace, apply an edit. Their definitions are plain data and their runner takes no `vscode`, so
 * the confinement rules are unit-tested without an editor (test/unit/executors/workspaceTools.test.ts).
 *
 * Confinement: every path is relative to the project; an absolute path, a `..` that climbs out, or a
 * symbolic link (the file or a folder on its way) that leads out of the project is refused, and the
 * refusal goes back to the model as the tool's result. An edit must lie in the goal's write scope and
 * needs a trusted workspace. Edits are staged, not written: the editor writes them in one
 * `WorkspaceEdit` only when the model's final result validates, so a failed turn writes nothing.
 */

export interface WorkspaceToolDefinition {
  name: string;
  description: string;
  /** JSON schema of the input, as `vscode.LanguageModelChatTool.inputSchema` takes it. */
  inputSchema: Record<string, unknown>;
}

export const WORKSPACE_TOOLS: readonly WorkspaceToolDefinition[] = [
  {
    name: 'read_file',
    description: 'Read a text file of the project. `path` is relative to the project folder. Shows your staged edits.',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string', description: 'relative to the project, e.g. notes/index.md' } },
      required: ['path'],
    },
  },
  {
    name: 'list_files',
    description: 'List the files below a folder of the project (the whole project when `folder` is omitted).',
    inputSchema: {
      type: 'object',
      properties: { folder: { type: 'string', description: 'relative to the project, e.g. notes' } },
    },
  },
  {
    name: 'search_workspace',
    description: 'Find the lines of project files that contain `query` (case-insensitive), optionally below `folder`.',
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string' }, folder: { type: 'string' } },
      required: ['query'],
    },
  },
  {
    name: 'apply_edit',
    description:
      "Edit a file inside the goal's write scope. With `old_text`, its one occurrence is replaced by `new_text`; without it, `new_text` becomes the whole file (created if missing). Edits are written when your final result validates.",
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string' }, old_text: { type: 'string' }, new_text: { type: 'string' } },
      required: ['path', 'new_text'],
    },
  },
];

export const WORKSPACE_TOOL_NAMES: readonly string[] = WORKSPACE_TOOLS.map((tool) => tool.name);

/** Bytes of a file `read_file` returns; a longer file is cut with a note. */
export const READ_MAX_BYTES = 64 * 1024;
const LIST_MAX_ENTRIES = 500;
const SEARCH_MAX_HITS = 100;
/** Folders no listing or search enters (not the project's own work). */
const SKIPPED_FOLDERS = new Set(['.git', 'node_modules']);

export interface WorkspaceToolContext {
  projectRoot: string;
  writeScope: readonly string[];
  /** VS Code's workspace trust: an untrusted workspace takes no edit. */
  trusted: boolean;
  /** Project-relative path → new content, the edits of this turn so far (written at its end). */
  staged: Map<string, string>;
}

export interface WorkspaceToolResult {
  ok: boolean;
  /** What goes back to the model as the tool result. */
  text: string;
}

export type ProjectPath = { ok: true; relative: string; absolute: string } | { ok: false; message: string };

/** The real path of the nearest existing ancestor of `target`, joined with the rest (which does not exist yet). */
export async function realAncestor(target: string): Promise<string> {
  let current = target;
  for (;;) {
    try {
      return path.join(await fs.realpath(current), path.relative(current, target));
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return target;
      current = parent;
    }
  }
}

function outside(root: string, real: string): boolean {
  const relative = path.relative(root, real);
  return relative.startsWith('..') || path.isAbsolute(relative);
}

/**
 * Resolves a path the model gave to a file of the project, or says why not: an absolute path, a `..`
 * out of the project, or a symbolic link that leads out of it (the file itself or a folder on its way).
 */
export async function resolveProjectPath(projectRoot: string, raw: string): Promise<ProjectPath> {
  const relative = raw.trim() === '' || raw.trim() === '.' ? '.' : normalizeProjectPath(raw.trim());
  if (relative === null)
    return {
      ok: false,
      message: `${JSON.stringify(raw)} is refused: give a path relative to the project folder, without ".." climbing out of it or an absolute path`,
    };
  const root = await fs.realpath(projectRoot).catch(() => path.resolve(projectRoot));
  const absolute = path.join(projectRoot, relative);
  if (outside(root, await realAncestor(absolute)))
    return {
      ok: false,
      message: `${relative} is refused: it leads out of the project through a symbolic link; LoopX reads and writes only inside the project`,
    };
  return { ok: true, relative, absolute };
}

const PathInput = z.object({ path: z.string().max(500) });
const FolderInput = z.object({ folder: z.string().max(500).optional() });
const SearchInput = z.object({ query: z.string().min(1).max(200), folder: z.string().max(500).optional() });
const EditInput = z.object({
  path: z.string().min(1).max(500),
  old_text: z.string().optional(),
  new_text: z.string(),
});

function refused(message: string): WorkspaceToolResult {
  return { ok: false, text: `Refused: ${message}` };
}

async function readText(ctx: WorkspaceToolContext, target: { relative: string; absolute: string }): Promise<string> {
  const staged = ctx.staged.get(target.relative);
  return staged ?? fs.readFile(target.absolute, 'utf8');
}

/** Project-relative files below `start`, symbolic links not followed, skipped folders not entered. */
async function walk(ctx: WorkspaceToolContext, start: string, limit: number): Promise<string[]> {
  const found: string[] = [];
  const queue = [start];
  while (queue.length > 0 && found.length < limit) {
    const folder = queue.shift() ?? '.';
    const entries = await fs.readdir(path.join(ctx.projectRoot, folder), { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const relative = folder === '.' ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(entry.name)) queue.push(relative);
      } else if (entry.isFile()) found.push(relative);
    }
  }
  for (const file of ctx.staged.keys())
    if ((start === '.' || file.startsWith(`${start}/`)) && !found.includes(file)) found.push(file);
  return found.sort().slice(0, limit);
}

function parse<T>(schema: z.ZodType<T>, input: unknown, tool: string): T | string {
  const parsed = schema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  return `${tool}: ${issue ? `${issue.path.join('.') || 'input'}: ${issue.message}` : 'bad input'}`;
}

/** Runs one tool call. Never throws: a refusal or a failure is a result the model reads. */
export async function runWorkspaceTool(
  name: string,
  input: unknown,
  ctx: WorkspaceToolContext,
): Promise<WorkspaceToolResult> {
  try {
    switch (name) {
      case 'read_file': {
        const args = parse(PathInput, input, name);
        if (typeof args === 'string') return refused(args);
        const target = await resolveProjectPath(ctx.projectRoot, args.path);
        if (!target.ok) return refused(target.message);
        const text = await readText(ctx, target).catch(() => null);
        if (text === null) return refused(`${target.relative} is not a readable file of the project`);
        const bytes = Buffer.from(text, 'utf8');
        return bytes.length <= READ_MAX_BYTES
          ? { ok: true, text }
          : {
              ok: true,
              text: `${bytes.subarray(0, READ_MAX_BYTES).toString('utf8')}\n[cut at ${READ_MAX_BYTES} bytes]`,
            };
      }
      case 'list_files': {
        const args = parse(FolderInput, input, name);
        if (typeof args === 'string') return refused(args);
        const target = await resolveProjectPath(ctx.projectRoot, args.folder ?? '.');
        if (!target.ok) return refused(target.message);
        const files = await walk(ctx, target.relative, LIST_MAX_ENTRIES);
        return { ok: true, text: files.length === 0 ? '(no files)' : files.join('\n') };
      }
      case 'search_workspace': {
        const args = parse(SearchInput, input, name);
        if (typeof args === 'string') return refused(args);
        const target = await resolveProjectPath(ctx.projectRoot, args.folder ?? '.');
        if (!target.ok) return refused(target.message);
        const needle = args.query.toLowerCase();
        const hits: string[] = [];
        for (const file of await walk(ctx, target.relative, LIST_MAX_ENTRIES)) {
          const text = await readText(ctx, { relative: file, absolute: path.join(ctx.projectRoot, file) }).catch(
            () => '',
          );
          if (text.includes('\0')) continue;
          text.split('\n').forEach((line, i) => {
            if (hits.length < SEARCH_MAX_HITS && line.toLowerCase().includes(needle))
              hits.push(`${file}:${i + 1}: ${line.slice(0, 200)}`);
          });
          if (hits.length >= SEARCH_MAX_HITS) break;
        }
        return {
          ok: true,
          text: hits.length === 0 ? `no line contains ${JSON.stringify(args.query)}` : hits.join('\n'),
        };
      }
      case 'apply_edit': {
        const args = parse(EditInput, input, name);
        if (typeof args === 'string') return refused(args);
        if (!ctx.trusted) return refused('this workspace is not trusted, so LoopX writes no file in it');
        const target = await resolveProjectPath(ctx.projectRoot, args.path);
        if (!target.ok) return refused(target.message);
        if (!inWriteScope(target.relative, ctx.writeScope))
          return refused(
            `${target.relative} is outside the goal's write scope (${ctx.writeScope.length === 0 ? 'none is set' : ctx.writeScope.join(', ')})`,
          );
        if (!ctx.staged.has(target.relative) && ctx.staged.size >= LM_REPLY_MAX_EDITS)
          return refused(`a turn edits at most ${LM_REPLY_MAX_EDITS} files`);
        let content = args.new_text;
        if (args.old_text !== undefined) {
          const current = await readText(ctx, target).catch(() => null);
          if (current === null) return refused(`${target.relative} does not exist; omit old_text to create it`);
          const at = current.indexOf(args.old_text);
          if (args.old_text === '' || at < 0) return refused(`old_text does not occur in ${target.relative}`);
          if (current.indexOf(args.old_text, at + 1) >= 0)
            return refused(`old_text occurs more than once in ${target.relative}; give more of the text`);
          content = current.slice(0, at) + args.new_text + current.slice(at + args.old_text.length);
        }
        if (Buffer.byteLength(content, 'utf8') > LM_EDIT_MAX_BYTES)
          return refused(`${target.relative} would be over ${LM_EDIT_MAX_BYTES} bytes`);
        ctx.staged.set(target.relative, content);
        return { ok: true, text: `staged the edit of ${target.relative}; it is written when your result validates` };
      }
      default:
        return refused(`there is no tool ${JSON.stringify(name)}; the tools are ${WORKSPACE_TOOL_NAMES.join(', ')}`);
    }
  } catch (error) {
    return refused(`${name} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
