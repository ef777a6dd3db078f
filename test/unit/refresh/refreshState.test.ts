import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import type { LoopxErrorCode } from '../../../src/core/errorCodes';
import { isLoopxError } from '../../../src/core/errors';
import { parseIsoInstant } from '../../../src/core/isoTime';
import { loadGoalStatus } from '../../../src/core/status/goalStatus';
import { statusTargets } from '../../../src/core/status/statusPayload';
import {
  commitRefreshState,
  planRefreshState,
  readRefreshBase,
  refreshState,
} from '../../../src/core/refresh/refreshState';
import { RefreshRecordSchema, RefreshStatePayloadSchema } from '../../../src/core/refresh/schemas';
import { stateDigest16 } from '../../../src/core/state/digest';
import { formatLocalIsoSeconds } from '../../../src/core/runtime/time';
import { runLoopx } from '../cli/run';
import { ACTIVE, RUN } from '../status/projection/fixtures';
import { BASIC_STATE, refreshProject, type RefreshProject } from './helpers';

const NOW = '2026-07-30T23:59:00Z';
const clock = fixedClock(NOW);
const GENERATED_AT = formatLocalIsoSeconds(new Date(NOW));

function rejectsWith(code: LoopxErrorCode, message?: RegExp): (error: unknown) => boolean {
  return (error: unknown) => isLoopxError(error, code) && (message === undefined || message.test(error.message));
}

async function statusOf(p: RefreshProject, agentId: string | null = null) {
  const registry = JSON.parse(fs.readFileSync(p.registryPath, 'utf8')) as Record<string, unknown>;
  const [target] = statusTargets(registry, p.registryPath, { homeDir: p.dir });
  assert.ok(target);
  return loadGoalStatus(target, { homeDir: p.dir, agentId });
}

