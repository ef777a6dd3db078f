import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import {
  mergeGlobalRegistryFindings,
  type GlobalRegistryShadowFinding,
} from '../../../src/core/status/globalRegistryAttention';
import { goalItems } from '../../../src/core/status/statusPayload';
import { statusQuotaSummaries } from '../../../src/core/status/statusQuota';
import { registryGoal, stateFileText, writeRegistry, writeStateFile } from '../../support/fixtureBuilders';
import { loadStatusAt } from '../../support/status';
import { tempDir } from '../../support/tempDir';

/**
 * The global registry's findings in the attention queue (docs/compatibility.md, "Top-level reports"; the original's
 * `merge_global_registry_findings`): a source-registry finding of a goal with a quota shadows that goal's item, any
 * other action finding is an item of its own before the goals' items; info findings stay in `global_registry` only.
 */

const stale = {
  kind: 'stale_source_registry',
  severity: 'action',
  message: '`alpha` source registry changed after its last global sync',
  recommended_action: 'run `loopx sync-global --goal-id alpha` from the source project',
  goal_id: 'alpha',
  path: '/p/.loopx/registry.json',
};
const stateMissing = {
  kind: 'state_file_missing',
  severity: 'action',
  message: '`alpha` active state file is missing',
  recommended_action: 'repair `alpha` state_file or reconnect the project',
  goal_id: 'alpha',
};
const sourceMissing = {
  kind: 'source_registry_missing',
  severity: 'action',
  message: '`gone` source registry is missing',
  recommended_action: 'reconnect `gone` from its project',
  goal_id: 'gone',
};
const info = {
  kind: 'current_registry_scope_excludes_global_goals',
  severity: 'info',
  message: 'current registry excludes 1 global goal(s)',
  recommended_action: 'run `loopx status` without `--registry`',
  goal_ids: ['gone'],
};

interface Item {
  goal_id: string;
  quota?: unknown;
  project_asset?: Record<string, unknown>;
  global_registry_shadow_findings?: GlobalRegistryShadowFinding[];
}

const alphaItem = (): Item => ({ goal_id: 'alpha', quota: { state: 'eligible' }, project_asset: { owner: 'codex' } });

