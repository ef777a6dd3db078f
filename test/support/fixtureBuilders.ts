/**
 * Typed builders for the three files a goal lives in: the registry, the state file and the run index. Tests
 * describe only what differs from a plain goal; the builders write the rest as `loopx connect` and the turn
 * driver would. The run index is written through the real writer (`appendRun`), never by hand, so a row is
 * what a run of LoopX for VS Code leaves.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../src/core/clock';
import { appendRun } from '../../src/core/runtime/runIndexWrite';

/** One goal of `.loopx/registry.json`; fields beyond these are written as given (LoopX keeps unknown fields). */
export interface RegistryGoalFixture {
  id: string;
  status?: string;
  domain?: string;
  repo?: string;
  state_file?: string;
  adapter?: Record<string, unknown>;
  coordination?: { agent_model?: string; registered_agents?: string[]; [field: string]: unknown };
  [field: string]: unknown;
}

/** The state file's path inside a project, as `loopx connect` lays it out. */
export function stateFileOf(goalId: string): string {
  return path.join('.codex', 'goals', goalId, 'ACTIVE_GOAL_STATE.md');
}

/** A registry goal in `project`: active, its state file where `stateFileOf` puts it, `overrides` merged over. */
export function registryGoal(project: string, goalId: string, overrides: Partial<RegistryGoalFixture> = {}) {
  return { id: goalId, status: 'active', repo: project, state_file: stateFileOf(goalId), ...overrides };
}

/**
 * Writes `<project>/.loopx/registry.json` (schema 0.1, the runtime root `.loopx/runtime`, the goals given, any
 * top-level fields in `extra`) and returns its path.
 */
export function writeRegistry(
  project: string,
  goals: readonly RegistryGoalFixture[],
  extra: Record<string, unknown> = {},
): string {
  const file = path.join(project, '.loopx', 'registry.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const registry = { schema_version: '0.1', common_runtime_root: '.loopx/runtime', ...extra, goals };
  fs.writeFileSync(file, `${JSON.stringify(registry, null, 2)}\n`);
  return file;
}

/** One todo line of a state file with its metadata comment. */
export interface TodoFixture {
  id: string;
  text: string;
  done?: boolean;
  priority?: string;
  /** Metadata beside `todo_id`, written in this order (e.g. `{ status: 'open', task_class: 'advancement_task' }`). */
  meta?: Record<string, string>;
}

/** The lines of one todo: `- [ ] [P1] text` and its `<!-- loopx:todo … -->` comment. */
export function todoLines(todo: TodoFixture): string[] {
  const meta = { status: todo.done === true ? 'done' : 'open', ...todo.meta };
  const fields = Object.entries({ todo_id: todo.id, ...meta }).map(([key, value]) => `${key}=${value}`);
  const priority = todo.priority === undefined ? '' : `[${todo.priority}] `;
  return [`- [${todo.done === true ? 'x' : ' '}] ${priority}${todo.text}`, `  <!-- loopx:todo ${fields.join(' ')} -->`];
}

/** An `ACTIVE_GOAL_STATE.md`: front matter, a title, the user and agent todos, and a Next Action when given. */
export function stateFileText(
  options: {
    status?: string;
    title?: string;
    userTodos?: TodoFixture[];
    agentTodos?: TodoFixture[];
    nextAction?: string;
  } = {},
): string {
  const lines = ['---', `status: ${options.status ?? 'active'}`, '---', `# ${options.title ?? 'Goal'}`, ''];
  lines.push('## User Todo', ...(options.userTodos ?? []).flatMap(todoLines), '');
  lines.push('## Agent Todo', ...(options.agentTodos ?? []).flatMap(todoLines), '');
  if (options.nextAction !== undefined) lines.push('## Next Action', '', options.nextAction, '');
  return lines.join('\n');
}

/** Writes `text` as `goalId`'s state file in `project` (where `stateFileOf` puts it) and returns its path. */
export function writeStateFile(project: string, goalId: string, text: string): string {
  const file = path.join(project, stateFileOf(goalId));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

/** Where `goalId`'s run index is under a runtime root. */
export function runIndexPathOf(runtimeRoot: string, goalId: string): string {
  return path.join(runtimeRoot, 'goals', goalId, 'runs', 'index.jsonl');
}

/**
 * Appends one run at `at` through the real writer: its record (with `recommended_action` and `health_check`
 * filled in) and index row; the index row also carries `indexFields` and the record's `delivery_outcome`,
 * `turn_instance_id` and `settlement_identity`, as the turn driver writes them.
 */
export async function appendRunRow(options: {
  runtimeRoot: string;
  goalId: string;
  projectRoot: string;
  at: Date;
  record: Record<string, unknown>;
  indexFields?: Record<string, unknown>;
}): Promise<void> {
  const { record } = options;
  const carried = ['delivery_outcome', 'turn_instance_id', 'settlement_identity'].filter(
    (k) => record[k] !== undefined,
  );
  await appendRun({
    runtimeRoot: options.runtimeRoot,
    goalId: options.goalId,
    clock: fixedClock(options.at),
    projectRoot: options.projectRoot,
    record: { recommended_action: '', health_check: 'test', ...record },
    indexFields: { ...options.indexFields, ...Object.fromEntries(carried.map((k) => [k, record[k]])) },
    markdown: '# run\n',
  });
}

/** The rows of a run index as parsed JSON (none when the file does not exist). */
export function readRunIndexRows(file: string): Record<string, unknown>[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