describe('refresh-state', () => {
  it('case R3: --next-action rewrites the section in place, bumps updated_at and records the run', async () => {
    const p = refreshProject(BASIC_STATE);
    const payload = await refreshState(await p.goal(), p.request({ nextAction: '  new   act ' }), { clock });
    const text = p.readState();
    assert.match(text, /## Next Action\n\n- new act\n\n## Recent User Feedback/);
    assert.equal(text.match(/Next Action/g)?.length, 1);
    assert.match(text, new RegExp(`^---\nstatus: active\nupdated_at: ${GENERATED_AT.replace(/\+/g, '\\+')}\n---\n`));
    assert.deepEqual(payload.active_state_next_action_update, {
      schema_version: 'active_state_next_action_update_v0',
      source: 'refresh_state',
      next_action: 'new act',
      updated: true,
      would_update: true,
      dry_run: false,
      updated_at: GENERATED_AT,
      previous_next_action: 'old',
    });
    assert.equal(payload.recommended_action, 'new act');
    assert.equal(payload.recommended_action_source, 'active_state_next_action');
    assert.equal(payload.state.sha256_16, stateDigest16(text), 'the snapshot digest is of the text as written');
    assert.equal(p.indexRows().length, 1);
  });

  it('case R3: the same route again changes nothing in the file but still records a run', async () => {
    const p = refreshProject(BASIC_STATE);
    await refreshState(await p.goal(), p.request({ nextAction: 'new act' }), { clock });
    const before = p.readState();
    const again = await refreshState(await p.goal(), p.request({ nextAction: 'new act' }), {
      clock: fixedClock('2026-07-31T08:00:00Z'),
    });
    assert.equal(p.readState(), before);
    assert.equal(again.active_state_next_action_update?.would_update, false);
    assert.equal(again.active_state_next_action_update?.updated, false);
    assert.equal(again.active_state_next_action_update?.updated_at, null);
    assert.equal(p.indexRows().length, 2);
  });

  it('case R3: a state file edited between reading and writing is never overwritten, and no run is recorded', async () => {
    const p = refreshProject(BASIC_STATE);
    const goal = await p.goal();
    const request = p.request({ nextAction: 'new act' });
    const plan = await planRefreshState(goal, request, await readRefreshBase(goal, request), clock);
    const edited = `${BASIC_STATE}- a person added this meanwhile\n`;
    fs.writeFileSync(p.statePath, edited);
    await assert.rejects(
      commitRefreshState(plan, { clock }),
      rejectsWith(
        'state_changed_concurrently',
        /changed while refresh-state was writing the Next Action.*nothing was written and no run was recorded\. Retry/,
      ),
    );
    assert.equal(p.readState(), edited);
    assert.equal(fs.existsSync(p.indexPath), false);
  });

  it('a snapshot-only refresh also refuses to record a snapshot of text the file no longer holds', async () => {
    const p = refreshProject(BASIC_STATE);
    const goal = await p.goal();
    const plan = await planRefreshState(goal, p.request(), await readRefreshBase(goal, p.request()), clock);
    fs.writeFileSync(p.statePath, BASIC_STATE.replace('- old', '- edited'));
    await assert.rejects(
      commitRefreshState(plan, { clock }),
      rejectsWith('state_changed_concurrently', /recording its snapshot/),
    );
    assert.equal(fs.existsSync(p.indexPath), false);
  });

  it('case R4: a taken artifact name gets -2; the old artifacts stay untouched and the index gains one row', async () => {
    const p = refreshProject(BASIC_STATE);
    const runsDir = path.dirname(p.indexPath);
    const stem = GENERATED_AT.replace(/[^0-9A-Za-z-]+/g, '-').replace(/^-+|-+$/g, '');
    fs.mkdirSync(runsDir, { recursive: true });
    fs.writeFileSync(path.join(runsDir, `${stem}.json`), '{"old":true}\n');
    fs.writeFileSync(path.join(runsDir, `${stem}.md`), '# old\n');
    fs.writeFileSync(
      p.indexPath,
      `${JSON.stringify({ generated_at: GENERATED_AT, goal_id: 'g1', classification: 'state_refreshed', json_path: `${stem}.json` })}\n`,
    );
    const payload = await refreshState(await p.goal(), p.request(), { clock });
    assert.equal(path.basename(payload.json_path), `${stem}-2.json`);
    assert.equal(path.basename(payload.markdown_path), `${stem}-2.md`);
    assert.equal(fs.readFileSync(path.join(runsDir, `${stem}.json`), 'utf8'), '{"old":true}\n');
    assert.equal(fs.readFileSync(path.join(runsDir, `${stem}.md`), 'utf8'), '# old\n');
    const rows = p.indexRows();
    assert.equal(rows.length, 2);
    assert.equal(path.basename(String(rows[1]?.['json_path'])), `${stem}-2.json`);
  });

  it('case R5: the multi-agent agent_id rule and the goal / agent-lane scope rules', async () => {
    const p = refreshProject(BASIC_STATE, { agents: ['codex-main', 'codex-side-bypass'] });
    await assert.rejects(
      refreshState(await p.goal(), p.request(), { clock }),
      rejectsWith('refresh_multi_agent_requires_agent_id', /^multi-agent refresh-state requires --agent-id/),
    );
    await assert.rejects(
      refreshState(await p.goal(), p.request({ agentId: 'codex-side-bypass', nextAction: 'new act' }), { clock }),
      rejectsWith(
        'refresh_agent_lane_cannot_write_next_action',
        /^agent-lane refresh-state cannot update the durable active-state Next Action/,
      ),
    );
    await assert.rejects(
      refreshState(await p.goal(), p.request({ agentId: 'someone-else' }), { clock }),
      rejectsWith('refresh_agent_not_registered'),
    );
    assert.equal(p.readState(), BASIC_STATE, 'refused refreshes write nothing');
    assert.equal(fs.existsSync(p.indexPath), false);

    const goalScope = await refreshState(
      await p.goal(),
      p.request({ agentId: 'codex-side-bypass', progressScope: 'goal', nextAction: 'new act' }),
      { clock },
    );
    assert.equal(goalScope.progress_scope, 'goal');
    assert.equal(goalScope.agent_lane, undefined);
    assert.equal(goalScope.active_state_next_action_update?.updated, true);

    const lane = await refreshState(await p.goal(), p.request({ agentId: 'codex-side-bypass' }), { clock });
    assert.equal(lane.progress_scope, 'agent_lane');
    assert.equal(lane.agent_lane, 'codex-side-bypass');
    assert.equal(lane.index_row['agent_lane'], 'codex-side-bypass');
    assert.equal(lane.index_row.progress_scope, 'agent_lane');
  });

  it('case R5: an agent_lane scope needs an agent even on a single-agent goal', async () => {
    const p = refreshProject(BASIC_STATE);
    await assert.rejects(
      refreshState(await p.goal(), p.request({ progressScope: 'agent_lane' }), { clock }),
      rejectsWith('refresh_agent_id_required'),
    );
  });

  it('case R6: an explicit RUN leaves the file alone and status then shows the W1 warning; --next-action writes the route', async () => {
    const p = refreshProject(
      `---\nstatus: active\nupdated_at: 2026-07-01T00:00:00+00:00\n---\n## Next Action\n\n- ${ACTIVE}\n`,
    );
    const before = p.readState();
    const explicit = await refreshState(await p.goal(), p.request({ recommendedAction: RUN }), { clock });
    assert.equal(p.readState(), before);
    assert.equal(explicit.recommended_action, RUN);
    assert.equal(explicit.recommended_action_source, 'explicit_arg');
    assert.equal(explicit.active_state_next_action_update, undefined);

    const status = await statusOf(p);
    assert.equal(status.latest_run_recommended_action, RUN);
    assert.equal(status.latest_run_recommended_action_source, 'latest_status_run');
    const warning = status.next_action_projection_warning;
    assert.ok(warning);
    assert.equal(warning.severity, 'warning');
    assert.equal(warning.requires_state_writeback, true);
    assert.equal(warning.active_state_next_action, ACTIVE);
    assert.equal(warning.latest_run_recommended_action, RUN);
    assert.equal(status.stale_latest_run_warning, undefined, 'the run saw the current file');

    const promoted = await refreshState(
      await p.goal(),
      p.request({ nextAction: 'Promote the vliw repair slice as the durable next action.' }),
      { clock },
    );
    assert.equal(promoted.active_state_next_action_update?.updated, true);
    assert.match(p.readState(), /\n- Promote the vliw repair slice as the durable next action\.\n/);
    const after = await statusOf(p);
    assert.equal(after.active_state_next_action, 'Promote the vliw repair slice as the durable next action.');
    assert.equal(after.next_action_projection_warning, undefined);
  });

  it('case R7: the index row carries state {sha256_16, frontmatter {updated_at}}; the payload state equals the record state', async () => {
    const p = refreshProject(
      `---\nstatus: active\nupdated_at: 2026-07-30T23:59:00+00:00\n---\n## Next Action\n\n- ${ACTIVE}\n`,
    );
    const payload = await refreshState(await p.goal(), p.request({ classification: 'repair_completed' }), { clock });
    assert.equal(payload.appended, true);
    const [row] = p.indexRows();
    assert.deepEqual(row?.['state'], {
      sha256_16: stateDigest16(p.readState()),
      frontmatter: { updated_at: '2026-07-30T23:59:00+00:00' },
    });
    assert.equal(row?.['recommended_action_source'], 'active_state_next_action');
    const record = RefreshRecordSchema.parse(JSON.parse(fs.readFileSync(payload.json_path, 'utf8')));
    assert.deepEqual(payload.state, record.state);
    assert.deepEqual(record.state.frontmatter, { status: 'active', updated_at: '2026-07-30T23:59:00+00:00' });
    assert.equal(record.state.path, p.statePath);
    assert.equal(record.registry_goal.adapter?.kind, 'fixture');
    assert.equal(record.health_check, 'state_file 1/1; registry_goal 1/1; authority_sources 0');
  });

  it('records the original run-record shape: snapshot lists, and a .md artifact with its four sections', async () => {
    const p = refreshProject(BASIC_STATE);
    const payload = await refreshState(await p.goal(), p.request({ nextAction: 'Promote the new durable route.' }), {
      clock,
    });
    assert.deepEqual(payload.state.next_action, ['Promote the new durable route.']);
    assert.deepEqual(payload.state.recent_feedback, ['- fb1']);
    assert.deepEqual(payload.state.progress, ['- Fixture initialized.']);
    const markdown = fs.readFileSync(payload.markdown_path, 'utf8');
    assert.match(markdown, /^# LoopX State Refresh\n\n- goal: g1\n/);
    assert.match(
      markdown,
      /## Recommended Action\n\nPromote the new durable route\.\n\n## Next Action\n\n- Promote the new durable route\.\n\n## Recent Feedback\n\n- fb1\n\n## Progress\n\n- Fixture initialized\.\n/,
    );
  });

  it('after a route write-back the status sees no stale run; a later human edit makes it stale with all three reasons', async () => {
    const p = refreshProject(BASIC_STATE);
    await refreshState(await p.goal(), p.request({ nextAction: 'new act' }), { clock });
    assert.equal((await statusOf(p)).stale_latest_run_warning, undefined);
    fs.writeFileSync(
      p.statePath,
      p
        .readState()
        .replace(/updated_at: .*/, 'updated_at: 2026-08-01T00:00:00+00:00')
        .replace('- new act', '- edited by hand'),
    );
    const stale = (await statusOf(p)).stale_latest_run_warning;
    assert.deepEqual(stale?.reason_codes, [
      'active_state_updated_after_latest_run',
      'active_state_updated_after_latest_run_snapshot',
      'active_state_digest_differs_from_latest_run_snapshot',
    ]);
  });

  it("an agent-lane refresh never becomes the latest status run, but is the preferred agent's recommendation", async () => {
    const p = refreshProject(`---\nstatus: active\n---\n## Next Action\n\n- ${ACTIVE}\n`, {
      agents: ['codex-main', 'codex-side'],
    });
    await refreshState(await p.goal(), p.request({ agentId: 'codex-main', progressScope: 'goal' }), { clock });
    await refreshState(
      await p.goal(),
      p.request({ agentId: 'codex-side', recommendedAction: 'Polish the side lane card.' }),
      {
        clock: fixedClock('2026-07-31T00:00:00Z'),
      },
    );
    const goalView = await statusOf(p);
    assert.equal(goalView.status, 'state_refreshed');
    assert.equal(goalView.latest_run_recommended_action, ACTIVE);
    assert.equal(goalView.latest_run_recommended_action_source, 'latest_status_run');
    const sideView = await statusOf(p, 'codex-side');
    assert.equal(sideView.latest_run_recommended_action, 'Polish the side lane card.');
    assert.equal(sideView.latest_run_recommended_action_source, 'agent_lane_recommendation');
  });

  it('refuses a credential-bearing Next Action or recommended action and writes nothing', async () => {
    const p = refreshProject(BASIC_STATE);
    await assert.rejects(
      refreshState(await p.goal(), p.request({ nextAction: 'call the API with token=abcdefghijkl' }), { clock }),
      rejectsWith('next_action_credential'),
    );
    await assert.rejects(
      refreshState(await p.goal(), p.request({ nextAction: 'use Bearer abc.def.ghi to deploy' }), { clock }),
      rejectsWith('next_action_credential'),
    );
    await assert.rejects(
      refreshState(await p.goal(), p.request({ recommendedAction: 'export AKIAABCDEFGHIJKLMNOP' }), { clock }),
      rejectsWith('recommended_action_credential'),
    );
    await assert.rejects(
      refreshState(await p.goal(), p.request({ nextAction: '   ' }), { clock }),
      rejectsWith('next_action_empty'),
    );
    assert.equal(p.readState(), BASIC_STATE);
    assert.equal(fs.existsSync(path.dirname(p.indexPath)), false);
  });

  it('case R1 through refresh: a credential-bearing Next Action item is skipped for the next one', async () => {
    const p = refreshProject('## Next Action\n\n- token=abcdefghijkl secret\n- second safe\n');
    const payload = await refreshState(await p.goal(), p.request(), { clock });
    assert.equal(payload.recommended_action, 'second safe');
    assert.equal(payload.recommended_action_source, 'active_state_next_action');
  });

  it('case N2 fix: a ### next action heading is read by the derivation and rewritten in place', async () => {
    const p = refreshProject('### next action\n- deep heading ok\n');
    const read = await refreshState(await p.goal(), p.request(), { clock });
    assert.equal(read.recommended_action, 'deep heading ok', 'the original derived the default action here');
    assert.equal(read.recommended_action_source, 'active_state_next_action');
    await refreshState(await p.goal(), p.request({ nextAction: 'new route' }), { clock });
    const text = p.readState();
    assert.equal(text.match(/next action/gi)?.length, 1, 'no second Next Action section');
    assert.match(text, /### next action\n\n- new route/);
  });

  it('records the Next Action / todo gap found in the Markdown', async () => {
    const p = refreshProject(
      '## Agent Todo\n- [x] Finish the previous slice.\n## Next Action\n- Run the trace reducer backfill and validate the output.\n',
    );
    const payload = await refreshState(await p.goal(), p.request(), { clock });
    assert.deepEqual(payload.state_projection_gap?.target_roles, ['agent']);
    assert.equal(payload.recommended_action, 'Run the trace reducer backfill and validate the output.');
  });

  it('--dry-run writes nothing and shows what would change', async () => {
    const p = refreshProject(BASIC_STATE);
    const payload = await refreshState(await p.goal(), p.request({ nextAction: 'new act' }), { clock, dryRun: true });
    assert.equal(p.readState(), BASIC_STATE);
    assert.equal(fs.existsSync(path.dirname(p.indexPath)), false);
    assert.equal(payload.dry_run, true);
    assert.equal(payload.appended, false);
    assert.equal(payload.active_state_next_action_update?.would_update, true);
    assert.equal(payload.active_state_next_action_update?.updated, false);
    assert.equal(payload.active_state_next_action_update?.dry_run, true);
    assert.equal(payload.active_state_next_action_update?.previous_next_action, 'old');
    assert.deepEqual(payload.state.next_action, ['new act']);
    assert.equal(parseIsoInstant(payload.state.frontmatter['updated_at']), Date.parse(NOW));
    assert.equal(path.dirname(payload.json_path), path.dirname(p.indexPath));
  });

  it('records delivery fields on the record and the index row, and refuses malformed ones', async () => {
    const p = refreshProject(BASIC_STATE, { agents: ['codex-main'] });
    const payload = await refreshState(
      await p.goal(),
      p.request({
        classification: 'validated_progress',
        agentId: 'codex-main',
        progressScope: 'goal',
        todoId: 'todo_primary',
        turnInstanceId: 'batch-42:turn-1',
        deliveryBatchScale: 'single_surface',
        deliveryOutcome: 'outcome_progress',
      }),
      { clock },
    );
    assert.deepEqual(
      ['agent_id', 'todo_id', 'turn_instance_id', 'delivery_batch_scale', 'delivery_outcome', 'progress_scope'].map(
        (k) => payload.index_row[k],
      ),
      ['codex-main', 'todo_primary', 'batch-42:turn-1', 'single_surface', 'outcome_progress', 'goal'],
    );
    await assert.rejects(
      refreshState(await p.goal(), p.request({ turnInstanceId: 'private/path' }), { clock }),
      rejectsWith('refresh_invalid_field'),
    );
    await assert.rejects(
      refreshState(await p.goal(), p.request({ classification: 'has space' }), { clock }),
      rejectsWith('refresh_invalid_classification'),
    );
  });
});

describe('loopx refresh-state (CLI)', () => {
  const run = (p: RefreshProject, ...argv: string[]) => runLoopx(argv, { cwd: p.dir, env: { HOME: p.dir }, now: NOW });

  it('without --classification records state_refreshed, the original default (issue 30)', async () => {
    const p = refreshProject(BASIC_STATE);
    const result = await run(p, 'refresh-state', '--goal-id', 'g1', '--format', 'json');
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(RefreshStatePayloadSchema.parse(result.json()).classification, 'state_refreshed');
    const rows = fs
      .readFileSync(path.join(p.runtimeRoot, 'goals', 'g1', 'runs', 'index.jsonl'), 'utf8')
      .trim()
      .split('\n');
    assert.equal((JSON.parse(rows.at(-1) ?? '{}') as { classification?: string }).classification, 'state_refreshed');
  });

  it('prints the original payload in JSON and a summary in Markdown', async () => {
    const p = refreshProject(BASIC_STATE);
    const json = await run(
      p,
      'refresh-state',
      '--goal-id',
      'g1',
      '--classification',
      'state_refreshed',
      '--next-action',
      'new act',
      '--format',
      'json',
    );
    assert.equal(json.code, 0, json.stdout + json.stderr);
    const payload = RefreshStatePayloadSchema.parse(json.json());
    assert.equal(payload.ok, true);
    assert.equal(payload.registry, p.registryPath);
    assert.equal(payload.project, p.dir);
    assert.equal(payload.runtime_root, p.runtimeRoot);
    const markdown = await run(
      p,
      'refresh-state',
      '--goal-id',
      'g1',
      '--classification',
      'state_refreshed',
      '--dry-run',
    );
    assert.equal(markdown.code, 0, markdown.stderr);
    assert.match(markdown.stdout, /Dry run: nothing was written/);
    assert.match(markdown.stdout, /Recommended action: new act \(from active_state_next_action\)/);
  });

  it("exits 1 for a refused refresh and a goal it cannot find, with the original's texts first", async () => {
    const p = refreshProject(BASIC_STATE, { agents: ['codex-main', 'codex-side'] });
    const noAgent = await run(p, 'refresh-state', '--goal-id', 'g1', '--classification', 'state_refreshed');
    assert.equal(noAgent.code, 1);
    assert.match(noAgent.stderr, /multi-agent refresh-state requires --agent-id/);
    const laneRoute = await run(
      p,
      'refresh-state',
      '--goal-id',
      'g1',
      '--classification',
      'x',
      '--agent-id',
      'codex-main',
      '--next-action',
      'y',
    );
    assert.equal(laneRoute.code, 1);
    assert.match(
      laneRoute.stderr,
      /agent-lane refresh-state cannot update the durable active-state Next Action; rerun without --next-action or use --progress-scope goal from a registered peer/,
    );
    const stranger = await run(p, 'refresh-state', '--goal-id', 'g1', '--classification', 'x', '--agent-id', 'zz');
    assert.equal(stranger.code, 1);
    assert.match(stranger.stderr, /agent_id 'zz' is not registered for goal 'g1'/);
    assert.equal((await run(p, 'refresh-state', '--goal-id', '../x', '--classification', 'x')).code, 2);
    const missing = await run(p, 'refresh-state', '--goal-id', 'nope', '--classification', 'state_refreshed');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /state file is required when the goal is not resolvable from registry: goal 'nope'/);
    assert.equal(p.readState(), BASIC_STATE);
  });
});
