import { z } from 'zod';
import { firstSectionOf, sectionEntries, TERMINAL_STATUSES, type StateDocument, type TodoItem } from './document';
import type { TodoRole } from './sections';

/**
 * The structured projection of the state file (`active_state_structured_projection_v0`) with
 * diagnostics about its format. Every diagnostic carries the 1-based line it is about (null when
 * it is about something absent). A file that breaks the format is still projected as far as it
 * can be read.
 */
export const STRUCTURED_PROJECTION_SCHEMA_VERSION = 'active_state_structured_projection_v0';

export const DiagnosticSchema = z.looseObject({
  kind: z.string(),
  line: z.number().int().positive().nullable(),
  message: z.string(),
});
export type Diagnostic = z.infer<typeof DiagnosticSchema>;

export const StructuredTodoItemSchema = z.object({
  todo_id: z.string(),
  todo_id_source: z.enum(['metadata', 'generated']),
  role: z.enum(['user', 'agent']),
  source_section: z.string(),
  index: z.number().int().positive(),
  status: z.enum(['open', 'done', 'blocked', 'deferred']),
  done: z.boolean(),
  text: z.string(),
  priority: z.string().nullable(),
  title: z.string(),
  claimed_by: z.string().nullable(),
  task_class: z.string().nullable(),
  line: z.number().int().positive(),
  metadata: z.record(z.string(), z.string()),
});
export type StructuredTodoItem = z.infer<typeof StructuredTodoItemSchema>;

const RoleSummarySchema = z.object({
  total_count: z.number().int(),
  open_count: z.number().int(),
  done_count: z.number().int(),
  blocked_count: z.number().int(),
  deferred_count: z.number().int(),
  implicit_todo_id_count: z.number().int(),
  items: z.array(StructuredTodoItemSchema),
});
export type RoleSummary = z.infer<typeof RoleSummarySchema>;

export const StateDiagnosticsSchema = z.object({
  parseable: z.boolean(),
  migration_ready: z.boolean(),
  warning_count: z.number().int(),
  error_count: z.number().int(),
  warnings: z.array(DiagnosticSchema),
  errors: z.array(DiagnosticSchema),
});
export type StateDiagnostics = z.infer<typeof StateDiagnosticsSchema>;

export const StructuredProjectionSchema = z.object({
  schema_version: z.literal(STRUCTURED_PROJECTION_SCHEMA_VERSION),
  source: z.literal('markdown_active_state'),
  source_ref: z.string(),
  goal_id: z.string().optional(),
  frontmatter: z.record(z.string(), z.string()),
  next_action: z.object({ count: z.number().int(), first: z.string().nullable(), entries: z.array(z.string()) }),
  todos: z.object({ user: RoleSummarySchema, agent: RoleSummarySchema }),
  diagnostics: StateDiagnosticsSchema,
});
export type StructuredProjection = z.infer<typeof StructuredProjectionSchema>;

export interface ProjectionOptions {
  goalId?: string;
  sourceRef?: string;
  /** How many Next Action entries to expose (status reads 3). */
  nextActionLimit?: number;
}

export function projectStateDocument(doc: StateDocument, options: ProjectionOptions = {}): StructuredProjection {
  const nextSection = firstSectionOf(doc, 'next_action');
  const entries = nextSection ? sectionEntries(doc, nextSection, { limit: options.nextActionLimit ?? 3 }) : [];
  const projection: StructuredProjection = {
    schema_version: STRUCTURED_PROJECTION_SCHEMA_VERSION,
    source: 'markdown_active_state',
    source_ref: options.sourceRef ?? 'ACTIVE_GOAL_STATE.md',
    frontmatter: { ...(doc.frontMatter?.fields ?? {}) },
    next_action: { count: entries.length, first: entries[0] ?? null, entries },
    todos: { user: roleSummary(doc, 'user'), agent: roleSummary(doc, 'agent') },
    diagnostics: diagnoseStateDocument(doc),
  };
  if (options.goalId !== undefined) projection.goal_id = options.goalId;
  return projection;
}

