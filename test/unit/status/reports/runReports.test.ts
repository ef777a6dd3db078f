import assert from 'node:assert/strict';
import { sampleOf, sampleRunOf, type SampleRun } from '../../../../src/core/goal/runSample';
import { pyRound } from '../../../../src/core/pyCompat';
import { decisionFreshnessSummary } from '../../../../src/core/status/reports/decisionFreshness';
import { eventLedgerSummary } from '../../../../src/core/status/reports/eventLedger';
import { usageSummary } from '../../../../src/core/status/reports/usageSummary';

/**
 * The original's run-history reports (docs/compatibility.md, "Top-level reports"): which runs are sampled, how each
 * is classed, and the 24 h / 7 d windows counted from the time of the answer.
 */

const NOW_MS = Date.parse('2026-06-10T12:00:00Z');
const NOW_US = NOW_MS * 1000;
const at = (hours: number): string => new Date(NOW_MS - hours * 3_600_000).toISOString().replace('.000Z', '+00:00');
const run = (goal: string, row: Record<string, unknown>): SampleRun => sampleRunOf(row, goal);

describe('status reports: the sampled runs', () => {
  it('samples the newest max(limit, 20) runs over all goals, unparsable times last, ties in goal id order', () => {
    const perGoal = new Map<string, SampleRun[]>([
      ['b', [run('b', { generated_at: at(1) }), run('b', { generated_at: at(3) })]],
      ['a', [run('a', { generated_at: at(1) }), run('a', { generated_at: at(2) }), run('a', { classification: 'x' })]],
    ]);
    const sample = sampleOf(perGoal, 4);
    assert.deepEqual(
      sample.map((r) => [r.goal, r.at]),
      [
        ['a', at(1)],
        ['b', at(1)],
        ['a', at(2)],
        ['b', at(3)],
      ],
    );
    assert.equal(sampleOf(perGoal, 20).at(-1)?.at, null, 'a run without a time sorts last');
  });

  it("classes each run's event as the original does", () => {
    const classes = [
      { classification: 'quota_slot_spent' },
      { classification: 'implementation_progress', quota_event: {} },
      { classification: 'operator_gate_approved' },
      { classification: 'something_reward_ish' },
      { classification: 'implementation_progress', human_reward: { score: 1 } },
      { classification: 'inspect_result' },
      { classification: 'implementation_progress', waiting_on: 'external_evidence' },
      { classification: 'await_ci' },
      { classification: 'ci_validation_passed' },
      { classification: 'implementation_progress', artifacts: [] },
      { classification: 'state_refreshed' },
      { classification: 'todo_refreshed' },
      { classification: 'implementation_progress' },
    ].map((row) => run('g', { generated_at: at(1), ...row }).event);
    assert.deepEqual(classes, [
      'accounting',
      'accounting',
      'decision',
      'decision',
      'decision',
      'evidence',
      'evidence',
      'evidence',
      'evidence',
      'evidence',
      'state',
      'state',
      'work',
    ]);
  });

  it("counts a spend's slots (a void subtracts), automation and progress runs, and usage blocks", () => {
    const spend = run('g', { classification: 'quota_slot_spent', quota_event: { slots: '3', source: 'visible-goal' } });
    assert.deepEqual([spend.slots, spend.automation, spend.progress], [3, false, false]);
    const voided = run('g', { classification: 'quota_slot_voided', quota_event: { slots: 2 } });
    assert.deepEqual([voided.slots, voided.automation], [-2, true]);
    assert.equal(run('g', { classification: 'quota_slot_spent', quota_event: { slots: 'x' } }).slots, 1);
    assert.equal(run('g', { classification: 'work', source: 'nightly-heartbeat' }).automation, true);
    assert.equal(run('g', { classification: 'state_refreshed' }).progress, false);
    assert.deepEqual(run('g', { usage: { input_tokens: 2.9, cost_usd: -1 } }).usage, {
      input_tokens: 2,
      output_tokens: 0,
      cache_tokens: 0,
      cost_usd: 0,
      duration_ms: 0,
    });
    assert.equal(run('g', { usage: { cost_usd: 1 } }).usage, null, 'no tokens: no usage');
  });

  it('rounds as Python does (an exact tie to even)', () => {
    assert.equal(pyRound(0.125, 2), 0.12);
    assert.equal(pyRound(0.375, 2), 0.38);
    assert.equal(pyRound(1 / 3, 3), 0.333);
    assert.equal(pyRound(0.0625, 3), 0.062);
  });
});

