import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openMergeGate } from '../../../src/core/lanes/gate';
import { parseStateDocument } from '../../../src/core/state/document';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import { runNode, type ProcessResult } from '../support/cliProcess';
import { LANE_AGENT } from './helpers';

/**
 * Issue 33's "done when", as one run (docs/lanes.md): `lanes` agents work one goal, each in a worktree
 * lane, for `rounds` rounds. Every turn is a real `loopx turn run-once` process (the four of a round at
 * once), whose agent is the lane fixture agent configured as the agent's command executor; every lane
 * with a new commit is then merged the way a person does it: its merge gate is open in the state file,
 * `loopx lane merge` previews it (the gate, the commit with its trailer, the diff), and `loopx lane
 * merge --execute` approves it. The checks read the result back from git and the state file:
 *
 * - every turn committed, and main's history holds each turn's commit once, with its `LoopX-Turn`
 *   trailer (the turn's settlement id, as its `turn run-once` answer gave it);
 * - no commit on main touches another lane's file (each lane's agent writes `lanes/<agent>.txt` only),
 *   and no merge brings in anything but its lane's file;
 * - every merge went through its gate: opened by the turn, previewed, closed `decision_outcome=approve`
 *   by the merge; no merge gate left open;
 * - one worktree per lane, kept across turns.
 *
 * The always-run unit test runs a few rounds; `scripts/bench-lanes.ts` runs 25 rounds (100 turns) with
 * the same checks and records the times (docs/benchmarks.md#lanes-issue-33).
 */

export const GOAL = 'tidy-notes';

export interface ManyLanesOptions {
  /** `node <cli> …`: the bundled CLI (`buildCliBundle`). */
  cli: string;
  rounds: number;
  lanes: number;
  /** Where the workspace goes (a fresh folder). */
  root: string;
  /** Called after each round (progress in the benchmark). */
  onRound?: (round: number, turnMs: number, mergeMs: number) => void;
}

export interface ManyLanesReport {
  workspace: string;
  agents: string[];
  /** Settlement ids of the committed turns, in the order their answers came. */
  turns: string[];
  /** `git log main` trailers, oldest first. */
  trailersOnMain: string[];
  /** Merges done (each through its gate). */
  merges: number;
  worktrees: number;
  /** Everything that broke the run's promises; empty when it held. */
  violations: string[];
  turnMs: number[];
  mergeMs: number[];
  wallMs: number;
}

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Person',
  GIT_AUTHOR_EMAIL: 'person@example.com',
  GIT_COMMITTER_NAME: 'Person',
  GIT_COMMITTER_EMAIL: 'person@example.com',
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: GIT_ENV, maxBuffer: 1 << 28 }).trim();
}

function laneFile(agent: string): string {
  return `lanes/${agent}.txt`;
}