export function structuredTodoItem(item: TodoItem): StructuredTodoItem {
  return {
    todo_id: item.todoId,
    todo_id_source: item.todoIdSource,
    role: item.role === 'archive' ? 'agent' : item.role,
    source_section: item.section.title,
    index: item.index,
    status: item.status,
    done: item.status === 'done',
    text: item.text,
    priority: item.priority,
    title: item.title,
    claimed_by: item.meta['claimed_by'] ?? null,
    task_class: item.meta['task_class'] ?? null,
    line: item.line + 1,
    metadata: { ...item.meta },
  };
}

function roleSummary(doc: StateDocument, role: TodoRole): RoleSummary {
  const items = doc.todos.filter((t) => t.role === role);
  const count = (predicate: (t: TodoItem) => boolean): number => items.reduce((n, t) => n + (predicate(t) ? 1 : 0), 0);
  return {
    total_count: items.length,
    open_count: count((t) => !TERMINAL_STATUSES.has(t.status)),
    done_count: count((t) => t.status === 'done'),
    blocked_count: count((t) => t.status === 'blocked'),
    deferred_count: count((t) => t.status === 'deferred'),
    implicit_todo_id_count: count((t) => t.todoIdSource === 'generated'),
    items: items.map(structuredTodoItem),
  };
}

/**
 * Format diagnostics. Warnings: missing_frontmatter, missing_next_action, missing_todo_sections,
 * implicit_todo_ids and the line-level problems found while parsing (bad percent-encoding,
 * unknown status, invalid todo_id, stray metadata words, extra metadata comments, a second
 * Next Action section, unterminated front matter). The only error is duplicate_todo_ids.
 */
export function diagnoseStateDocument(doc: StateDocument): StateDiagnostics {
  const warnings: Diagnostic[] = [];
  const errors: Diagnostic[] = [];
  if (doc.frontMatter === null) {
    warnings.push({
      kind: 'missing_frontmatter',
      line: 1,
      message: 'the file has no front matter; start it with a --- block holding status and updated_at',
    });
  }
  if (firstSectionOf(doc, 'next_action') === null) {
    warnings.push({
      kind: 'missing_next_action',
      line: null,
      message: 'no Next Action section; add "## Next Action" with the durable route as its first bullet',
    });
  }
  if (firstSectionOf(doc, 'user') === null && firstSectionOf(doc, 'agent') === null) {
    warnings.push({ kind: 'missing_todo_sections', line: null, message: 'no User Todo or Agent Todo section' });
  }
  const active = doc.todos.filter((t) => t.role !== 'archive');
  const implicit = active.filter((t) => t.todoIdSource === 'generated');
  if (implicit.length > 0) {
    warnings.push({
      kind: 'implicit_todo_ids',
      line: (implicit[0] as TodoItem).line + 1,
      message: `${implicit.length} todo(s) have no explicit todo_id; their derived ids change when their text or position changes`,
      count: implicit.length,
      lines: implicit.map((t) => t.line + 1),
      recommendation:
        "write an explicit todo_id into each todo's loopx:todo comment (any loopx todo edit does this for the todo it touches)",
    });
  }
  for (const issue of doc.issues) {
    const diagnostic: Diagnostic = { kind: issue.kind, line: issue.line, message: issue.message };
    if (issue.key !== undefined) diagnostic['key'] = issue.key;
    if (issue.value !== undefined) diagnostic['value'] = issue.value;
    warnings.push(diagnostic);
  }
  const byId = new Map<string, number[]>();
  for (const item of active) {
    const lines = byId.get(item.todoId) ?? [];
    lines.push(item.line + 1);
    byId.set(item.todoId, lines);
  }
  const duplicates = [...byId].filter(([, lines]) => lines.length > 1);
  if (duplicates.length > 0) {
    errors.push({
      kind: 'duplicate_todo_ids',
      line: (duplicates[0] as [string, number[]])[1][0] ?? null,
      message: `todo ids used more than once: ${duplicates.map(([id, lines]) => `${id} (lines ${lines.join(', ')})`).join('; ')}; give each todo its own todo_id`,
      todo_ids: duplicates.map(([id]) => id),
      lines: Object.fromEntries(duplicates),
    });
  }
  return {
    parseable: errors.length === 0,
    migration_ready: active.length > 0 && errors.length === 0 && implicit.length === 0,
    warning_count: warnings.length,
    error_count: errors.length,
    warnings,
    errors,
  };
}
