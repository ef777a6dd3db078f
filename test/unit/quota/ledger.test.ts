import assert from 'node:assert/strict';
import * as path from 'node:path';
import * as os from 'node:os';
import * as fs from 'node:fs';
import { readQuotaConfig } from '../../../src/core/quota/config';
import { readQuotaLedger } from '../../../src/core/quota/ledger';
import { computeQuotaStatus, NO_RESERVATIONS, type GoalFacts } from '../../../src/core/quota/state';
import { settlementIdentity } from '../../../src/core/quota/identity';
import { loadedQuotaSummary } from '../../support/quotaSummary';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import { addRun, clockAt, hoursBefore, makeWorkspace, type Workspace } from './helpers';

const CODEX: GoalFacts = { stopped: false, health: { ok: true, reason: '' }, waitingOn: 'codex', focusMarker: null };

async function spendN(ws: Workspace, n: number, at: Date = hoursBefore(1)): Promise<void> {
  for (let i = 0; i < n; i++) await addRun(ws, at, { classification: 'quota_slot_spent' });
}

async function statusOf(ws: Workspace, quota: Record<string, unknown>, facts: GoalFacts = CODEX) {
  const config = readQuotaConfig({ quota });
  const { ledger } = await readQuotaLedger({
    runtimeRoot: ws.runtimeRoot,
    goalId: ws.goalId,
    projectRoot: ws.dir,
    windowHours: config.slots.window_hours,
    clock: clockAt(),
  });
  return computeQuotaStatus(config, ledger, NO_RESERVATIONS, facts);
}