describe('status: global registry findings in the attention queue', () => {
  it('shadows a source-registry finding on the goal item with a quota, and summarizes it on its project asset', () => {
    const item = alphaItem();
    const merged = mergeGlobalRegistryFindings({ items: [item], findings: [stale, stale], goalFilter: null });
    assert.deepEqual(merged.findingItems, []);
    const shadow = {
      kind: 'stale_source_registry',
      severity: 'action',
      source: 'global_registry',
      message: stale.message,
      recommended_action: stale.recommended_action,
    };
    assert.deepEqual(merged.items[0]?.global_registry_shadow_findings, [shadow, shadow]);
    assert.deepEqual(merged.items[0]?.project_asset?.['global_registry_shadow_findings'], {
      open: 2,
      kinds: ['stale_source_registry'],
    });
    // The cached item is copied, not changed.
    assert.deepEqual(item, alphaItem());
  });

  it('makes other action findings, and source findings of a goal without a quota item, items of their own', () => {
    const noQuota: Item = { goal_id: 'beta', project_asset: {} };
    const merged = mergeGlobalRegistryFindings({
      items: [alphaItem(), noQuota],
      findings: [stateMissing, info, sourceMissing, { ...stale, goal_id: 'beta' }, { kind: 'duplicate_goal_id' }],
      goalFilter: null,
    });
    assert.deepEqual(
      merged.findingItems.map((i) => [i.goal_id, i.status, i.severity]),
      [
        ['alpha', 'state_file_missing', 'action'],
        ['gone', 'source_registry_missing', 'action'],
        ['beta', 'stale_source_registry', 'action'],
      ],
      'info findings and findings without a severity of high or action are left out',
    );
    assert.deepEqual(merged.findingItems[0], {
      goal_id: 'alpha',
      status: 'state_file_missing',
      waiting_on: 'codex',
      severity: 'action',
      recommended_action: stateMissing.recommended_action,
      project_asset: {
        owner: 'codex',
        gate: 'none',
        support_mode: 'selective_assist',
        next_action: stateMissing.recommended_action,
        stop_condition: 'stop if the next action needs reward, gate approval, write control, or production access',
      },
      source: 'global_registry',
    });
    assert.equal(merged.items[1], noQuota, 'an item no finding shadows is kept as it is');
    // Defaults of a high finding without a goal, kind or action.
    const bare = mergeGlobalRegistryFindings({ items: [], findings: [{ severity: 'high' }], goalFilter: null });
    assert.deepEqual(
      [bare.findingItems[0]?.goal_id, bare.findingItems[0]?.status, bare.findingItems[0]?.recommended_action],
      ['global-registry', 'global_registry_finding', 'inspect global registry health'],
    );
  });

  it('keeps only the filtered goal findings under --goal-id', () => {
    const merged = mergeGlobalRegistryFindings({
      items: [alphaItem()],
      findings: [stale, sourceMissing, { ...sourceMissing, goal_id: 'other', goal_ids: ['alpha'] }],
      goalFilter: 'alpha',
    });
    assert.deepEqual(
      merged.findingItems.map((i) => i.goal_id),
      ['other'],
    );
    assert.equal(merged.items[0]?.global_registry_shadow_findings?.length, 1);
  });

  it('loopx status: a stale global entry shadows the goal item; a missing state file is an item before the goals', async () => {
    const dir = tempDir('loopx-global-attention-');
    const entry = {
      domain: 'demo',
      adapter: { kind: 'generic_project_goal_v0' },
      quota: { compute: 1, window_hours: 24 },
    };
    const registryPath = writeRegistry(dir, [registryGoal(dir, 'alpha', entry), registryGoal(dir, 'beta', entry)]);
    for (const goal of ['alpha', 'beta']) writeStateFile(dir, goal, stateFileText({ nextAction: 'Do the work' }));
    const runtime = path.join(dir, '.loopx', 'runtime');
    fs.mkdirSync(runtime, { recursive: true });
    const syncedBefore = new Date(fs.statSync(registryPath).mtimeMs - 60_000).toISOString();
    fs.writeFileSync(
      path.join(runtime, 'registry.global.json'),
      JSON.stringify({
        goals: [
          { id: 'alpha', source_registry: registryPath, state_file: 'x.md', repo: dir, synced_at: syncedBefore },
          { id: 'beta', source_registry: registryPath, state_file: path.join(dir, 'gone.md') },
        ],
      }),
    );
    fs.writeFileSync(path.join(dir, 'x.md'), '# state\n');
    const clock = fixedClock(new Date());
    const payload = await loadStatusAt({
      registryPath,
      homeDir: dir,
      clock,
      quotaSummary: statusQuotaSummaries({ registryPath, clock, homeDir: dir }),
    });
    const queue = payload.attention_queue;
    assert.deepEqual(payload.contract.errors, []);
    assert.deepEqual(
      queue.items.map((i) => [i.goal_id, i.status, i.source]),
      [
        ['beta', 'state_file_missing', 'global_registry'],
        ['alpha', queue.items[1]?.status, queue.items[1]?.source],
        ['beta', queue.items[2]?.status, queue.items[2]?.source],
      ],
    );
    assert.equal(queue.item_count, 3);
    assert.equal(queue.needs_codex, queue.items.filter((i) => i.waiting_on === 'codex').length);
    const [alpha, beta] = goalItems(payload);
    assert.deepEqual(
      [alpha?.goal_id, beta?.goal_id],
      ['alpha', 'beta'],
      "goalItems leaves the findings' own items out",
    );
    assert.deepEqual(
      alpha?.global_registry_shadow_findings?.map((f) => f.kind),
      ['stale_source_registry'],
    );
    assert.equal(beta?.global_registry_shadow_findings, undefined);
    // Without reports (a one-goal refresh), no global registry is read and nothing is merged.
    const quiet = await loadStatusAt({ registryPath, homeDir: dir, clock, reports: false });
    assert.deepEqual(
      quiet.attention_queue.items.map((i) => i.goal_id),
      ['alpha', 'beta'],
    );
  });
});