/** The demo workspace as a git repository, `agents` registered, each in a worktree lane with the fixture agent as its executor. */
export function manyLanesWorkspace(root: string, agents: readonly string[]): string {
  const ws = materializeDemoWorkspace(path.join(root, 'workspace'));
  const registryPath = path.join(ws, '.loopx', 'registry.json');
  const registry = JSON.parse(fs.readFileSync(registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
  const goal = registry.goals[0] as Record<string, unknown>;
  goal['coordination'] = {
    agent_model: 'peer_v1',
    registered_agents: [...agents],
    agent_profiles: Object.fromEntries(
      agents.map((a) => [
        a,
        {
          isolation: 'worktree',
          executor: { preset: 'command', command: [process.execPath, LANE_AGENT, laneFile(a), '{turn}'] },
        },
      ]),
    ),
  };
  goal['spawn_policy'] = { mode: 'multi_subagent', allowed: true, max_children: agents.length };
  goal['quota'] = { compute: 1, window_hours: 24, slot_minutes: 1, max_slots: 100000 };
  fs.writeFileSync(registryPath, JSON.stringify(registry, null, 2));
  const statePath = path.join(ws, '.codex', 'goals', GOAL, 'ACTIVE_GOAL_STATE.md');
  const state = fs.readFileSync(statePath, 'utf8').split('\n');
  const userStart = state.findIndex((l) => l.startsWith('## User Todo'));
  const agentStart = state.findIndex((l) => l.startsWith('## Agent Todo'));
  // No person's gate of the demo (the merge gates are the only user gates), and one todo per lane,
  // claimed by its agent: the lanes never compete for a todo.
  const laneTodos = agents.flatMap((a) => [
    `- [ ] [P1] Lane work for ${a}.`,
    `  <!-- loopx:todo todo_id=todo_${a} status=open task_class=advancement_task claimed_by=${a} -->`,
  ]);
  fs.writeFileSync(
    statePath,
    [
      ...state.slice(0, userStart + 1),
      '',
      state[agentStart] ?? '## Agent Todo',
      ...laneTodos,
      ...state.slice(agentStart + 1),
    ].join('\n'),
  );
  git(ws, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(ws, '.gitignore'), '.loopx/runtime/\n');
  git(ws, 'add', '-A');
  git(ws, 'commit', '-q', '-m', 'the demo as committed');
  return ws;
}

function parsed(run: ProcessResult, what: string): Record<string, unknown> {
  try {
    return JSON.parse(run.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(`${what}: exit ${run.code}, not JSON: ${run.stdout.slice(0, 800)} ${run.stderr.slice(0, 800)}`);
  }
}

const since = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;

export async function runManyLanes(options: ManyLanesOptions): Promise<ManyLanesReport> {
  const agents = Array.from({ length: options.lanes }, (_, i) => `lane${i + 1}`);
  const ws = manyLanesWorkspace(options.root, agents);
  const statePath = path.join(ws, '.codex', 'goals', GOAL, 'ACTIVE_GOAL_STATE.md');
  const violations: string[] = [];
  const turns: string[] = [];
  const turnMs: number[] = [];
  const mergeMs: number[] = [];
  let merges = 0;
  const closedGates = new Set<string>();
  const started = process.hrtime.bigint();
  const loopx = (args: string[], now: string) =>
    runNode([options.cli, ...args, '--format', 'json'], ws, { LOOPX_NOW: now });

  for (let round = 0; round < options.rounds; round++) {
    // A new clock instant per round is a new turn identity; the lanes of a round run at once.
    const now = new Date(Date.parse('2026-11-28T10:00:00Z') + round * 60_000).toISOString();
    const t = process.hrtime.bigint();
    const answers = await Promise.all(
      agents.map(async (agent) =>
        parsed(
          await loopx(['turn', 'run-once', '--goal-id', GOAL, '--agent-id', agent, '--execute'], now),
          `round ${round} turn of ${agent}`,
        ),
      ),
    );
    turnMs.push(since(t));
    const committed: string[] = [];
    for (const [i, answer] of answers.entries()) {
      const agent = agents[i] ?? '';
      const effect = (answer['settlement_identity'] as { effect_id?: string } | null)?.effect_id;
      if (answer['status'] !== 'committed' || effect === undefined) {
        violations.push(
          `round ${round}: ${agent}'s turn ${String(answer['status'] ?? answer['error_code'])}: ${String(answer['message'] ?? answer['error'])}`,
        );
        continue;
      }
      turns.push(effect);
      committed.push(agent);
    }
    const m = process.hrtime.bigint();
    for (const agent of committed) {
      // The person's side: the gate is there, the preview shows it, the merge approves it.
      const branch = `loopx/${GOAL}/${agent}`;
      const gate = openMergeGate(parseStateDocument(fs.readFileSync(statePath, 'utf8')), branch);
      if (gate === undefined) {
        violations.push(`round ${round}: no open merge gate for ${branch} after its turn`);
        continue;
      }
      const merge = ['lane', 'merge', '--goal-id', GOAL, '--agent-id', agent];
      const preview = parsed(await loopx(merge, now), `round ${round} merge preview of ${agent}`);
      const commits = (preview['commits'] ?? []) as { turn: string | null }[];
      const turn = turns[turns.length - committed.length + committed.indexOf(agent)];
      if (
        preview['status'] !== 'preview' ||
        preview['merge_gate_todo_id'] !== gate.todoId ||
        commits.length !== 1 ||
        commits[0]?.turn !== turn ||
        !String(preview['diff']).includes(`+++ b/${laneFile(agent)}`)
      )
        violations.push(
          `round ${round}: the merge preview of ${agent} does not show its gate ${gate.todoId} and turn ${turn}: ${JSON.stringify(preview).slice(0, 600)}`,
        );
      const merged = parsed(await loopx([...merge, '--execute'], now), `round ${round} merge of ${agent}`);
      if (merged['status'] !== 'merged') {
        violations.push(`round ${round}: merge of ${agent} ${String(merged['status'])}: ${String(merged['message'])}`);
        continue;
      }
      merges++;
      const after = parseStateDocument(fs.readFileSync(statePath, 'utf8')).todos.find((x) => x.todoId === gate.todoId);
      if (after?.status !== 'done' || after.meta['decision_outcome'] !== 'approve')
        violations.push(
          `round ${round}: gate ${gate.todoId} of ${agent} is ${after?.status ?? 'gone'} (${after?.meta['decision_outcome'] ?? 'no outcome'}) after the merge, not done/approve`,
        );
      else closedGates.add(gate.todoId);
    }
    mergeMs.push(since(m));
    options.onRound?.(round, turnMs[turnMs.length - 1] ?? 0, mergeMs[mergeMs.length - 1] ?? 0);
  }
  const wallMs = since(started);

  // main's history: each turn's commit once, with its trailer; nothing mixed.
  const trailersOnMain = git(
    ws,
    'log',
    '--reverse',
    '--no-merges',
    '--format=%(trailers:key=LoopX-Turn,valueonly)',
    'main',
  )
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const missing = turns.filter((t) => !trailersOnMain.includes(t));
  if (missing.length > 0) violations.push(`turns without their commit on main: ${missing.join(', ')}`);
  const extra = trailersOnMain.filter((t, i) => !turns.includes(t) || trailersOnMain.indexOf(t) !== i);
  if (extra.length > 0) violations.push(`trailers on main that are no turn of this run, or twice: ${extra.join(', ')}`);
  const rootCommit = git(ws, 'rev-list', '--max-parents=0', 'main');
  for (const entry of git(ws, 'log', '--format=%H%x1f%P%x1f%an%x1f%s', `${rootCommit}..main`).split('\n')) {
    const [commit = '', parents = '', author = '', subject = ''] = entry.split('\x1f');
    const parentList = parents.split(' ').filter(Boolean);
    if (parentList.length === 1) {
      const agent = /^(\S+) \(LoopX\)$/.exec(author)?.[1];
      const files = git(ws, 'show', '--format=', '--name-only', commit).split('\n').filter(Boolean);
      const trailer = git(ws, 'log', '-1', '--format=%(trailers:key=LoopX-Turn,valueonly)', commit);
      if (agent === undefined || !agents.includes(agent))
        violations.push(`commit ${commit.slice(0, 12)} on main is not a lane agent's (${author}: ${subject})`);
      else if (files.length !== 1 || files[0] !== laneFile(agent))
        violations.push(`commit ${commit.slice(0, 12)} of ${agent} touches ${files.join(', ')}`);
      if (!trailer.startsWith(`${GOAL}:${agent ?? '?'}:`))
        violations.push(
          `commit ${commit.slice(0, 12)} has the trailer "${trailer}", not one of ${agent ?? '?'}'s turns`,
        );
    } else {
      // A merge commit brings in its lane's file only (what the first parent lacked).
      const agent = /loopx\/[^/\s']+\/([^\s']+)/.exec(subject)?.[1];
      const files = git(ws, 'diff', '--name-only', `${commit}^1`, commit).split('\n').filter(Boolean);
      if (agent === undefined || files.some((f) => f !== laneFile(agent)))
        violations.push(`merge ${commit.slice(0, 12)} (${subject}) brings in ${files.join(', ')}`);
    }
  }
  // Every merge went through a gate, and no gate is left behind.
  const doc = parseStateDocument(fs.readFileSync(statePath, 'utf8'));
  for (const agent of agents) {
    const open = openMergeGate(doc, `loopx/${GOAL}/${agent}`);
    if (open !== undefined) violations.push(`merge gate ${open.todoId} of ${agent} still open`);
  }
  if (closedGates.size !== merges) violations.push(`${merges} merges but ${closedGates.size} gates approved`);
  const worktrees = git(ws, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree ')).length;
  if (worktrees !== agents.length + 1)
    violations.push(`${worktrees} worktrees, expected ${agents.length + 1} (main + one per lane)`);
  return { workspace: ws, agents, turns, trailersOnMain, merges, worktrees, violations, turnMs, mergeMs, wallMs };
}

/** A fresh folder for a run. */
export function manyLanesRoot(): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-many-lanes-')));
}