describe('quota arithmetic, states and ledger', () => {
  it('case 1: allowed_slots 0 is throttled whatever was spent, and the reason mentions 0', async () => {
    for (const spent of [0, 1, 99]) {
      const ws = makeWorkspace();
      await spendN(ws, spent);
      const status = await statusOf(ws, { compute: 1, window_hours: 24, slot_minutes: 1, allowed_slots: 0 });
      assert.equal(status.state, 'throttled', `spent ${spent}`);
      assert.match(status.reason, /of 0 allowed slots/);
    }
  });

  it('case 2: eligible while spent < allowed, throttled at or above it', async () => {
    const cases: [number, number, string][] = [
      [1, 0, 'eligible'],
      [1, 1, 'throttled'],
      [10, 9, 'eligible'],
      [10, 10, 'throttled'],
      [10, 11, 'throttled'],
    ];
    for (const [allowed, spent, expected] of cases) {
      const ws = makeWorkspace();
      await spendN(ws, spent);
      assert.equal((await statusOf(ws, { allowed_slots: allowed })).state, expected, `${allowed}/${spent}`);
    }
  });

  it('case 3: compute 0 is paused, not throttled, even with spends', async () => {
    const ws = makeWorkspace();
    await spendN(ws, 5);
    const status = await statusOf(ws, { compute: 0, allowed_slots: 0 });
    assert.equal(status.state, 'paused');
    assert.equal(status.pause_cause, 'compute_quota_zero');
  });

  it('case 4: compute 0.01 over 24 h allows 14 slots and is eligible', async () => {
    const status = await statusOf(makeWorkspace(), { compute: 0.01, window_hours: 24 });
    assert.equal(status.allowed_slots, 14);
    assert.equal(status.state, 'eligible');
  });

  it('case 5: no quota config means compute 1.0, 1440 slots, 0 spent', async () => {
    const config = readQuotaConfig({ id: 'g' });
    const ws = makeWorkspace();
    const { ledger } = await readQuotaLedger({
      runtimeRoot: ws.runtimeRoot,
      goalId: 'g',
      projectRoot: ws.dir,
      windowHours: 24,
      clock: clockAt(),
    });
    const status = computeQuotaStatus(config, ledger, NO_RESERVATIONS, CODEX);
    assert.deepEqual([status.compute, status.allowed_slots, status.spent_slots], [1, 1440, 0]);
    assert.equal(status.reason, '1 compute quota; eligible for the next automatic agent turn');
    assert.deepEqual(config.config_warnings, []);
  });

  it('case 6: an eligible codex goal with a continuation_boundary flag is focus_wait and keeps its compute', async () => {
    const status = await statusOf(
      makeWorkspace(),
      { compute: 0.5 },
      { ...CODEX, focusMarker: 'continuation_boundary' },
    );
    assert.equal(status.state, 'focus_wait');
    assert.equal(status.compute, 0.5);
  });

  it('case 7: rolling window and voids — a spend 25 h ago does not count, a void cancels the spend it names', async () => {
    const ws = makeWorkspace();
    const recent = hoursBefore(1);
    await addRun(ws, recent, { classification: 'quota_slot_spent' }, { slots: 1 });
    await addRun(ws, hoursBefore(25), { classification: 'quota_slot_spent' }, { slots: 2 });
    assert.equal((await statusOf(ws, { window_hours: 24 })).spent_slots, 1);
    const { ledger: before } = await readQuotaLedger({
      runtimeRoot: ws.runtimeRoot,
      goalId: 'g',
      projectRoot: ws.dir,
      windowHours: 24,
      clock: clockAt(),
    });
    const recentSpend = before.spends.find((s) => s.in_window);
    await addRun(ws, hoursBefore(0.5), {
      classification: 'quota_slot_voided',
      quota_event: { voided_run_generated_at: recentSpend?.generated_at },
    });
    const after = await statusOf(ws, { window_hours: 24 });
    assert.equal(after.spent_slots, 0);
    assert.equal(after.voided_slots, 1);
  });

  it('counts a spend written by the Python LoopX (demo record, slots only in the JSON) like ours', async () => {
    const dir = materializeDemoWorkspace(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-quota-demo-')) + '/ws');
    const summary = await loadedQuotaSummary({
      registryPath: path.join(dir, '.loopx', 'registry.json'),
      goalId: 'tidy-notes',
      clock: clockAt('2026-11-28T12:00:00Z'),
      homeDir: dir,
    });
    assert.equal(summary.allowed_slots, 24);
    assert.equal(summary.spent_slots, 1);
    assert.equal(summary.remaining_slots, 23);
    assert.equal(summary.state, 'eligible');
  });

  it('duplicate settlement identities count once, whoever wrote them', async () => {
    const ws = makeWorkspace();
    const identity = settlementIdentity({
      goalId: 'g',
      agentId: 'agent-a',
      turnInstanceId: 't1',
      todoId: 'todo_parser',
    });
    await addRun(ws, hoursBefore(2), { classification: 'quota_slot_spent', settlement_identity: identity });
    await addRun(ws, hoursBefore(1), { classification: 'quota_slot_spent', settlement_identity: identity });
    const status = await statusOf(ws, {});
    assert.equal(status.spent_slots, 1);
    assert.equal(status.duplicate_spends, 1);
  });

  it('sums usage per window, flags estimates and warns at warn_ratio', async () => {
    const ws = makeWorkspace();
    await addRun(ws, hoursBefore(1), {
      classification: 'quota_slot_spent',
      usage: { tokens: 4000, cost_usd: 0.5, minutes: 10, estimated: false },
    });
    await addRun(ws, hoursBefore(2), {
      classification: 'quota_slot_spent',
      usage: { tokens: 1000, cost_usd: 0.35, estimated: true },
    });
    await addRun(ws, hoursBefore(30), {
      classification: 'quota_slot_spent',
      usage: { tokens: 9999, cost_usd: 9, estimated: false },
    });
    const status = await statusOf(ws, { max_cost_usd: 1, max_tokens: 100000, warn_ratio: 0.8 });
    assert.deepEqual(status.budgets.max_cost_usd, { used: 0.85, reserved: 0, limit: 1, ratio: 0.85, estimated: true });
    assert.equal(status.budgets.max_tokens.used, 5000);
    assert.equal(status.budgets.max_turn_minutes.limit, null);
    assert.equal(status.warn, true);
    assert.equal(status.exceeded, false);
    assert.equal(status.state, 'eligible');
    const over = await statusOf(ws, { max_cost_usd: 0.8 });
    assert.equal(over.state, 'throttled');
    assert.equal(over.throttle_cause, 'max_cost_usd');
    assert.equal(over.exceeded, true);
  });

  it('reports every nonsense quota value with the value used instead', () => {
    const config = readQuotaConfig({
      quota: {
        compute: 1.7,
        window_hours: 0.5,
        slot_minutes: 'abc',
        max_cost_usd: -3,
        max_tokens: 10.5,
        warn_ratio: 2,
      },
    });
    assert.deepEqual(config.slots, { compute: 1, window_hours: 1, slot_minutes: 1, allowed_slots: 60 });
    assert.deepEqual(config.budgets, { max_cost_usd: null, max_tokens: 10, max_turn_minutes: null });
    assert.equal(config.warn_ratio, 0.8);
    assert.deepEqual(
      config.config_warnings.map((w) => [w.field, w.value, w.used]),
      [
        ['quota.compute', 1.7, 1],
        ['quota.window_hours', 0.5, 1],
        ['quota.slot_minutes', 'abc', 1],
        ['quota.max_cost_usd', -3, null],
        ['quota.max_tokens', 10.5, 10],
        ['quota.warn_ratio', 2, 0.8],
      ],
    );
  });

  it('allowed_slots rounds half to even like the original (2.5 → 2)', () => {
    assert.equal(
      readQuotaConfig({ quota: { compute: 0.05, window_hours: 1, slot_minutes: 1 } }).slots.allowed_slots,
      3,
    );
    assert.equal(
      readQuotaConfig({ quota: { compute: 0.5, window_hours: 1, slot_minutes: 12 } }).slots.allowed_slots,
      2,
    );
  });
});
