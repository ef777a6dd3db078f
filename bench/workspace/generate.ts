import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GENERIC_ADAPTER_KIND, defaultStateFile } from '../../src/core/registry/bootstrap';
import { PROJECT_REGISTRY_RELATIVE_PATH } from '../../src/core/registry/locate';
import { REGISTRY_SCHEMA_VERSION } from '../../src/core/registry/schema';
import { GOALS_DIR, RUN_INDEX_FILE, RUNS_DIR } from '../../src/core/runtime/layout';
import { runArtifactStem } from '../../src/core/runtime/runIndexWrite';
import { formatLocalIsoSeconds } from '../../src/core/runtime/time';
import { percentEncode } from '../../src/core/state/metadata';
import { seededRandom, type Random } from './random';

/**
 * Builds a synthetic LoopX workspace in the real on-disk format: `.loopx/registry.json`, one
 * ACTIVE_GOAL_STATE.md per goal (user todos, gates, agent todos in every status), and per goal a
 * run index whose rows each have their `.json` record and `.md` rendering, with quota spends
 * both inside and outside the 24-hour window. The same options always give the same bytes
 * (only the registry's absolute `repo` depends on where it is written).
 */

export const GENERATOR_VERSION = 4;
export const MANIFEST_FILE = '.bench-workspace.json';
/** The demo workspace's "now"; every generated timestamp is relative to it. */
export const DEFAULT_NOW = '2026-11-28T09:00:00Z';
export const RUNTIME_ROOT_RELATIVE = path.join('.loopx', 'runtime');
export const QUOTA_WINDOW_HOURS = 24;
/** Runs are spread over twice the quota window, so some spends are in it and some are not. */
const RUN_SPAN_MINUTES = 2 * QUOTA_WINDOW_HOURS * 60;
export const AGENT_IDS = ['codex-main', 'demo'] as const;

export interface WorkspaceShape {
  goals: number;
  /** Todos per goal, across the user and agent sections. */
  todos: number;
  /** Run-index rows per goal. */
  runs: number;
}

export const SIZE_NAMES = ['S', 'M', 'L', 'XL'] as const;
export type SizeName = (typeof SIZE_NAMES)[number];

export const SIZES: Readonly<Record<SizeName, WorkspaceShape>> = {
  S: { goals: 10, todos: 20, runs: 50 },
  M: { goals: 100, todos: 50, runs: 500 },
  L: { goals: 500, todos: 100, runs: 400 },
  XL: { goals: 2000, todos: 100, runs: 100 },
};

export interface GenerateOptions extends WorkspaceShape {
  seed: number;
  /** The workspace folder (created; must be empty or absent). */
  out: string;
  /** ISO instant all timestamps are relative to; default {@link DEFAULT_NOW}. */
  now?: string;
}

export interface WorkspaceCounts {
  goals: number;
  todos: number;
  userTodos: number;
  agentTodos: number;
  gates: number;
  openAgentTodos: number;
  runRows: number;
  spendRows: number;
  /** Spends whose `generated_at` lies in the last {@link QUOTA_WINDOW_HOURS} hours before `now`. */
  spendRowsInWindow: number;
  artifactFiles: number;
}

export interface GeneratedWorkspace {
  generatorVersion: number;
  shape: WorkspaceShape;
  seed: number;
  now: string;
  root: string;
  registryPath: string;
  runtimeRoot: string;
  goalIds: string[];
  counts: WorkspaceCounts;
}

export function goalIdAt(index: number): string {
  return `goal-${String(index + 1).padStart(4, '0')}`;
}

