import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { generateWorkspace } from '../../bench/workspace/generate';
import { materializeDemoWorkspace } from '../support/demoWorkspace';
import { GOAL_STATE, mixedWorkspace, run, stopLeftovers, writeGoal, type MixedWorkspace } from './helpers';
import {
  differences,
  PAYLOAD_KEYS_COMPARED,
  PAYLOAD_KEYS_COMPARED_AT_ANSWER_TIME,
  PAYLOAD_KEYS_NOT_CARRIED,
  PAYLOAD_REPORTS_COMPARED,
  ownChecksOf,
  unexplained,
  withoutAnswerTime,
  withoutTimes,
  type Difference,
} from './statusDiff';

/**
 * `status` read the same by both programs (issue 30): on one workspace the original's `status --format json` and ours
 * are compared on **every key the original emits** on each item, at every depth (statusDiff.ts), and on the payload's
 * top level. A difference is allowed only when it falls under a rule listed in statusDiff.ts `ITEM_RULES` (each
 * explained in docs/compatibility.md); a top-level key only the original has must be in `PAYLOAD_KEYS_NOT_CARRIED`;
 * the top-level reports (`PAYLOAD_KEYS_COMPARED_AT_ANSWER_TIME`) are compared by value, their answer-time fields aside.
 * Scenarios: the demo workspace, a two-agent goal, a goal at an operator gate beside one whose agent todo is next,
 * deferred and monitor todos, a goal with runs written by both programs, user gates decided by both (standing
 * decision receipts), and the run-history reports (runs across both windows, spends, decisions, usage, readiness runs,
 * a global registry, a release ledger, a projection route another runtime claims), a todo's review materials and
 * `pr_merged:` resume conditions matched in the rollout event log, and a stale global registry whose findings become
 * attention items (shadows on the goals' items, items of their own). `/status.json` serves our `status` items
 * field by field (test/unit/server/statusServer.test.ts, "one status model").
 */

type Payload = Record<string, unknown>;

function payload(w: MixedWorkspace, program: 'ours' | 'original'): Payload {
  const result = run(program, w, ['status']);
  const queue = result.json['attention_queue'] as { items?: unknown[] } | undefined;
  assert.ok(queue?.items !== undefined, `${program} status: ${result.stdout}\n${result.stderr}`);
  return result.json;
}

function itemsOf(p: Payload): Record<string, Record<string, unknown>> {
  const items = (p['attention_queue'] as { items: Record<string, unknown>[] }).items;
  return Object.fromEntries(items.map((item) => [String(item['goal_id']), item]));
}

/** Compares both payloads; returns our items by goal for the scenario's own assertions. */
function compare(w: MixedWorkspace, label: string): Record<string, Record<string, unknown>> {
  const theirs = payload(w, 'original');
  const ours = payload(w, 'ours');
  const onlyTheirs = Object.keys(theirs).filter((key) => !Object.hasOwn(ours, key));
  assert.deepEqual(
    onlyTheirs.filter((key) => !PAYLOAD_KEYS_NOT_CARRIED.includes(key)),
    [],
    `${label}: top-level keys of the original missing in ours`,
  );
  for (const key of PAYLOAD_KEYS_COMPARED)
    assert.deepEqual(ours[key], theirs[key], `${label}: top-level ${key} (ours vs the original)`);
  for (const key of PAYLOAD_KEYS_COMPARED_AT_ANSWER_TIME)
    assert.deepEqual(
      withoutAnswerTime(ours[key], key),
      withoutAnswerTime(theirs[key], key),
      `${label}: top-level ${key} (ours vs the original, answer-time fields aside)`,
    );
  for (const { key, times } of PAYLOAD_REPORTS_COMPARED)
    assert.deepEqual(
      withoutTimes(ours[key], times),
      withoutTimes(theirs[key], times),
      `${label}: top-level ${key} (ours vs the original, times aside)`,
    );
  // The contract's checks, list and count: the original's public-boundary scan of its own installed package (its
  // default scan root) is ours deferred, as its status hot path defers it (statusDiff.ts `ownChecksOf`).
  const contractOf = (p: Payload): { checks?: string[] } => (p['contract'] ?? {}) as { checks?: string[] };
  const theirChecks = ownChecksOf(contractOf(theirs).checks ?? []);
  assert.deepEqual(contractOf(ours).checks, theirChecks, `${label}: contract checks`);
  const summary = (p: Payload, checks: number): unknown[] => {
    const s = p['contract_summary'] as { errors?: unknown; warnings?: unknown } | undefined;
    return [s?.errors, s?.warnings, checks];
  };
  assert.deepEqual(
    summary(ours, (ours['contract_summary'] as { checks: number }).checks),
    summary(theirs, theirChecks.length),
    `${label}: contract_summary errors, warnings and checks`,
  );
  const ourItems = itemsOf(ours);
  // The same goals in the same order (both sort goal ids), and the run history's likewise.
  const order = (p: Payload, key: 'attention_queue' | 'run_history'): unknown[] =>
    key === 'attention_queue'
      ? (p['attention_queue'] as { items: Record<string, unknown>[] }).items.map((item) => item['goal_id'])
      : (p['run_history'] as { goals: Record<string, unknown>[] }).goals.map((goal) => goal['id']);
  assert.deepEqual(order(ours, 'attention_queue'), order(theirs, 'attention_queue'), `${label}: the items' order`);
  assert.deepEqual(order(ours, 'run_history'), order(theirs, 'run_history'), `${label}: the run history's order`);
  // Item by item in the queue's order (asserted the same above): a global registry finding's own item may carry the
  // id of a goal that has its item too.
  const queueOf = (p: Payload): Record<string, unknown>[] =>
    (p['attention_queue'] as { items: Record<string, unknown>[] }).items;
  const ourQueue = queueOf(ours);
  queueOf(theirs).forEach((item, at) => {
    const goal = `${String(item['goal_id'])}#${at}`;
    const found: Set<Difference> = differences(item, ourQueue[at]);
    assert.deepEqual(
      unexplained(found),
      [],
      `${label}/${goal}: differences no listed rule explains: ${unexplained(found).join(', ')}\ntheirs: ${JSON.stringify(item)}\nours: ${JSON.stringify(ourQueue[at])}`,
    );
  });
  return ourItems;
}

