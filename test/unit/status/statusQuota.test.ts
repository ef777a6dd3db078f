import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { loadedQuotaSummary } from '../../support/quotaSummary';
import { fileSystemGoalReader, type GoalFileReader } from '../../../src/core/goal/files';
import { GoalStatusCache } from '../../../src/core/status/goalStatus';
import { goalItems } from '../../../src/core/status/statusPayload';
import { loadStatusAt, statusRef } from '../../support/status';
import {
  FOCUS_WAIT_REASON,
  OPERATOR_GATE_BYPASS_POLICY,
  pythonG,
  statusQuotaState,
  statusQuotaSummaries,
} from '../../../src/core/status/statusQuota';
import type { GoalQuotaSummary } from '../../../src/core/quota/summary';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';

const CLOCK = fixedClock('2026-11-28T12:00:00Z');

function demo(): { dir: string; registryPath: string } {
  const dir = materializeDemoWorkspace(
    path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-status-quota-'))), 'demo'),
  );
  return { dir, registryPath: path.join(dir, '.loopx', 'registry.json') };
}

describe('status quota from the reads status already made', () => {
  it('attaches the same quota as a standalone summary, for every goal', async () => {
    const { dir, registryPath } = demo();
    const payload = await loadStatusAt({
      registryPath,
      homeDir: dir,
      quotaSummary: statusQuotaSummaries({ registryPath, clock: CLOCK, homeDir: dir }),
    });
    const standalone = await loadedQuotaSummary({ registryPath, goalId: 'tidy-notes', clock: CLOCK, homeDir: dir });
    const item = goalItems(payload)[0];
    assert.ok(item);
    // The same counts; the state follows the item's route (its open user gate holds it for the controller).
    assert.deepEqual(item.quota, statusQuotaState(standalone, item, null));
    const {
      blocked_action_scope: _scope,
      safe_bypass_allowed: _allowed,
      safe_bypass_policy: _policy,
      ...counts
    } = item.quota ?? {};
    assert.deepEqual({ ...counts, state: standalone.state, reason: standalone.reason }, standalone);
    assert.equal(item.quota?.state, 'operator_gate');
    // At the gate, the original's words and its bypass policy (the mixed tier compares them with the original's).
    assert.equal(item.quota?.reason, 'operator gate blocks gated delivery; safe non-gated steering may continue');
    assert.equal(item.quota?.blocked_action_scope, 'gated_delivery');
    assert.equal(item.quota?.safe_bypass_allowed, true);
    assert.equal(item.quota?.safe_bypass_policy, OPERATOR_GATE_BYPASS_POLICY);
    assert.equal(
      payload.contract.warnings.some((w) => w.includes('quota summary unavailable')),
      false,
    );
  });

  it('hands the provider the registry, the raw entry and the run index status read (the index is read once)', async () => {
    const { dir, registryPath } = demo();
    let indexReads = 0;
    const reader: GoalFileReader = {
      ...fileSystemGoalReader,
      readRunIndex: async (file, options) => {
        indexReads++;
        const read = await fileSystemGoalReader.readRunIndex(file, options);
        // A spend only this read knows about: the quota must count it, so it used this read.
        return {
          ...read,
          rows: [
            {
              generated_at: '2026-11-28T11:59:00+00:00',
              classification: 'quota_slot_spent',
              slots: 5,
              json_exists: false,
              markdown_exists: false,
            },
            ...read.rows,
          ],
        };
      },
    };
    const seen: { entry: unknown; rows: number | undefined; registryGoals: unknown }[] = [];
    const provider = statusQuotaSummaries({ registryPath, clock: CLOCK, homeDir: dir });
    const payload = await loadStatusAt({
      registryPath,
      homeDir: dir,
      cache: new GoalStatusCache(reader),
      quotaSummary: (goal, sources) => {
        seen.push({
          entry: sources.registryEntry,
          rows: sources.index.kind === 'rows' ? sources.index.runIndex?.rows.length : undefined,
          registryGoals: sources.registry['goals'],
        });
        return provider(goal, sources);
      },
    });
    assert.equal(indexReads, 1);
    const item = goalItems(payload)[0];
    assert.equal(item?.quota?.spent_slots, 1 + 5, 'the demo spend plus the one only the shared read has');
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.rows, item?.unique_runs);
    assert.equal(
      seen[0]?.entry,
      (seen[0]?.registryGoals as unknown[])[0],
      'the raw entry object, unknown fields and all',
    );
  });

  it("a caller's cache keeps each goal's run index for its quota; release lets it go", async () => {
    const { dir, registryPath } = demo();
    const cache = new GoalStatusCache();
    await loadStatusAt({ registryPath, homeDir: dir, cache });
    const target = statusRef({
      goalId: 'tidy-notes',
      projectRoot: dir,
      runtimeRoot: path.join(dir, '.loopx', 'runtime'),
    });
    assert.equal(cache.heldRunIndex(target)?.read?.rows.length, 3);
    assert.equal(
      cache.heldRunIndex(target)?.stamp?.size,
      fs.statSync(path.join(dir, '.loopx', 'runtime', 'goals', 'tidy-notes', 'runs', 'index.jsonl')).size,
    );
    cache.release(target);
    assert.equal(cache.heldRunIndex(target), undefined);
  });
});