export function generateWorkspace(options: GenerateOptions): GeneratedWorkspace {
  checkShape(options);
  const root = path.resolve(options.out);
  if (fs.existsSync(root) && fs.readdirSync(root).length > 0) {
    throw new Error(`${root} is not empty; pass a new or empty --out folder (the generator never overwrites)`);
  }
  const now = new Date(options.now ?? DEFAULT_NOW);
  if (Number.isNaN(now.getTime())) throw new Error(`--now must be an ISO instant, got ${JSON.stringify(options.now)}`);
  const random = seededRandom(options.seed);
  const counts: WorkspaceCounts = {
    goals: 0,
    todos: 0,
    userTodos: 0,
    agentTodos: 0,
    gates: 0,
    openAgentTodos: 0,
    runRows: 0,
    spendRows: 0,
    spendRowsInWindow: 0,
    artifactFiles: 0,
  };
  const goalIds: string[] = [];
  const registryGoals: Record<string, unknown>[] = [];
  for (let index = 0; index < options.goals; index++) {
    const goalId = goalIdAt(index);
    goalIds.push(goalId);
    const stateFile = defaultStateFile(goalId);
    const state = renderStateFile(goalId, options.todos, now, random);
    writeFile(path.join(root, stateFile), state.text);
    registryGoals.push(registryEntry(goalId, index, root, stateFile, random));
    counts.goals++;
    counts.todos += state.userTodos + state.agentTodos;
    counts.userTodos += state.userTodos;
    counts.agentTodos += state.agentTodos;
    counts.gates += state.gates;
    counts.openAgentTodos += state.openAgentTodoIds.length;
    writeRunHistory(root, goalId, options.runs, now, state, random, counts);
  }
  const registryPath = path.join(root, PROJECT_REGISTRY_RELATIVE_PATH);
  const registry = {
    schema_version: REGISTRY_SCHEMA_VERSION,
    updated_at: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    common_runtime_root: RUNTIME_ROOT_RELATIVE,
    goals: registryGoals,
  };
  writeFile(registryPath, `${JSON.stringify(registry, null, 2)}\n`);
  const generated: GeneratedWorkspace = {
    generatorVersion: GENERATOR_VERSION,
    shape: { goals: options.goals, todos: options.todos, runs: options.runs },
    seed: options.seed,
    now: now.toISOString(),
    root,
    registryPath,
    runtimeRoot: path.join(root, RUNTIME_ROOT_RELATIVE),
    goalIds,
    counts,
  };
  writeFile(path.join(root, MANIFEST_FILE), `${JSON.stringify({ ...generated, goalIds: undefined }, null, 2)}\n`);
  return generated;
}

/** Reads the manifest of a generated workspace, or null when there is none. */
export function readWorkspaceManifest(root: string): Omit<GeneratedWorkspace, 'goalIds'> | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(root, MANIFEST_FILE), 'utf8')) as Omit<GeneratedWorkspace, 'goalIds'>;
  } catch {
    return null;
  }
}

function checkShape(shape: WorkspaceShape & { seed: number }): void {
  for (const [name, value] of Object.entries({
    goals: shape.goals,
    todos: shape.todos,
    runs: shape.runs,
    seed: shape.seed,
  })) {
    if (!Number.isInteger(value) || value < 0)
      throw new Error(`--${name} must be a whole number ≥ 0, got ${String(value)}`);
  }
  if (shape.goals > 99_999) throw new Error('--goals must be at most 99999');
}

