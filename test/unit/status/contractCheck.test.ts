import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { indexDuplicateSummary } from '../../../src/core/status/contractCheck';
import { contractItem, goalItems } from '../../../src/core/status/statusPayload';
import { loadStatusAt } from '../../support/status';
import { runLoopx } from '../cli/run';

/**
 * LoopX's contract check inside `loopx status` (src/core/status/contractCheck.ts; its todo rules are
 * tested in test/unit/todo/statusContract.test.ts): the payload (ok:false, exit 1, the `loopx-contract` item)
 * and the warnings (projection gap, missing runtime root, duplicated run-index rows).
 */

function stateWith(userTodos: string, agentTodos = '', nextAction = 'Keep going.'): string {
  return `---\nstatus: active\nupdated_at: 2026-05-01T00:00:00+00:00\n---\n\n# State\n\n## User Todo\n\n${userTodos}\n## Agent Todo\n\n${agentTodos}\n## Next Action\n\n- ${nextAction}\n`;
}

const todo = (text: string, meta: string, mark = ' '): string => `- [${mark}] ${text}\n  <!-- loopx:todo ${meta} -->\n`;

describe('contract check: index duplicates', () => {
  const row = (extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      generated_at: '2026-05-02T10:00:00+00:00',
      goal_id: 'g',
      classification: 'x',
      json_path: 'a.json',
      markdown_path: 'a.md',
      ...extra,
    });
  it('classifies plain duplicates, artifact collisions and reward overlays', () => {
    const plain = indexDuplicateSummary(`${row()}\n${row()}\n`);
    assert.equal(plain.repairable_duplicate_rows, 1);
    assert.equal(plain.unexpected_duplicate_rows, 1);
    const collision = indexDuplicateSummary(`${row()}\n${row({ recommended_action: 'other' })}\n`);
    assert.equal(collision.artifact_identity_collision_groups, 1);
    const overlay = indexDuplicateSummary(`${row({ note: 'n' })}\n${row({ human_reward: { score: 1 } })}\n`);
    assert.deepEqual([overlay.reward_overlay_rows, overlay.unexpected_duplicate_rows], [1, 0]);
  });
});

// ---------------------------------------------------------------------------------------------
// The payload

const NOW = '2026-05-02T12:00:00Z';

function workspace(
  goals: { id: string; state: string; agents?: string[]; rows?: string[] }[],
  options: { runtime?: boolean } = {},
): { dir: string; registryPath: string } {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-contract-')));
  const registryPath = path.join(dir, '.loopx', 'registry.json');
  fs.mkdirSync(path.dirname(registryPath), { recursive: true });
  fs.writeFileSync(
    registryPath,
    JSON.stringify({
      schema_version: '0.1',
      common_runtime_root: './runtime',
      goals: goals.map((goal) => ({
        id: goal.id,
        status: 'active',
        domain: 'fixture',
        repo: dir,
        state_file: `.codex/goals/${goal.id}/ACTIVE_GOAL_STATE.md`,
        adapter: { kind: 'generic_project_goal_v0', status: 'connected' },
        ...(goal.agents ? { coordination: { registered_agents: goal.agents } } : {}),
      })),
    }),
  );
  if (options.runtime !== false) fs.mkdirSync(path.join(dir, 'runtime'), { recursive: true });
  for (const goal of goals) {
    const file = path.join(dir, '.codex', 'goals', goal.id, 'ACTIVE_GOAL_STATE.md');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, goal.state);
    if (goal.rows) {
      const runs = path.join(dir, 'runtime', 'goals', goal.id, 'runs');
      fs.mkdirSync(runs, { recursive: true });
      fs.writeFileSync(path.join(runs, 'index.jsonl'), `${goal.rows.join('\n')}\n`);
    }
  }
  return { dir, registryPath };
}

const clean = stateWith(
  todo('Review', 'todo_id=todo_u001 status=open task_class=user_action'),
  todo('Fix it', 'todo_id=todo_a001 task_class=advancement_task'),
);
const broken = stateWith(
  todo('Review', 'todo_id=todo_u001 status=open'),
  todo('Fix it', 'todo_id=todo_a001 task_class=advancement_task'),
);