/** A goal's quota summary (ours) with `compute` 0.5 and 1 of 24 slots spent; `over` fields replace its own. */
function summaryFixture(over: Partial<GoalQuotaSummary> = {}): GoalQuotaSummary {
  const budget = { used: 0, reserved: 0, limit: null, ratio: null, estimated: false };
  return {
    goal_id: 'g',
    state: 'eligible',
    reason: 'our own words',
    compute: 0.5,
    window_hours: 24,
    slot_minutes: 60,
    allowed_slots: 12,
    spent_slots: 1,
    reserved_slots: 0,
    remaining_slots: 11,
    budgets: { max_cost_usd: budget, max_tokens: budget, max_turn_minutes: budget },
    warn: false,
    exceeded: false,
    next_slot_frees_at: null,
    config_warnings: [],
    ...over,
  };
}

const GATE_FIELDS = ['blocked_action_scope', 'safe_bypass_allowed', 'safe_bypass_policy', 'focus_wait'] as const;

/** The state, reason and gate fields of a status item's quota (the rest is the summary's counts, checked below). */
function words(quota: ReturnType<typeof statusQuotaState>): Record<string, unknown> {
  const shown: Record<string, unknown> = { state: quota.state, reason: quota.reason };
  for (const key of GATE_FIELDS) if (quota[key] !== undefined) shown[key] = quota[key];
  return shown;
}

describe("a status item's quota words each state as the original's quota_status (loopx/quota.py)", () => {
  const codex = { waiting_on: 'codex', severity: 'info' } as const;

  it('at an operator gate (controller or owner): the gate reason and its bypass policy', () => {
    for (const waiting_on of ['controller', 'user_or_controller'] as const)
      assert.deepEqual(words(statusQuotaState(summaryFixture(), { waiting_on, severity: 'action' }, null)), {
        state: 'operator_gate',
        reason: 'operator gate blocks gated delivery; safe non-gated steering may continue',
        blocked_action_scope: 'gated_delivery',
        safe_bypass_allowed: true,
        safe_bypass_policy:
          'Do not execute agent_command, adapter work, write-control, production actions, or the gated path. A ' +
          'heartbeat may spend one bounded turn on read-only steering, analysis, documentation, or another ' +
          'priority-stack item that does not depend on this gate.',
      });
  });

  it('the other routes: health first, then external evidence, focus wait, eligible, no Codex-ready work', () => {
    const cases: [Parameters<typeof statusQuotaState>[1], string | null, Record<string, unknown>][] = [
      [
        { waiting_on: 'controller', severity: 'high' },
        null,
        { state: 'blocked_health', reason: 'health or contract blocker must clear before compute is spent' },
      ],
      [
        { waiting_on: 'external_evidence', severity: 'info' },
        null,
        { state: 'waiting', reason: 'external evidence is still pending; do not spend delivery compute yet' },
      ],
      [
        codex,
        'continuation_boundary',
        { state: 'focus_wait', reason: FOCUS_WAIT_REASON, blocked_action_scope: 'delivery_focus', focus_wait: true },
      ],
      [codex, null, { state: 'eligible', reason: '0.5 compute quota; eligible for the next automatic agent turn' }],
      [
        { waiting_on: 'monitor_signal', severity: 'info' },
        null,
        { state: 'waiting', reason: 'no active Codex-ready work is currently selected' },
      ],
    ];
    for (const [attention, focus, expected] of cases)
      assert.deepEqual(
        words(statusQuotaState(summaryFixture(), attention, focus)),
        expected,
        JSON.stringify(attention),
      );
  });

  it("throttled: the original's words when the spent slots use the window up, ours for a reservation or a budget", () => {
    const spent = statusQuotaState(
      summaryFixture({ spent_slots: 12, remaining_slots: 0, exceeded: true, state: 'throttled' }),
      codex,
      null,
    );
    assert.deepEqual(words(spent), {
      state: 'throttled',
      reason: '0.5 compute quota spent 12/12 slots in this window',
    });
    const reserved = summaryFixture({
      spent_slots: 11,
      reserved_slots: 1,
      remaining_slots: 0,
      exceeded: true,
      state: 'throttled',
      reason: '11 spent + 1 reserved of 12 allowed slots in the last 24 h; throttled',
    });
    assert.equal(statusQuotaState(reserved, codex, null), reserved);
  });

  it('keeps the counts, carries no gate field off the gate, and leaves a paused summary as it is', () => {
    const summary = summaryFixture({ state: 'operator_gate', reason: 'the registry waits on the controller' });
    const eligible = statusQuotaState(summary, codex, null);
    assert.deepEqual({ ...eligible, state: summary.state, reason: summary.reason }, summary);
    for (const key of GATE_FIELDS) assert.equal(Object.hasOwn(eligible, key), false, key);
    const paused = summaryFixture({ state: 'paused', compute: 0, allowed_slots: 0 });
    assert.equal(statusQuotaState(paused, { waiting_on: 'controller', severity: 'action' }, null), paused);
  });

  it("writes numbers as Python's %g", () => {
    const cases: [number, string][] = [
      [1, '1'],
      [0.5, '0.5'],
      [2.25, '2.25'],
      [1 / 3, '0.333333'],
      [123456.7, '123457'],
      [1234567, '1.23457e+06'],
      [0.00001, '1e-05'],
      [0.0001, '0.0001'],
      [0, '0'],
      [100, '100'],
    ];
    for (const [x, text] of cases) assert.equal(pythonG(x), text, String(x));
  });
});
