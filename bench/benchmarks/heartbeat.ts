import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildRolloutEvent, parseRolloutEvents, ROLLOUT_EVENT_LOG_FILE } from '../../src/core/evidence/rolloutLog';
import { fixedCase } from '../core/cases';
import { rawReadProcess, runNode } from '../core/processes';
import type { BenchContext, Prepared, RunnableBenchmark } from '../core/types';

/**
 * Issue 18: `quota should-run --turn-instance-id T --agent-id A` as a whole process on a goal whose
 * rollout event log holds 10,000 events of other agents' turns (docs/quota.md#heartbeat-receipts).
 * Every run checks the answer: a new turn gets a fresh receipt bound to the selected todo, a retried
 * turn replays its receipt with the same binding.
 */

const GOAL_ID = 'hb-goal';
const AGENT = 'agent-a';
const OTHER_AGENTS = ['agent-b', 'agent-c', 'agent-d'];
const LOG_EVENTS = 10_000;
const NOW = '2026-12-01T06:00:00Z';
const SELECTED_TODO = 'todo_hb_0';
const TODOS = 20;

const CASE_EMPTY = 'empty log, new turn';
const CASE_NEW = '10,000 events, new turn';
const CASE_RETRY = '10,000 events, retried turn';

interface HeartbeatWorkspace {
  root: string;
  registryPath: string;
  statePath: string;
  logPath: string;
}

/** A goal of its own with `events` rollout events of other agents' heartbeats (receipt, refresh, spend per turn). */
export function heartbeatWorkspace(ctx: BenchContext, events: number): HeartbeatWorkspace {
  const root = path.join(ctx.tmpDir, `hb-workspace-${events}`);
  const statePath = path.join(root, '.codex', 'goals', GOAL_ID, 'ACTIVE_GOAL_STATE.md');
  const registryPath = path.join(root, '.loopx', 'registry.json');
  const goalDir = path.join(root, '.loopx', 'runtime', 'goals', GOAL_ID);
  const logPath = path.join(goalDir, ROLLOUT_EVENT_LOG_FILE);
  if (fs.existsSync(registryPath)) return { root, registryPath, statePath, logPath };
  fs.mkdirSync(path.dirname(statePath), { recursive: true });
  const todos = Array.from({ length: TODOS }, (_, i) => [
    `- [ ] [P${i === 0 ? 1 : 2}] Heartbeat bench todo ${i}.`,
    `  <!-- loopx:todo todo_id=todo_hb_${i} status=open task_class=advancement_task -->`,
  ]).flat();
  fs.writeFileSync(
    statePath,
    ['---', 'status: active', '---', '# Goal', '', '## User Todo', '', '## Agent Todo', ...todos, ''].join('\n'),
  );
  fs.mkdirSync(path.dirname(registryPath), { recursive: true });
  const goal = {
    id: GOAL_ID,
    status: 'active',
    repo: root,
    state_file: `.codex/goals/${GOAL_ID}/ACTIVE_GOAL_STATE.md`,
    coordination: { agent_model: 'peer_v1', registered_agents: [AGENT, ...OTHER_AGENTS] },
  };
  fs.writeFileSync(
    registryPath,
    JSON.stringify({ schema_version: '0.1', common_runtime_root: '.loopx/runtime', goals: [goal] }, null, 2),
  );
  fs.mkdirSync(goalDir, { recursive: true });
  const kinds = ['quota_should_run', 'refresh_state', 'quota_spend'] as const;
  const lines: string[] = [];
  for (let i = 0; i < events; i++) {
    const turn = Math.floor(i / kinds.length);
    const agentId = OTHER_AGENTS[turn % OTHER_AGENTS.length] ?? 'agent-b';
    const todoId = `todo_hb_${1 + (turn % (TODOS - 1))}`;
    const runId = `other-turn-${turn}`;
    const event = buildRolloutEvent({
      goalId: GOAL_ID,
      eventKind: kinds[i % kinds.length] ?? 'refresh_state',
      recordedAt: new Date(Date.parse(NOW) - (events - i) * 60_000).toISOString().replace('.000Z', 'Z'),
      agentId,
      todoId,
      runId,
      status: 'active',
      summary: `bench heartbeat step ${i} of ${runId}`,
      details: { todo_id: todoId, settlement_effect_id: `${GOAL_ID}:${agentId}:${todoId}:${runId}` },
    });
    lines.push(`${JSON.stringify(event)}\n`);
  }
  fs.writeFileSync(logPath, lines.join(''));
  return { root, registryPath, statePath, logPath };
}

function shouldRunArgs(ctx: BenchContext, ws: HeartbeatWorkspace, turn: string): string[] {
  return [
    ctx.cliPath,
    ...['--registry', ws.registryPath, '--format', 'json', 'quota', 'should-run', '--goal-id', GOAL_ID],
    ...['--agent-id', AGENT, '--turn-instance-id', turn],
  ];
}