function writeFile(file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

function registryEntry(
  goalId: string,
  index: number,
  root: string,
  stateFile: string,
  random: Random,
): Record<string, unknown> {
  return {
    id: goalId,
    display_name: `Synthetic goal ${index + 1}`,
    domain: random.pick(['docs', 'infra', 'research', 'product']),
    status: random.chance(0.9) ? 'active' : 'paused',
    role: 'controller',
    repo: root,
    state_file: stateFile,
    adapter: { kind: GENERIC_ADAPTER_KIND, status: 'connected' },
    quota: { compute: random.pick([1, 0.5, 0.25]), window_hours: QUOTA_WINDOW_HOURS, slot_minutes: 1 },
    spawn_policy: { mode: 'default', allowed: false, max_children: 0 },
    coordination: {
      agent_model: 'peer_v1',
      registered_agents: [...AGENT_IDS],
      peer_task_coordination: { coordinator_agent_id: 'codex-main' },
    },
  };
}

interface RenderedState {
  text: string;
  userTodos: number;
  agentTodos: number;
  gates: number;
  openAgentTodoIds: string[];
  nextAction: string;
}

const VERBS = ['Tidy', 'Document', 'Validate', 'Refactor', 'Measure', 'Review', 'Migrate', 'Fix'];
const NOUNS = [
  'the parser',
  'the notes index',
  'the release checklist',
  'the CI lane',
  'the quota report',
  'the onboarding guide',
  'broken links',
  'the cache layer',
];

function todoTitle(random: Random, n: number, goalId: string): string {
  return `${random.pick(VERBS)} ${random.pick(NOUNS)} (step ${n} of ${goalId}).`;
}

function metadataLine(fields: Record<string, string>): string {
  const tokens = Object.entries(fields).map(([key, value]) => `${key}=${percentEncode(value)}`);
  return `  <!-- loopx:todo ${tokens.join(' ')} -->`;
}

const pad4 = (n: number): string => String(n).padStart(4, '0');

/** Todo count split: a fifth are user todos (half of them gates), the rest agent todos. */
export function todoSplit(todos: number): { user: number; gates: number; agent: number } {
  const user = todos >= 2 ? Math.max(1, Math.round(todos * 0.2)) : 0;
  return { user, gates: Math.ceil(user / 2), agent: todos - user };
}

function renderStateFile(goalId: string, todos: number, now: Date, random: Random): RenderedState {
  const split = todoSplit(todos);
  const stamp = formatLocalIsoSeconds(new Date(now.getTime() - 3_600_000), 0);
  const agentLines: string[] = [];
  const openAgentTodoIds: string[] = [];
  const gateTargets: string[] = [];
  let nextAction = '';
  for (let i = 1; i <= split.agent; i++) {
    const todoId = `todo_a${pad4(i)}`;
    const title = todoTitle(random, i, goalId);
    const roll = i === 1 ? 1 : random.next();
    const status = roll < 0.35 ? 'done' : roll < 0.4 ? 'deferred' : roll < 0.45 ? 'blocked' : 'open';
    const fields: Record<string, string> = { todo_id: todoId, status, task_class: 'advancement_task' };
    if (status === 'done') {
      Object.assign(fields, {
        evidence: `npm test passed for step ${i}`,
        completed_at: stamp,
        completion_continuation: 'no_followup',
        no_followup: 'true',
      });
    } else if (status === 'deferred') {
      Object.assign(fields, { reason: 'waiting for capacity', resume_when: 'capacity_available' });
    } else {
      openAgentTodoIds.push(todoId);
      if (i > 1 && random.chance(0.25)) gateTargets.push(todoId);
      if (random.chance(0.2)) fields['claimed_by'] = random.pick(AGENT_IDS);
      if (random.chance(0.1)) fields['required_decision_scopes'] = 'write_scope:goal:main';
    }
    if (nextAction === '' && status === 'open') nextAction = title;
    const marker = status === 'done' ? 'x' : status === 'deferred' ? '-' : ' ';
    agentLines.push(`- [${marker}] [P${random.int(5)}] ${title}`, metadataLine(fields));
  }

  // The first gate always holds an open agent todo back, so every goal exercises gate analysis.
  const fallbackTarget = openAgentTodoIds[openAgentTodoIds.length - 1];
  if (gateTargets.length === 0 && fallbackTarget !== undefined) gateTargets.push(fallbackTarget);
  const userLines: string[] = [];
  for (let i = 1; i <= split.user; i++) {
    if (i <= split.gates) {
      const resolved = i > 1 && random.chance(0.25);
      const fields: Record<string, string> = {
        todo_id: `todo_g${pad4(i)}`,
        status: resolved ? 'done' : 'open',
        task_class: 'user_gate',
      };
      const target = gateTargets[i - 1];
      if (target !== undefined) fields['unblocks_todo_id'] = target;
      fields['decision_scope'] = i % 4 === 0 ? 'write_scope:goal:main' : `public_claim:goal:release-${i}`;
      // A multi-agent goal's gate names the agent it blocks and binds (LoopX's todo contract).
      fields['blocks_agent'] = i % 3 === 0 ? 'demo' : 'codex-main';
      fields['bound_agent'] = fields['blocks_agent'];
      if (resolved) Object.assign(fields, { decision_outcome: 'approve', completed_at: stamp });
      userLines.push(
        `- [${resolved ? 'x' : ' '}] [P${random.int(3)}] Approve release step ${i} of ${goalId}.`,
        metadataLine(fields),
      );
    } else {
      const done = random.chance(0.3);
      userLines.push(
        `- [${done ? 'x' : ' '}] [P${2 + random.int(3)}] Review the summary of step ${i} of ${goalId}.`,
        metadataLine({
          todo_id: `todo_u${pad4(i)}`,
          status: done ? 'done' : 'open',
          task_class: 'user_action',
          bound_agent: AGENT_IDS[0],
        }),
      );
    }
  }

  const text = [
    '---',
    'status: active',
    `objective: "Keep synthetic goal ${goalId} moving through bounded, validated steps."`,
    'owner_mode: solo',
    `updated_at: ${stamp}`,
    '---',
    `# ${goalId}`,
    '',
    '## User Todo / Owner Review Reading Queue',
    ...userLines,
    '',
    '## Agent Todo',
    ...agentLines,
    '',
    '## Next Action',
    `- ${nextAction || 'Break the objective into ranked, bounded todos.'}`,
    '',
    '## Recent User Feedback',
    '- Keep each step small enough to validate in one turn.',
    '',
    '## Progress Ledger',
    `- ${stamp} Generated by the LoopX benchmark workspace generator.`,
    '',
  ].join('\n');
  return { text, userTodos: split.user, agentTodos: split.agent, gates: split.gates, openAgentTodoIds, nextAction };
}

function writeRunHistory(
  root: string,
  goalId: string,
  runs: number,
  now: Date,
  state: RenderedState,
  random: Random,
  counts: WorkspaceCounts,
): void {
  if (runs === 0) return;
  const runsRelative = path.join(RUNTIME_ROOT_RELATIVE, GOALS_DIR, goalId, RUNS_DIR);
  const runsDir = path.join(root, runsRelative);
  fs.mkdirSync(runsDir, { recursive: true });
  const stepMinutes = Math.max(1, Math.floor(RUN_SPAN_MINUTES / runs));
  const windowStart = now.getTime() - QUOTA_WINDOW_HOURS * 3_600_000;
  const stateSha = createHash('sha256').update(state.text, 'utf8').digest('hex').slice(0, 16);
  const stateUpdatedAt = formatLocalIsoSeconds(new Date(now.getTime() - 3_600_000), 0);
  const lines: string[] = [];
  for (let r = 0; r < runs; r++) {
    const at = new Date(now.getTime() - ((runs - 1 - r) * stepMinutes + 5) * 60_000);
    const generatedAt = formatLocalIsoSeconds(at, 0);
    const newest = r === runs - 1;
    const roll = newest ? 1 : random.next();
    const todoId = state.openAgentTodoIds.length > 0 ? random.pick(state.openAgentTodoIds) : null;
    const agentId = random.pick(AGENT_IDS);
    const turnId = `turn-${String(r + 1).padStart(5, '0')}`;
    const row: Record<string, unknown> = { generated_at: generatedAt, goal_id: goalId };
    const extraRecord: Record<string, unknown> = {};
    let suffix = '';
    if (roll < 0.35) {
      suffix = '-quota-slot-spent';
      const settlement = {
        schema_version: 'quota_settlement_identity_v0',
        effect_id: `${goalId}:${agentId}:${todoId ?? 'none'}:${turnId}`,
        goal_id: goalId,
        agent_id: agentId,
        todo_id: todoId,
        turn_instance_id: turnId,
      };
      Object.assign(row, {
        classification: 'quota_slot_spent',
        recommended_action: state.nextAction,
        health_check: 'quota should-run eligible; quota slot spend event public-safe',
        agent_id: agentId,
        todo_id: todoId,
        turn_instance_id: turnId,
        settlement_identity: settlement,
        // As LoopX for VS Code writes a spend: `slots` in the row too (the original's rows lack it,
        // and the ledger then reads the record; such rows stop costing once they leave the window).
        slots: 1,
      });
      extraRecord['quota_event'] = {
        event_type: 'quota_slot_spent',
        source: 'heartbeat',
        slots: 1,
        todo_id: todoId,
        turn_instance_id: turnId,
        reason_summary: '1 automatic agent slot(s) completed under an eligible quota guard',
      };
      counts.spendRows++;
      if (at.getTime() >= windowStart) counts.spendRowsInWindow++;
    } else if (roll < 0.45) {
      Object.assign(row, {
        classification: 'validated_progress',
        recommended_action: state.nextAction,
        health_check: 'validation passed: npm test',
        agent_id: agentId,
        todo_id: todoId,
        progress_scope: 'agent_lane',
        turn_instance_id: turnId,
      });
    } else {
      const classification = newest
        ? 'state_refreshed'
        : random.pick(['validated_progress', 'state_refreshed', 'blocked_progress']);
      Object.assign(row, {
        classification,
        recommended_action: state.nextAction,
        health_check: classification === 'state_refreshed' ? 'state refreshed' : 'validation passed: npm test',
      });
      if (classification === 'state_refreshed')
        row['state'] = { sha256_16: stateSha, frontmatter: { updated_at: stateUpdatedAt } };
    }
    const stem = `${runArtifactStem(generatedAt)}${suffix}`;
    const jsonRelative = path.join(runsRelative, `${stem}.json`);
    const markdownRelative = path.join(runsRelative, `${stem}.md`);
    const { state: snapshot, ...recordFields } = row;
    const record = { ...recordFields, ...(snapshot === undefined ? {} : { state: snapshot }), ...extraRecord };
    fs.writeFileSync(path.join(root, jsonRelative), `${JSON.stringify(record, null, 2)}\n`);
    fs.writeFileSync(
      path.join(root, markdownRelative),
      `# ${goalId} — ${String(row['classification'])}\n\n- generated_at: ${generatedAt}\n- recommended_action: ${state.nextAction}\n`,
    );
    lines.push(JSON.stringify({ ...row, json_path: jsonRelative, markdown_path: markdownRelative }));
    counts.runRows++;
    counts.artifactFiles += 2;
  }
  fs.writeFileSync(path.join(runsDir, RUN_INDEX_FILE), `${lines.join('\n')}\n`);
}
