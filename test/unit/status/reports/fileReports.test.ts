import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../../../src/core/clock';
import { GoalStatusCache } from '../../../../src/core/status/goalStatus';
import { globalRegistryHealth } from '../../../../src/core/status/reports/globalRegistryHealth';
import { runtimeProjectionRoutes } from '../../../../src/core/status/reports/runtimeProjectionRoutes';
import { withRuntimeReports } from '../../../../src/core/status/statusPayload';
import { registryGoal, writeRegistry } from '../../../support/fixtureBuilders';
import { loadStatusAt } from '../../../support/status';
import { tempDir } from '../../../support/tempDir';

/**
 * The top-level reports read from files (docs/compatibility.md, "Top-level reports"): promotion readiness and its gate
 * (the release ledger, every goal folder), the global registry's health, the projection routes, and the reports
 * computed at the time of the answer, also when the persistent cache answers.
 */

const NOW = '2026-06-10T12:00:00Z';
const NOW_MS = Date.parse(NOW);
const at = (hours: number): string => new Date(NOW_MS - hours * 3_600_000).toISOString().replace('.000Z', '+00:00');

function project(): { dir: string; registryPath: string; runtime: string } {
  const dir = tempDir('loopx-reports-');
  const registryPath = writeRegistry(dir, [registryGoal(dir, 'alpha'), registryGoal(dir, 'beta')]);
  return { dir, registryPath, runtime: path.join(dir, '.loopx', 'runtime') };
}

function writeRows(file: string, rows: readonly Record<string, unknown>[]): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.appendFileSync(file, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
}

const goalIndex = (runtime: string, goal: string): string => path.join(runtime, 'goals', goal, 'runs', 'index.jsonl');
const READY = 'canary_promotion_readiness_smoke_group';

describe('status reports: promotion readiness and the promotion gate', () => {
  it('takes the newest readiness run of any goal folder (also one the registry does not list), fresh within 24 h', async () => {
    const { dir, registryPath, runtime } = project();
    writeRows(goalIndex(runtime, 'alpha'), [{ generated_at: at(30), classification: READY }]);
    writeRows(goalIndex(runtime, 'retired'), [
      { generated_at: at(3), classification: READY, dashboard_readiness: 'passed' },
    ]);
    const payload = await loadStatusAt({ registryPath, homeDir: dir, clock: fixedClock(NOW) });
    const summary = payload.promotion_readiness_summary as Record<string, unknown>;
    assert.deepEqual(
      [
        summary['source'],
        summary['goal_id'],
        summary['freshness_status'],
        summary['age_hours'],
        summary['sample_run_count'],
      ],
      ['goal_run_history_legacy', 'retired', 'fresh', 3, 1],
    );
    assert.equal(summary['evidence_scope'], 'goal_run_history');
    const gate = payload.promotion_gate as Record<string, unknown>;
    assert.deepEqual([gate['gate_state'], gate['can_promote'], gate['warning_message']], ['ready', true, undefined]);
  });

  it('the release ledger wins; a stale readiness warns (non-blocking), its age written as Python writes a float', async () => {
    const { dir, registryPath, runtime } = project();
    writeRows(goalIndex(runtime, 'alpha'), [{ generated_at: at(1), classification: READY }]);
    writeRows(path.join(runtime, 'release', 'promotion-readiness', 'runs', 'index.jsonl'), [
      { generated_at: at(26), classification: READY },
    ]);
    const payload = await loadStatusAt({ registryPath, homeDir: dir, clock: fixedClock(NOW) });
    const summary = payload.promotion_readiness_summary as Record<string, unknown>;
    assert.deepEqual(
      [summary['source'], summary['goal_id'], summary['evidence_scope'], summary['freshness_status']],
      ['runtime_release_ledger', null, 'runtime_release', 'stale'],
    );
    const gate = payload.promotion_gate as Record<string, unknown>;
    assert.deepEqual([gate['gate_state'], gate['should_warn'], gate['non_blocking']], ['warning', true, true]);
    assert.match(String(gate['warning_message']), /evidence is stale; generated_at=.*, age_hours=26\.0\. This is/);
  });

  it('no readiness run anywhere: missing, and the gate says why', async () => {
    const { dir, registryPath } = project();
    const payload = await loadStatusAt({ registryPath, homeDir: dir, clock: fixedClock(NOW) });
    const summary = payload.promotion_readiness_summary as Record<string, unknown>;
    assert.deepEqual(
      [summary['available'], summary['freshness_status'], summary['reason']],
      [false, 'missing', 'no canary promotion readiness run found in full run history'],
    );
    const readiness = (payload.promotion_gate as { readiness: Record<string, unknown> }).readiness;
    assert.equal(readiness['reason'], 'promotion readiness ledger does not exist');
  });
});