/** Fails unless the answer says run, bound to the selected todo, replayed or not as expected. */
function checkReceipt(stdout: string, turn: string, replayed: boolean): void {
  const answer = JSON.parse(stdout) as Record<string, unknown>;
  const receipt = answer['heartbeat_receipt'] as Record<string, unknown> | null | undefined;
  const selected = answer['selected_todo'] as Record<string, unknown> | null | undefined;
  const expectedEffect = `${GOAL_ID}:${AGENT}:${SELECTED_TODO}:${turn}`;
  if (
    answer['should_run'] !== true ||
    receipt?.['todo_id'] !== SELECTED_TODO ||
    receipt['replayed'] !== replayed ||
    receipt['settlement_effect_id'] !== expectedEffect ||
    selected?.['todo_id'] !== SELECTED_TODO
  )
    throw new Error(
      `turn ${turn}: expected should_run with a ${replayed ? 'replayed' : 'fresh'} receipt bound to ${SELECTED_TODO}, got ${stdout.slice(0, 600)}`,
    );
}

function receiptRuns(ctx: BenchContext): Prepared {
  const events = ctx.caseLabel === CASE_EMPTY ? 0 : LOG_EVENTS;
  const retry = ctx.caseLabel === CASE_RETRY;
  const ws = heartbeatWorkspace(ctx, events);
  const env = { HOME: ctx.homeDir, LOOPX_NOW: NOW };
  const retriedTurn = 'bench-retried-turn';
  if (retry)
    checkReceipt(runNode(ctx, shouldRunArgs(ctx, ws, retriedTurn), { cwd: ws.root, env }).stdout, retriedTurn, false);
  let next = 0;
  const turns: string[] = [];
  return {
    run: async () => {
      const turn = retry ? retriedTurn : `bench-turn-${next++}`;
      const { stdout, childPeakRssMb } = runNode(ctx, shouldRunArgs(ctx, ws, turn), { cwd: ws.root, env });
      checkReceipt(stdout, turn, retry);
      turns.push(turn);
      return { childPeakRssMb };
    },
    verify: async () => {
      const parsed = parseRolloutEvents(fs.readFileSync(ws.logPath, 'utf8'));
      const receipts = parsed.events.filter((e) => e.event_kind === 'quota_should_run' && e.agent_id === AGENT);
      const distinct = new Set(turns);
      const expected = distinct.size;
      if (receipts.length !== expected || parsed.skipped.length > 0)
        throw new Error(
          `${receipts.length} receipts of ${AGENT} in the log for ${expected} distinct turn(s) (${parsed.skipped.length} bad lines)`,
        );
      return retry
        ? `${turns.length} retries of one turn: each replayed the receipt bound to ${SELECTED_TODO}; still one receipt in the log`
        : `${turns.length} new turns: each got a fresh receipt bound to ${SELECTED_TODO}; exactly one receipt per turn in the log (${parsed.events.length.toLocaleString('en-US')} events)`;
    },
  };
}

export const quotaShouldRunReceiptCli: RunnableBenchmark = {
  kind: 'process',
  name: 'quota-should-run-receipt-cli',
  title: '`loopx quota should-run --turn-instance-id` on a long rollout event log (whole process)',
  description: `node out/cli.js quota should-run --goal-id ${GOAL_ID} --agent-id ${AGENT} --turn-instance-id T on a goal with ${TODOS} open todos whose rollout-event-log.jsonl holds 0 or ${LOG_EVENTS.toLocaleString('en-US')} events of other agents' turns; a new turn appends its receipt under the log's lock, a retried turn replays it; every run checks the bound todo, the effect id and replayed`,
  baselineDescription:
    "a node process that reads registry.json, the goal's state file and the event log (JSON.parse per line)",
  requiresCli: 'quota should-run',
  cases: [fixedCase(CASE_EMPTY, null, 10, 2), fixedCase(CASE_NEW, null, 10, 2), fixedCase(CASE_RETRY, null, 10, 2)],
  unitLabel: 'events in the log',
  units: () => LOG_EVENTS,
  targets: [
    {
      caseLabel: CASE_NEW,
      metric: 'median_ms',
      limit: 150,
      text: '`quota should-run` with a receipt on a goal with 10,000 rollout events under 150 ms as a whole process',
    },
  ],
  prepare: async (ctx) => receiptRuns(ctx),
  prepareBaseline: async (ctx) => {
    const ws = heartbeatWorkspace(ctx, ctx.caseLabel === CASE_EMPTY ? 0 : LOG_EVENTS);
    const files = [ws.registryPath, ws.statePath, ...(fs.existsSync(ws.logPath) ? [ws.logPath] : [])];
    return rawReadProcess(ctx, files);
  },
};