describe('contract check in the status payload', () => {
  it('a clean workspace: ok, no contract item, no errors or warnings', async () => {
    const { dir, registryPath } = workspace([{ id: 'alpha', state: clean }]);
    const payload = await loadStatusAt({ registryPath, homeDir: dir });
    assert.equal(payload.ok, true);
    assert.deepEqual(payload.contract_summary, { errors: 0, warnings: 0, checks: 6 });
    assert.equal(contractItem(payload), undefined);
    assert.equal(payload.attention_queue.items.length, 1);
  });

  it('a contract error: ok false, the loopx-contract item first, goals unchanged; the CLI exits 1', async () => {
    const { dir, registryPath } = workspace([
      { id: 'alpha', state: clean },
      { id: 'beta', state: broken },
    ]);
    const payload = await loadStatusAt({ registryPath, homeDir: dir });
    assert.equal(payload.ok, false);
    assert.equal(payload.contract.ok, false);
    assert.equal(payload.contract_summary.errors, 1);
    assert.match(payload.contract.errors[0] ?? '', /^beta: open user todo todo_u001 requires task_class/);
    const item = payload.attention_queue.items[0];
    assert.deepEqual(item && [item.goal_id, item.status, item.waiting_on, item.severity, item.source], [
      'loopx-contract',
      'contract_check_failed',
      'codex',
      'high',
      'contract',
    ]);
    assert.equal(contractItem(payload)?.errors.length, 1);
    assert.equal(payload.goal_count, 2);
    assert.deepEqual(
      goalItems(payload).map((i) => i.goal_id),
      ['alpha', 'beta'],
    );
    assert.equal(payload.attention_queue.item_count, 3);
    assert.equal(payload.run_history.goals.length, 2);
    assert.deepEqual(
      goalItems(payload)[1]?.contract_diagnostics.map((d) => d.code),
      ['user_todo_task_class_missing'],
    );

    const cli = await runLoopx(['--registry', registryPath, '--format', 'json', 'status'], {
      cwd: dir,
      env: { HOME: dir },
      now: NOW,
    });
    assert.equal(cli.code, 1);
    assert.equal((cli.json() as { ok: boolean }).ok, false);
    const markdown = await runLoopx(['--registry', registryPath, 'status'], { cwd: dir, env: { HOME: dir }, now: NOW });
    assert.equal(markdown.code, 1);
    assert.match(markdown.stdout, /## Contract check failed[\s\S]*beta: open user todo todo_u001/);
  });

  it("--goal-id keeps the asked goal's errors and the registry's global ones only", async () => {
    const { dir, registryPath } = workspace([
      { id: 'alpha', state: clean },
      { id: 'beta', state: broken },
    ]);
    assert.equal((await loadStatusAt({ registryPath, homeDir: dir, goalId: 'alpha' })).ok, true);
    assert.equal((await loadStatusAt({ registryPath, homeDir: dir, goalId: 'beta' })).ok, false);
    // A registry problem of a goal (no domain) counts for that goal only.
    const registry = JSON.parse(fs.readFileSync(registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
    delete registry.goals[1]?.['domain'];
    fs.writeFileSync(registryPath, JSON.stringify(registry));
    assert.deepEqual((await loadStatusAt({ registryPath, homeDir: dir, goalId: 'alpha' })).contract.errors, []);
    const beta = await loadStatusAt({ registryPath, homeDir: dir, goalId: 'beta' });
    assert.equal(beta.contract.errors[0], 'beta: missing domain');
    assert.equal(beta.contract.errors.length, 2);
  });

  it('warnings: a projection gap, a runtime root not there yet, duplicated index rows', async () => {
    const gap = stateWith('', '', 'Run the backfill and validate it.');
    const row = JSON.stringify({
      generated_at: '2026-05-02T10:00:00+00:00',
      goal_id: 'alpha',
      classification: 'state_refreshed',
      json_path: 'a.json',
      markdown_path: 'a.md',
    });
    const { dir, registryPath } = workspace([{ id: 'alpha', state: gap }], { runtime: false });
    const first = await loadStatusAt({ registryPath, homeDir: dir, persistentCache: true });
    assert.equal(first.ok, true, 'warnings do not fail the status');
    assert.equal(first.contract_summary.warnings, 2);
    assert.match(first.contract.warnings[0] ?? '', /^alpha: active state has a state_projection_gap for agent/);
    assert.match(first.contract.warnings[1] ?? '', /^runtime root does not exist yet: /);
    assert.equal(fs.existsSync(path.join(dir, 'runtime')), false, 'status never creates the runtime root (its cache)');

    const rows = path.join(dir, 'runtime', 'goals', 'alpha', 'runs');
    fs.mkdirSync(rows, { recursive: true });
    fs.writeFileSync(path.join(rows, 'index.jsonl'), `${row}\n${row}\n`);
    const second = await loadStatusAt({ registryPath, homeDir: dir });
    assert.equal(second.contract_summary.warnings, 2);
    assert.match(
      second.contract.warnings[1] ?? '',
      /^alpha: duplicate index rows raw=2 unique=1 unexpected=1 auto_repairable=1/,
    );
  });

  it('the persistent cache gives the same contract, and sees a todo edit', async () => {
    const { dir, registryPath } = workspace([{ id: 'alpha', state: clean, agents: ['codex-main', 'codex-side'] }]);
    const run = (cache: string) =>
      runLoopx(['--registry', registryPath, '--format', 'json', 'status'], {
        cwd: dir,
        env: { HOME: dir, LOOPX_STATUS_CACHE: cache },
        now: NOW,
      });
    const cold = await run('on');
    const warm = await run('on');
    const off = await run('off');
    assert.equal(warm.stdout, off.stdout);
    assert.equal(cold.stdout, off.stdout);
    // Two agents: the user action must say who answers. Warm cache or not, the edit is seen.
    assert.equal(off.code, 1);
    const file = path.join(dir, '.codex', 'goals', 'alpha', 'ACTIVE_GOAL_STATE.md');
    fs.writeFileSync(
      file,
      fs.readFileSync(file, 'utf8').replace('task_class=user_action', 'task_class=user_action goal_bound=true'),
    );
    const fixed = await run('on');
    assert.equal(fixed.code, 0);
    assert.equal(fixed.stdout, (await run('off')).stdout);
  });
});

describe('status route of an older latest status run', () => {
  it('a status run past the listed runs keeps its artifact flags (not run_artifact_missing)', async () => {
    const { dir, registryPath } = workspace([{ id: 'alpha', state: clean }]);
    const runs = path.join(dir, 'runtime', 'goals', 'alpha', 'runs');
    fs.mkdirSync(runs, { recursive: true });
    const rows: string[] = [];
    const write = (stem: string, at: string, classification: string) => {
      const row = {
        generated_at: at,
        goal_id: 'alpha',
        classification,
        recommended_action: 'Keep going.',
        json_path: `runtime/goals/alpha/runs/${stem}.json`,
        markdown_path: `runtime/goals/alpha/runs/${stem}.md`,
      };
      fs.writeFileSync(path.join(runs, `${stem}.json`), JSON.stringify(row));
      fs.writeFileSync(path.join(runs, `${stem}.md`), '# run\n');
      rows.push(JSON.stringify(row));
    };
    write('2026-05-01T08-00-00-00-00', '2026-05-01T08:00:00+00:00', 'validated_progress');
    // Newer quota bookkeeping rows (status-neutral) push the status run past the first listed runs.
    for (let hour = 10; hour < 14; hour++)
      write(`2026-05-01T${hour}-00-00-00-00-quota`, `2026-05-01T${hour}:00:00+00:00`, 'quota_slot_spent');
    fs.writeFileSync(path.join(runs, 'index.jsonl'), `${rows.join('\n')}\n`);
    const payload = await loadStatusAt({ registryPath, homeDir: dir, limit: 2 });
    assert.equal(goalItems(payload)[0]?.status, 'validated_progress');
  });
});