describe('status reports: answered at the time of the answer', () => {
  it('moves the windows with the clock, also when the persistent cache answers', async () => {
    const { dir, registryPath, runtime } = project();
    writeRows(goalIndex(runtime, 'alpha'), [{ generated_at: at(20), classification: 'implementation_progress' }]);
    const first = await loadStatusAt({ registryPath, homeDir: dir, clock: fixedClock(NOW), persistentCache: true });
    const totals = (p: typeof first): unknown =>
      (p.event_ledger_summary as { totals: { events_24h: number } }).totals.events_24h;
    assert.equal(totals(first), 1);
    const later = new Date(NOW_MS + 5 * 3_600_000);
    const second = await loadStatusAt({
      registryPath,
      homeDir: dir,
      clock: fixedClock(later),
      persistentCache: true,
      cache: new GoalStatusCache(),
    });
    assert.equal(totals(second), 0, 'the run left the 24 h window: nothing was frozen in the cache');
    assert.equal((second.usage_summary as { generated_at: string }).generated_at, '2026-06-10T17:00:00+00:00');
    const refreshed = withRuntimeReports(first, later.getTime());
    assert.equal(totals(refreshed), 0, 'a payload answered later counts from the later time');
    assert.equal(refreshed.attention_queue, first.attention_queue);
  });
});

describe('status reports: global_registry', () => {
  it('absent: available false and ok', () => {
    const { dir, registryPath, runtime } = project();
    const health = globalRegistryHealth({ registryPath, runtimeRoot: runtime, current: {}, homeDir: dir });
    assert.deepEqual([health.available, health.ok, health['findings']], [false, true, []]);
  });

  it('finds duplicate ids (not ok), stale and missing sources, missing state files, and goals out of scope', () => {
    const { dir, registryPath, runtime } = project();
    const state = path.join(dir, 'state.md');
    fs.writeFileSync(state, '# state\n');
    fs.mkdirSync(runtime, { recursive: true });
    const stale = new Date(fs.statSync(registryPath).mtimeMs - 60_000).toISOString();
    fs.writeFileSync(
      path.join(runtime, 'registry.global.json'),
      JSON.stringify({
        goals: [
          { id: 'alpha', source_registry: registryPath, state_file: state, synced_at: stale },
          { id: 'alpha', source_registry: registryPath, state_file: state },
          { id: 'gone', source_registry: path.join(dir, 'nowhere.json'), state_file: 'missing.md' },
          { id: 'bare', source_registry: registryPath },
        ],
      }),
    );
    const current = JSON.parse(fs.readFileSync(registryPath, 'utf8')) as Record<string, unknown>;
    const health = globalRegistryHealth({ registryPath, runtimeRoot: runtime, current, homeDir: dir });
    const findings = health['findings'] as { kind: string; goal_id?: string; goal_ids?: string[] }[];
    assert.equal(health.ok, false);
    assert.deepEqual(
      findings.map((f) => [f.kind, f.goal_id ?? f.goal_ids]),
      [
        ['duplicate_goal_id', 'alpha'],
        ['stale_source_registry', 'alpha'],
        ['source_registry_missing', 'gone'],
        ['state_file_missing', 'gone'],
        ['state_file_not_declared', 'bare'],
        ['current_registry_scope_excludes_global_goals', ['bare', 'gone']],
      ],
    );
    assert.deepEqual(health['summary'], { high: 1, action: 4, info: 1, checks: 2, findings: 6 });
  });
});

describe('status reports: runtime_projection_routes', () => {
  it('healthy when no other runtime claims the goal; not when the default runtime lists it with another source', () => {
    const { dir, registryPath, runtime } = project();
    const registry = JSON.parse(fs.readFileSync(registryPath, 'utf8')) as Record<string, unknown>;
    const input = { registryPath, runtimeRoot: runtime, registry, goalId: null, homeDir: dir, envRuntimeRoot: null };
    assert.deepEqual(runtimeProjectionRoutes(input), { healthy: true });
    assert.deepEqual(runtimeProjectionRoutes({ ...input, registry: { goals: [] } }), { healthy: null });
    const other = path.join(dir, '.codex', 'loopx');
    fs.mkdirSync(other, { recursive: true });
    fs.writeFileSync(
      path.join(other, 'registry.global.json'),
      JSON.stringify({ goals: [{ id: 'beta', source_registry: path.join(dir, 'elsewhere.json') }] }),
    );
    assert.deepEqual(runtimeProjectionRoutes(input), { healthy: false });
    assert.deepEqual(runtimeProjectionRoutes({ ...input, goalId: 'alpha' }), { healthy: true });
    // Listed with this registry as its source: a route to that runtime, ready until a run is routed.
    fs.writeFileSync(
      path.join(other, 'registry.global.json'),
      JSON.stringify({ goals: [{ id: 'beta', source_registry: registryPath }] }),
    );
    assert.deepEqual(runtimeProjectionRoutes(input), { healthy: true });
  });
});