function addGoal(w: MixedWorkspace, goalId: string, state: string): void {
  const registry = JSON.parse(fs.readFileSync(w.registry, 'utf8')) as { goals: Record<string, unknown>[] };
  const first = registry.goals[0] as Record<string, unknown>;
  const stateRel = `.codex/goals/${goalId}/ACTIVE_GOAL_STATE.md`;
  fs.mkdirSync(path.join(w.ws, path.dirname(stateRel)), { recursive: true });
  fs.writeFileSync(path.join(w.ws, stateRel), state);
  registry.goals.push({ ...first, id: goalId, state_file: stateRel });
  fs.writeFileSync(w.registry, `${JSON.stringify(registry, null, 2)}\n`);
}

/** An ISO time `hours` before now, as the original writes times (seconds, `+00:00`). */
function hoursAgo(hours: number): string {
  return new Date(Date.now() - hours * 3_600_000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

/** Appends rows to a goal's run index (as either program would have written them). */
function writeRuns(w: MixedWorkspace, goalId: string, rows: readonly Record<string, unknown>[]): void {
  const dir = path.join(w.ws, 'runtime', 'goals', goalId, 'runs');
  fs.mkdirSync(dir, { recursive: true });
  fs.appendFileSync(path.join(dir, 'index.jsonl'), rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
}

function ok(result: { code: number; stdout: string; stderr: string }, what: string): void {
  assert.equal(result.code, 0, `${what}: ${result.stdout}\n${result.stderr}`);
}

describe('mixed team: status payloads equal field by field (every key the original emits)', () => {
  let w: MixedWorkspace | undefined;
  afterEach(() => {
    if (w === undefined) return;
    stopLeftovers(w);
    fs.rmSync(w.dir, { recursive: true, force: true });
    w = undefined;
  });

  it('the demo workspace (a gate, claimed todos, runs, a stale latest run)', () => {
    w = mixedWorkspace('status-demo');
    fs.rmSync(w.ws, { recursive: true, force: true });
    materializeDemoWorkspace(w.ws);
    w.registry = path.join(w.ws, '.loopx', 'registry.json');
    const ours = compare(w, 'demo');
    assert.equal(ours['tidy-notes']?.['lifecycle_phase'], 'adapter_inspected');
    assert.equal((ours['tidy-notes']?.['long_task_cadence_hint'] as { signal?: string }).signal, 'blocked');
  });

  it('an operator gate beside a goal whose agent todo is next', () => {
    w = mixedWorkspace('status-gate');
    writeGoal(w, 'gated', { compute: 1, window_hours: 24 }, ['codex-a']);
    addGoal(w, 'working', GOAL_STATE);
    ok(
      run('ours', w, [
        'todo',
        'add',
        '--goal-id',
        'gated',
        '--role',
        'user',
        '--task-class',
        'user_gate',
        '--text',
        'Approve the release',
      ]),
      'ours todo add (gate)',
    );
    for (const goal of ['gated', 'working']) ok(run('ours', w, ['refresh-state', '--goal-id', goal]), 'refresh-state');
    const ours = compare(w, 'gate');
    assert.deepEqual(
      [
        (ours['gated']?.['quota'] as { state?: string }).state,
        ours['gated']?.['source'],
        ours['gated']?.['recommended_action'],
      ],
      ['operator_gate', 'active_state', 'Approve the release'],
    );
  });

  it('a two-agent goal with a claimed todo', () => {
    w = mixedWorkspace('status-two');
    writeGoal(w, 'pair', { compute: 1, window_hours: 24 }, ['codex-a', 'codex-b']);
    ok(
      run('ours', w, ['todo', 'add', '--goal-id', 'pair', '--text', 'Second step', '--claimed-by', 'codex-b']),
      'ours todo add (claimed)',
    );
    ok(run('original', w, ['refresh-state', '--goal-id', 'pair', '--agent-id', 'codex-a']), 'original refresh-state');
    compare(w, 'two agents');
  });

  it('deferred and monitor todos, and a goal whose Next Action is hidden backlog', () => {
    w = mixedWorkspace('status-deferred');
    writeGoal(w, 'waits', { compute: 1, window_hours: 24 }, ['codex-a']);
    ok(run('ours', w, ['todo', 'add', '--goal-id', 'waits', '--text', 'Follow-up step']), 'ours todo add');
    const listed = run('ours', w, ['todo', 'list', '--goal-id', 'waits']);
    const todos = JSON.stringify(listed.json);
    const followUp =
      /"todo_id":"(todo_[a-z0-9]+)"[^}]*Follow-up step|Follow-up step[^}]*"todo_id":"(todo_[a-z0-9]+)"/.exec(todos);
    const id = followUp?.[1] ?? followUp?.[2];
    assert.ok(id !== undefined, todos);
    ok(
      run('ours', w, [
        'todo',
        'defer',
        '--goal-id',
        'waits',
        '--todo-id',
        id,
        '--reason',
        'after the first',
        '--resume-when',
        'todo_done:todo_aaaaaaaaaaaa',
      ]),
      'ours todo defer',
    );
    ok(
      run('ours', w, [
        'todo',
        'add',
        '--goal-id',
        'waits',
        '--task-class',
        'continuous_monitor',
        '--watch-only',
        '--text',
        'Watch the nightly build',
      ]),
      'ours todo add (monitor)',
    );
    // A goal with no open agent todo and a Next Action: the original's backlog hygiene warning.
    addGoal(
      w,
      'hidden',
      GOAL_STATE.replace('- [ ] [P0] Do the work', '- [x] [P0] Do the work').replace('status=open', 'status=done'),
    );
    const ours = compare(w, 'deferred/monitor');
    assert.equal(
      (ours['hidden']?.['backlog_hygiene_warning'] as { kind?: string } | undefined)?.kind,
      'hidden_backlog_without_agent_todo',
    );
  });

  it('a goal with runs written by both programs (refresh-state, a spent slot)', () => {
    w = mixedWorkspace('status-runs');
    writeGoal(w, 'busy', { compute: 1, window_hours: 24 }, ['codex-a']);
    ok(
      run('original', w, ['refresh-state', '--goal-id', 'busy', '--classification', 'implementation_progress']),
      'original refresh-state',
    );
    ok(
      run('ours', w, ['refresh-state', '--goal-id', 'busy', '--classification', 'validated_progress']),
      'ours refresh-state',
    );
    ok(
      run('original', w, [
        'quota',
        'spend-slot',
        '--goal-id',
        'busy',
        '--agent-id',
        'codex-a',
        '--todo-id',
        'todo_aaaaaaaaaaaa',
        '--execute',
      ]),
      'original spend-slot',
    );
    const ours = compare(w, 'runs');
    assert.equal(ours['busy']?.['lifecycle_phase'], 'adapter_inspected');
  });

  it("a registry wait over a run: the registry's own operator question and handoff condition", () => {
    w = mixedWorkspace('status-registry-wait');
    writeGoal(w, 'asks', { compute: 1, window_hours: 24 }, ['codex-a']);
    addGoal(w, 'legacy', GOAL_STATE);
    for (const goal of ['asks', 'legacy']) ok(run('ours', w, ['refresh-state', '--goal-id', goal]), 'refresh-state');
    const registry = JSON.parse(fs.readFileSync(w.registry, 'utf8')) as { goals: Record<string, unknown>[] };
    Object.assign(registry.goals[0] as Record<string, unknown>, {
      waiting_on: 'controller',
      operator_question: 'Ship the beta to the pilot group?',
      next_handoff_condition: 'stop until the pilot owner answers',
    });
    Object.assign(registry.goals[1] as Record<string, unknown>, {
      waiting_on: 'user_or_controller',
      operator_question: 'Approve a read-only map opt-in for `legacy`?',
    });
    fs.writeFileSync(w.registry, `${JSON.stringify(registry, null, 2)}\n`);
    const ours = compare(w, 'registry wait');
    const asset = (goal: string) => ours[goal]?.['project_asset'] as { gate?: string; stop_condition?: string };
    assert.deepEqual(
      [ours['asks']?.['operator_question'], asset('asks').gate, asset('asks').stop_condition],
      ['Ship the beta to the pilot group?', 'operator_question', 'stop until the pilot owner answers'],
    );
    assert.equal(ours['legacy']?.['operator_question'], '是否同意 `legacy` 先执行 read-only map opt-in？');
  });
  it('a goal with more than 12 done agent todos (completed_todo_archive_warning) beside one with 12', () => {
    w = mixedWorkspace('status-archive');
    const done = (count: number): string =>
      Array.from(
        { length: count },
        (_, i) =>
          `- [x] [P2] Finished step ${i + 1}\n  <!-- loopx:todo todo_id=todo_done${String(i).padStart(7, '0')} status=done task_class=advancement_task -->\n`,
      ).join('');
    const withDone = (count: number): string => GOAL_STATE.replace('## Next Action', `${done(count)}\n## Next Action`);
    writeGoal(w, 'full', { compute: 1, window_hours: 24 }, ['codex-a'], withDone(13));
    addGoal(w, 'tidy', withDone(12));
    const ours = compare(w, 'archive');
    const warning = (goal: string) =>
      (ours[goal]?.['project_asset'] as Record<string, unknown>)['completed_todo_archive_warning'] as
        { active_done_count?: number } | undefined;
    assert.equal(warning('full')?.active_done_count, 13);
    assert.equal(warning('tidy'), undefined);
  });

  it('issue/PR anchors in the state file (issue_meta_surface)', () => {
    w = mixedWorkspace('status-issue-meta');
    const section =
      '## Issue Meta Surface\n\n' +
      '- repo=acme/widgets issue=#12 owner=platform validation="npm test" promotion=release labels="ui, a11y"\n' +
      '- id=api-7 repo=acme/api issue_or_pr=PR-7 owner-route=api-team\n' +
      '  validation_surface=ci promotion=main code=src/api status=open\n' +
      '- repo=acme/x owner=o validation=v\n\n';
    writeGoal(
      w,
      'anchored',
      { compute: 1, window_hours: 24 },
      ['codex-a'],
      GOAL_STATE.replace('## Next Action', `${section}## Next Action`),
    );
    const ours = compare(w, 'issue meta');
    const surface = (ours['anchored']?.['project_asset'] as Record<string, unknown>)['issue_meta_surface'] as
      { item_count?: number } | undefined;
    assert.equal(surface?.item_count, 2);
  });

  it('standing decision receipts: completed, unlinked user gates with a decision scope and an outcome', () => {
    w = mixedWorkspace('status-standing');
    writeGoal(w, 'decided', { compute: 1, window_hours: 24 }, ['codex-a', 'codex-b']);
    const gate = (program: 'ours' | 'original', text: string, extra: readonly string[]): string => {
      const added = run(program, w!, [
        'todo',
        'add',
        '--goal-id',
        'decided',
        '--role',
        'user',
        '--task-class',
        'user_gate',
        '--text',
        text,
        ...extra,
      ]);
      ok(added, `${program} todo add (${text})`);
      const id = JSON.stringify(added.json).match(/todo_[a-z0-9]{12}/)?.[0];
      assert.ok(id !== undefined, added.stdout);
      return id;
    };
    const complete = (program: 'ours' | 'original', id: string, outcome: string, agent = 'codex-a'): void =>
      ok(
        run(program, w!, [
          'todo',
          'complete',
          '--goal-id',
          'decided',
          '--todo-id',
          id,
          '--decision-outcome',
          outcome,
          '--agent-id',
          agent,
        ]),
        `${program} todo complete ${id} (${outcome})`,
      );
    // A goal-wide approval (a receipt, active), an agent-scoped rejection (a receipt, inactive), the same scope and
    // owner decided again later (the later receipt replaces the earlier), an action-granularity gate (no receipt) and
    // a still-open scoped gate (no receipt).
    complete(
      'ours',
      gate('ours', 'Approve reading the private corpus', [
        '--global-gate',
        '--decision-scope',
        'private_read:project:corpus',
      ]),
      'approve',
    );
    complete(
      'original',
      gate('original', 'Allow production writes for codex-b', [
        '--blocks-agent',
        'codex-b',
        '--decision-scope',
        'production:goal:deploy',
      ]),
      'approve',
      'codex-b',
    );
    complete(
      'ours',
      gate('ours', 'Allow production writes for codex-b again', [
        '--blocks-agent',
        'codex-b',
        '--decision-scope',
        'production:goal:deploy',
      ]),
      'reject',
      'codex-b',
    );
    complete(
      'ours',
      gate('ours', 'Approve one write', ['--global-gate', '--decision-scope', 'write_scope:action:one']),
      'approve',
    );
    gate('original', 'Approve the public claim', ['--global-gate', '--decision-scope', 'public_claim:project:paper']);
    const ours = compare(w, 'standing decisions');
    const authority = ours['decided']?.['standing_decision_authority'] as
      { active_count?: number; inactive_count?: number; entries?: { outcome?: string }[] } | undefined;
    assert.deepEqual(
      [authority?.active_count, authority?.inactive_count, authority?.entries?.map((e) => e.outcome)],
      [1, 1, ['approve', 'reject']],
    );
  });

  it('run-history reports: runs in the last 24 h and 7 days, spends, decisions, usage, readiness runs, a global registry', () => {
    w = mixedWorkspace('status-reports');
    const alphaState = writeGoal(w, 'alpha', { compute: 1, window_hours: 24 }, ['codex-a']);
    addGoal(w, 'beta', GOAL_STATE);
    writeRuns(w, 'alpha', [
      { generated_at: hoursAgo(240), classification: 'operator_gate_approved', operator_gate: { decision: 'approve' } },
      { generated_at: hoursAgo(192), classification: 'quota_slot_voided', quota_event: { slots: 1 } },
      { generated_at: hoursAgo(72), classification: 'state_refreshed' },
      { generated_at: hoursAgo(50), classification: 'ci_validation_passed', artifact: 'report.json' },
      { generated_at: hoursAgo(30), classification: 'needs_human_reward', human_reward: { score: 1 } },
      {
        generated_at: hoursAgo(29),
        classification: 'quota_slot_spent',
        quota_event: { slots: 2, source: 'heartbeat' },
      },
      {
        generated_at: hoursAgo(2),
        classification: 'canary_promotion_readiness_smoke_group',
        evidence_scope: 'goal_run_history',
        dashboard_readiness: 'passed',
        json_path: 'runtime/missing.json',
      },
      {
        generated_at: hoursAgo(1),
        classification: 'implementation_progress',
        usage: { input_tokens: 1200, output_tokens: 300, cost_usd: 0.0123, duration_ms: 5000 },
      },
      { classification: 'implementation_progress', note: 'a row without a time' },
    ]);
    writeRuns(w, 'beta', [
      ...Array.from({ length: 9 }, (_, i) => ({
        generated_at: hoursAgo(24 * (12 + i)),
        classification: 'implementation_progress',
      })),
      { generated_at: hoursAgo(144), classification: 'dreaming_exploration_proposal' },
      { generated_at: hoursAgo(26), classification: 'canary_promotion_readiness_smoke_group' },
      { generated_at: hoursAgo(4), classification: 'reward_overlay_applied' },
      {
        generated_at: hoursAgo(3),
        classification: 'implementation_progress',
        source: 'automation',
        usage: { input_tokens: 10, output_tokens: 5, cache_tokens: 3, cost_usd: 0.5 },
      },
    ]);
    // A global registry in the runtime: this project's goal (synced after the registry was written) and a goal of
    // another project (an info finding: the current registry does not list it).
    const synced = new Date(Date.now() + 60_000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
    fs.writeFileSync(
      path.join(w.ws, 'runtime', 'registry.global.json'),
      `${JSON.stringify({
        registry_role: 'global-local',
        goals: [
          { id: 'alpha', source_registry: w.registry, state_file: alphaState, synced_at: synced },
          { id: 'elsewhere', source_registry: w.registry, state_file: alphaState, synced_at: synced },
        ],
      })}\n`,
    );
    compare(w, 'reports');
  });

  it('a stale global registry: its source-registry findings shadow the goal items, the others are items of their own', () => {
    w = mixedWorkspace('status-global');
    const alphaState = writeGoal(w, 'alpha', { compute: 1, window_hours: 24 }, ['codex-a']);
    addGoal(w, 'beta', GOAL_STATE);
    // Synced before the project registry last changed (stale: a shadow on alpha's and beta's items); beta's global
    // state file is gone (an item of its own before beta's); a goal of another project whose source registry is
    // missing (an item of its own); an info finding (the global goals this registry does not list) stays a report.
    const long = '2026-01-01T00:00:00+00:00';
    fs.mkdirSync(path.join(w.ws, 'runtime'), { recursive: true });
    fs.writeFileSync(
      path.join(w.ws, 'runtime', 'registry.global.json'),
      `${JSON.stringify({
        registry_role: 'global-local',
        goals: [
          { id: 'alpha', source_registry: w.registry, state_file: alphaState, synced_at: long },
          { id: 'beta', source_registry: w.registry, state_file: path.join(w.ws, 'moved.md'), synced_at: long },
          { id: 'elsewhere', source_registry: path.join(w.dir, 'moved.json'), state_file: alphaState },
        ],
      })}\n`,
    );
    compare(w, 'stale global registry');
    const queue = (payload(w, 'ours')['attention_queue'] as { items: Record<string, unknown>[] }).items;
    assert.deepEqual(
      queue.map((item) => [item['goal_id'], item['source'] === 'global_registry' ? item['status'] : 'goal']),
      [
        ['beta', 'state_file_missing'],
        ['elsewhere', 'source_registry_missing'],
        ['alpha', 'goal'],
        ['beta', 'goal'],
      ],
    );
    assert.deepEqual(
      (queue[2]?.['global_registry_shadow_findings'] as { kind: string }[]).map((f) => f.kind),
      ['stale_source_registry'],
    );
  });

  it('run-history reports: a release readiness ledger, and a projection route another runtime claims', () => {
    w = mixedWorkspace('status-release');
    writeGoal(w, 'solo', { compute: 1, window_hours: 24 }, ['codex-a']);
    writeRuns(w, 'solo', [
      { generated_at: hoursAgo(1), classification: 'canary_promotion_readiness_smoke_group' },
      { generated_at: hoursAgo(0.5), classification: 'implementation_progress' },
    ]);
    const ledger = path.join(w.ws, 'runtime', 'release', 'promotion-readiness', 'runs');
    fs.mkdirSync(ledger, { recursive: true });
    fs.writeFileSync(
      path.join(ledger, 'index.jsonl'),
      `${JSON.stringify({
        generated_at: hoursAgo(30),
        classification: 'canary_promotion_readiness_smoke_group',
        evidence_scope: 'runtime_release',
        dashboard_readiness: 'skipped',
      })}\n`,
    );
    // The default runtime (~/.codex/loopx) lists the goal with another project's registry as its source.
    const other = path.join(w.home, '.codex', 'loopx');
    fs.mkdirSync(other, { recursive: true });
    fs.writeFileSync(
      path.join(other, 'registry.global.json'),
      `${JSON.stringify({ goals: [{ id: 'solo', source_registry: path.join(w.dir, 'elsewhere.json') }] })}\n`,
    );
    compare(w, 'release ledger');
  });

  it('monitors on schedules, completed todos with and without successors, terminal closure and a handoff gate', () => {
    w = mixedWorkspace('status-closure');
    const head = `---\nstatus: active\nobjective: "Closure fixture."\nupdated_at: 2026-07-03T09:55:53+00:00\n---\n\n# Active Goal State\n\n`;
    const todo = (box: ' ' | 'x', text: string, meta: string): string =>
      `- [${box}] ${text}\n  <!-- loopx:todo ${meta} -->\n`;
    const tail = (next: string): string => `\n## Next Action\n\n- ${next}\n\n## Progress Ledger\n\n- Fixture.\n`;
    // Due (next_due_at passed), not yet due, without a schedule (a gap), expired, and a due watch-only monitor; an
    // advancement todo the Next Action names; done ones without a successor, with one, with no follow-up; a handoff
    // gate (excluded agent, unblocks a todo).
    writeGoal(
      w,
      'watching',
      { compute: 1, window_hours: 24 },
      ['codex-a', 'codex-b'],
      head +
        `## User Todo\n\n` +
        todo(
          ' ',
          'Approve the deploy',
          'todo_id=todo_user_gate01 status=open task_class=user_gate goal_bound=true global_gate=true',
        ) +
        `\n## Agent Todo\n\n` +
        todo(
          ' ',
          '[P1] Watch the nightly build',
          'todo_id=todo_mon_due001 status=open task_class=continuous_monitor cadence=1h next_due_at=2020-01-01T00:00:00Z',
        ) +
        todo(
          ' ',
          '[P1] Watch the weekly build',
          'todo_id=todo_mon_later1 status=open task_class=continuous_monitor cadence=1d next_due_at=2099-01-01T00:00:00Z',
        ) +
        todo(' ', '[P2] Watch the release feed', 'todo_id=todo_mon_gap001 status=open task_class=continuous_monitor') +
        todo(
          ' ',
          '[P2] Watch the old feed',
          'todo_id=todo_mon_exp001 status=open task_class=continuous_monitor next_due_at=2020-01-01T00:00:00Z expires_at=2021-01-01T00:00:00Z',
        ) +
        todo(
          ' ',
          '[P3] Watch the dashboard',
          'todo_id=todo_mon_wo0001 status=open task_class=continuous_monitor watch_only=true next_due_at=2020-01-01T00:00:00Z',
        ) +
        todo(' ', '[P0] Implement the parser', 'todo_id=todo_adv_open01 status=open task_class=advancement_task') +
        todo(
          'x',
          'Implement the lexer',
          'todo_id=todo_adv_gap001 status=done task_class=advancement_task completed_at=2026-07-01T00:00:00Z note=done%20well',
        ) +
        todo(
          'x',
          'Implement the reader',
          'todo_id=todo_adv_succ01 status=done task_class=advancement_task successor_todo_ids=todo_adv_open01 completed_at=2026-07-02T00:00:00Z updated_at=2026-07-02T01:00:00Z',
        ) +
        todo(
          'x',
          'Implement the writer',
          'todo_id=todo_adv_nofu01 status=done task_class=advancement_task no_followup=true completed_at=2026-06-30T00:00:00Z',
        ) +
        todo(
          'x',
          'Fix the build',
          'todo_id=todo_adv_unbl01 status=done task_class=advancement_task claimed_by=codex-a',
        ) +
        todo(
          ' ',
          'Repair the build again',
          'todo_id=todo_adv_next01 status=open task_class=advancement_task unblocks_todo_id=todo_adv_unbl01',
        ) +
        todo(
          ' ',
          'Review the handoff',
          'todo_id=todo_handoff01 status=open task_class=advancement_task excluded_agents=codex-b unblocks_todo_id=todo_adv_open01',
        ) +
        tail('Continue todo_adv_open01 and todo_mon_due001.'),
    );
    // Every todo done, one with no follow-up (terminal closure, closure intent; an empty User Todo section).
    addGoal(
      w,
      'closed',
      head +
        `## User Todo\n\n## Agent Todo\n\n` +
        todo(
          'x',
          'Implement the lexer',
          'todo_id=todo_cl_done01 status=done task_class=advancement_task completed_at=2026-07-01T00:00:00Z no_followup=true',
        ) +
        todo('x', 'Fix the docs', 'todo_id=todo_cl_done02 status=done') +
        tail('Nothing left.'),
    );
    // Every todo done, one completion without a successor (no terminal closure). (A watch-only monitor left open makes
    // the item a quiet monitor, whose display ours differs on by another rule: unit fixtures pin that closure.)
    addGoal(
      w,
      'gap',
      head +
        `## User Todo\n\n` +
        todo('x', 'Approve', 'todo_id=todo_cw_user01 status=done task_class=user_gate') +
        `\n## Agent Todo\n\n` +
        todo(
          'x',
          'Implement the lexer',
          'todo_id=todo_cw_done01 status=done task_class=advancement_task completed_at=2026-07-01T00:00:00Z',
        ) +
        tail('Nothing left.'),
    );
    const ours = compare(w, 'closure');
    const agent = ours['watching']?.['agent_todos'] as Record<string, unknown>;
    assert.deepEqual(
      [agent['monitor_due_count'], agent['monitor_schedule_gap_count'], agent['completed_without_successor_count']],
      [2, 1, 1],
    );
    assert.equal(
      (ours['closed']?.['agent_todos'] as Record<string, unknown>)['terminal_closure_proof'] !== undefined,
      true,
    );
  });

  it('a goal whose spawn policy allows sub-agents (task orchestration authority), with a monitor todo', () => {
    w = mixedWorkspace('status-orchestration');
    const todo = (box: ' ' | 'x', text: string, meta: string): string =>
      `- [${box}] ${text}\n  <!-- loopx:todo ${meta} -->\n`;
    writeGoal(
      w,
      'spawning',
      { compute: 1, window_hours: 24 },
      ['codex-a'],
      `---\nstatus: active\nobjective: "Orchestration fixture."\nupdated_at: 2026-07-03T09:55:53+00:00\n---\n\n` +
        `# Active Goal State\n\n## User Todo\n\n` +
        todo(
          ' ',
          'Approve the release',
          'todo_id=todo_gate_ship01 status=open task_class=user_gate unblocks_todo_id=todo_ship_it001',
        ) +
        todo(' ', 'Answer a question', 'todo_id=todo_question01 status=open task_class=user_gate') +
        `\n## Agent Todo\n\n` +
        todo(' ', '[P2] Write the notes', 'todo_id=todo_notes_0001 status=open task_class=advancement_task') +
        todo(
          ' ',
          '[P0] Ship it',
          'todo_id=todo_ship_it001 status=blocked task_class=advancement_task claimed_by=codex-a',
        ) +
        todo(' ', 'Watch the nightly build', 'todo_id=todo_watch_0001 status=open task_class=continuous_monitor') +
        todo('x', 'Done step', 'todo_id=todo_done_00001 status=done task_class=advancement_task no_followup=true') +
        `\n## Next Action\n\n- Ship it.\n\n## Progress Ledger\n\n- Fixture.\n`,
    );
    addGoal(w, 'single', GOAL_STATE);
    const registry = JSON.parse(fs.readFileSync(w.registry, 'utf8')) as { goals: Record<string, unknown>[] };
    (registry.goals[0] as Record<string, unknown>)['spawn_policy'] = { allowed: true, max_children: 2 };
    (registry.goals[1] as Record<string, unknown>)['spawn_policy'] = { allowed: true, max_children: 0 };
    fs.writeFileSync(w.registry, `${JSON.stringify(registry, null, 2)}\n`);
    // A monitor added by the original, one by ours: todos read from the markdown state carry no write-back contract.
    ok(
      run('original', w, [
        'todo',
        'add',
        '--goal-id',
        'spawning',
        '--role',
        'agent',
        '--task-class',
        'continuous_monitor',
        '--watch-only',
        '--text',
        'Watch the deploy',
      ]),
      'original todo add (monitor)',
    );
    ok(
      run('ours', w, [
        'todo',
        'add',
        '--goal-id',
        'single',
        '--role',
        'agent',
        '--task-class',
        'continuous_monitor',
        '--watch-only',
        '--text',
        'Watch the queue',
      ]),
      'ours todo add (monitor)',
    );
    const theirs = itemsOf(payload(w, 'original'));
    const ours = compare(w, 'orchestration');
    const authority = (items: typeof ours, goal: string, role: 'user_todos' | 'agent_todos') =>
      (items[goal]?.[role] as Record<string, unknown> | undefined)?.['task_orchestration_authority'] as
        { candidate_items: { todo_id: string }[]; user_blocker_items: { todo_id: string }[] } | undefined;
    assert.deepEqual(
      authority(ours, 'spawning', 'agent_todos')?.candidate_items.map((item) => item.todo_id),
      ['todo_ship_it001', 'todo_notes_0001'],
    );
    assert.deepEqual(
      authority(ours, 'spawning', 'user_todos')?.user_blocker_items.map((item) => item.todo_id),
      ['todo_gate_ship01'],
    );
    assert.equal(authority(ours, 'single', 'agent_todos'), undefined);
    // The original emits it there too (so the field-by-field comparison above covers it), and not on `single`.
    assert.deepEqual(authority(theirs, 'spawning', 'agent_todos'), authority(ours, 'spawning', 'agent_todos'));
    assert.deepEqual(authority(theirs, 'spawning', 'user_todos'), authority(ours, 'spawning', 'user_todos'));
    assert.equal(authority(theirs, 'single', 'agent_todos'), undefined);
    for (const goal of ['spawning', 'single'])
      for (const role of ['user_todos', 'agent_todos'])
        assert.equal(
          Object.hasOwn((theirs[goal]?.[role] ?? {}) as object, 'monitor_writeback'),
          false,
          `${goal} ${role}`,
        );
  });

  it('review materials (an existing and a missing linked markdown file) and pr_merged resume conditions', () => {
    w = mixedWorkspace('status-materials');
    const todo = (box: ' ' | 'x', text: string, meta: string): string =>
      `- [${box}] ${text}\n  <!-- loopx:todo ${meta} -->\n`;
    fs.mkdirSync(path.join(w.ws, 'docs'), { recursive: true });
    fs.writeFileSync(path.join(w.ws, 'docs', 'plan.md'), '# Plan\n');
    writeGoal(
      w,
      'linked',
      { compute: 1, window_hours: 24 },
      ['codex'],
      `---\nstatus: active\nobjective: "Materials fixture."\nupdated_at: 2026-07-03T09:55:53+00:00\n---\n\n# Active Goal State\n\n` +
        `## User Todo\n\n` +
        todo(
          ' ',
          'Review [the plan](docs/plan.md#scope) and `docs/missing.md`',
          'todo_id=todo_review001 status=open task_class=user_gate',
        ) +
        `\n## Agent Todo\n\n` +
        todo(
          ' ',
          'Ship after the merge',
          'todo_id=todo_prwait001 status=deferred resume_when=pr_merged:acme/widgets#12',
        ) +
        todo(
          ' ',
          'Ship after the other merge',
          'todo_id=todo_prwait002 status=deferred resume_when=pr_merged:#13 task_repository=git:github.com/acme/widgets',
        ) +
        todo(' ', 'Ship after an unknown merge', 'todo_id=todo_prwait003 status=deferred resume_when=pr_merged:#14') +
        `\n## Next Action\n\n- Review the plan.\n\n## Progress Ledger\n\n- Fixture.\n`,
    );
    const log = path.join(w.ws, 'runtime', 'goals', 'linked', 'rollout-event-log.jsonl');
    fs.mkdirSync(path.dirname(log), { recursive: true });
    const event = (id: string, kind: string, extra: Record<string, unknown>): string =>
      `${JSON.stringify({ schema_version: 'loopx_rollout_event_v0', event_id: id, event_kind: kind, recorded_at: hoursAgo(1), goal_id: 'linked', ...extra })}\n`;
    fs.writeFileSync(
      log,
      event('evt_1', 'pr_merged', { pr_ref: 'acme/widgets#12' }) +
        event('evt_2', 'pull_request_merged', { code_refs: { pr_ref: 'https://github.com/acme/widgets/pull/13' } }) +
        event('evt_3', 'pr_merged', { source_refs: [{ kind: 'pull_request', ref: 'other/repo#14' }] }),
    );
    const ours = compare(w, 'materials');
    const user = ours['linked']?.['user_todos'] as { items: Record<string, unknown>[] };
    assert.deepEqual(
      (user.items[0]?.['review_materials'] as { exists: boolean }[]).map((m) => m.exists),
      [true, false],
    );
    const agent = ours['linked']?.['agent_todos'] as { items: Record<string, unknown>[] };
    assert.deepEqual(
      agent.items.map((item) => item['resume_ready']),
      [true, true, false],
    );
  });

  it('a generated 6-goal workspace (seed 3: gates by priority, lane runs, spends, claimed and done todos)', () => {
    w = mixedWorkspace('status-generated');
    fs.rmSync(w.ws, { recursive: true, force: true });
    generateWorkspace({ goals: 6, todos: 12, runs: 20, seed: 3, out: w.ws });
    const ours = compare(w, 'generated seed 3');
    assert.ok(Object.values(ours).some((item) => item['agent_lane_recommendation'] !== undefined));
  });
});