describe('status reports: event_ledger_summary', () => {
  it('counts events by class in the last 24 h and 7 days, per goal (most events first), with the newest event', () => {
    const sample = sampleOf(
      new Map([
        [
          'a',
          [
            run('a', { generated_at: at(1), classification: 'state_refreshed' }),
            run('a', { generated_at: at(30), classification: 'quota_slot_spent' }),
            run('a', { generated_at: at(24 * 8) }),
          ],
        ],
        ['b', [run('b', { generated_at: at(2) }), run('b', { generated_at: at(3) })]],
        ['c', [run('c', { classification: 'no time' })]],
      ]),
      20,
    );
    const summary = eventLedgerSummary(sample, NOW_US);
    assert.equal(summary.sample_run_count, 6);
    assert.equal(summary.generated_at, '2026-06-10T12:00:00+00:00');
    assert.deepEqual([summary.totals.events_24h, summary.totals.events_7d], [3, 4]);
    assert.deepEqual(summary.totals.by_class_7d, { accounting: 1, decision: 0, evidence: 0, state: 1, work: 2 });
    assert.deepEqual(
      summary.goals.map((g) => [g.goal_id, g.events_24h, g.events_7d, g.latest_event_class, g.latest_event_at]),
      [
        ['b', 2, 2, 'work', at(2)],
        ['a', 1, 2, 'state', at(1)],
      ],
    );
  });
});

describe('status reports: usage_summary', () => {
  it('counts runs, slots, automation, progress and usage per window; shares of the 24 h runs; drops unobserved usage', () => {
    const sample = sampleOf(
      new Map([
        [
          'a',
          [
            run('a', { generated_at: at(1), classification: 'work', usage: { input_tokens: 10, cost_usd: 0.1 } }),
            run('a', { generated_at: at(2), classification: 'quota_slot_spent', quota_event: { slots: 2 } }),
          ],
        ],
        [
          'b',
          [
            run('b', { generated_at: at(3), classification: 'work' }),
            run('b', { generated_at: at(50), classification: 'work', usage: { output_tokens: 5, cost_usd: 0.2 } }),
          ],
        ],
      ]),
      20,
    );
    const summary = usageSummary(sample, NOW_US);
    assert.equal(summary.totals['runs_24h'], 3);
    assert.equal(summary.totals['runs_7d'], 4);
    assert.equal(summary.totals['quota_spend_slots_24h'], 2);
    assert.equal(summary.totals['automation_run_count_24h'], 1);
    assert.equal(summary.totals['progress_signal_run_count_7d'], 3);
    assert.equal(summary.totals['input_tokens_24h'], 10);
    assert.equal(summary.totals['cost_usd_7d'], 0.3);
    const [first, second] = summary.goals;
    assert.deepEqual([first?.goal_id, first?.['project_share_24h']], ['a', 0.667]);
    assert.deepEqual([second?.goal_id, second?.['project_share_24h']], ['b', 0.333]);
    assert.equal('input_tokens_24h' in (second ?? {}), false, "b's 24 h usage was not observed");
    assert.equal(second?.['output_tokens_7d'], 5);
  });
});

describe('status reports: decision_freshness_summary', () => {
  it("rebases a decision older than 7 days or followed by its goal's newer runs; fresh otherwise", () => {
    const sample = sampleOf(
      new Map([
        [
          'a',
          [
            run('a', { generated_at: at(1), classification: 'ci_passed' }),
            run('a', { generated_at: at(5), classification: 'needs_human_reward', human_reward: {} }),
            run('a', { generated_at: at(24 * 9), classification: 'reward_overlay_note' }),
          ],
        ],
        ['b', [run('b', { generated_at: at(2), operator_gate: {}, operator_gate_resume_contract: {} })]],
      ]),
      20,
    );
    const summary = decisionFreshnessSummary(sample, NOW_US);
    assert.deepEqual(summary.summary, { decision_count: 4, stale_count: 1, rebase_required_count: 2, fresh_count: 2 });
    assert.deepEqual(
      summary.items.map((i) => [i.goal_id, i.decision_kind, i.freshness_state, i.newer_event_count_7d, i.age_days]),
      [
        ['a', 'decision_classification', 'stale_rebase_required', 2, 9],
        ['a', 'human_reward', 'rebase_required', 1, 0.21],
        ['b', 'operator_gate', 'fresh', 0, 0.08],
        ['b', 'operator_gate_resume_contract', 'fresh', 0, 0.08],
      ],
    );
    assert.deepEqual(summary.items[1]?.newer_event_classes_7d, {
      accounting: 0,
      decision: 0,
      evidence: 1,
      state: 0,
      work: 0,
    });
  });
});
