import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cli } from '../evidence/helpers';
import { makeWorkspace, type Workspace } from '../quota/helpers';

/**
 * `loopx handoff-mode show|set` (the original's command): the mode lives in the state file's front
 * matter, `set` previews unless `--execute`, and a change needs a quiescent goal. And the original's
 * rule for user todos in hard_lease: every open todo needs a lease to complete; a user gate's decision
 * mints one for the acting agent (never displacing a live lease), a user action does not.
 */

const STATE = [
  '---',
  'status: active',
  '---',
  '# Goal',
  '',
  '## User Todo',
  '- [ ] [P1] Approve the schema.',
  '  <!-- loopx:todo todo_id=todo_gate status=open task_class=user_gate -->',
  '- [ ] [P2] Rotate the token.',
  '  <!-- loopx:todo todo_id=todo_action status=open task_class=user_action -->',
  '',
  '## Agent Todo',
  '- [ ] [P1] Write the parser.',
  '  <!-- loopx:todo todo_id=todo_parser status=open task_class=advancement_task -->',
  '',
].join('\n');

const state = (ws: Workspace) => fs.readFileSync(ws.statePath, 'utf8');
const leaseFile = (ws: Workspace, todo: string) =>
  path.join(ws.runtimeRoot, 'goals', 'g', 'task-leases', `${todo}.json`);
const lease = (ws: Workspace, todo: string) =>
  JSON.parse(fs.readFileSync(leaseFile(ws, todo), 'utf8')) as Record<string, unknown>;

async function setMode(ws: Workspace, mode: string, execute = true) {
  return cli(ws, ['handoff-mode', 'set', '--goal-id', 'g', '--mode', mode, ...(execute ? ['--execute'] : [])]);
}

describe('loopx handoff-mode', () => {
  it('show: legacy by default; set previews, then --execute writes the front matter; again is unchanged', async () => {
    const ws = makeWorkspace({}, STATE);
    const shown = await cli(ws, ['handoff-mode', 'show', '--goal-id', 'g']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.deepEqual([shown.json()['handoff_mode'], shown.json()['source']], ['legacy', 'default']);

    const before = state(ws);
    const preview = await setMode(ws, 'hard_lease', false);
    assert.equal(preview.code, 0, preview.stderr);
    assert.deepEqual(
      ['dry_run', 'changed', 'written', 'previous_mode', 'handoff_mode'].map((k) => preview.json()[k]),
      [true, true, false, 'legacy', 'hard_lease'],
    );
    assert.equal(state(ws), before, 'a preview writes nothing');

    const applied = await setMode(ws, 'hard_lease');
    assert.equal(applied.code, 0, applied.stderr);
    assert.deepEqual([applied.json()['changed'], applied.json()['written']], [true, true]);
    assert.match(state(ws), /^---\nstatus: active\nhandoff_mode: hard_lease\n---\n/);
    const again = await setMode(ws, 'hard_lease');
    assert.deepEqual([again.json()['changed'], again.json()['written']], [false, false]);
    const after = await cli(ws, ['handoff-mode', 'show', '--goal-id', 'g']);
    assert.deepEqual([after.json()['handoff_mode'], after.json()['source']], ['hard_lease', 'frontmatter']);
  });

  it('refuses a change while a todo is claimed or leased (handoff_mode_not_quiescent), writing nothing', async () => {
    const claimed = makeWorkspace(
      {},
      STATE.replace('task_class=advancement_task', 'task_class=advancement_task claimed_by=agent-a'),
    );
    const before = state(claimed);
    const refused = await setMode(claimed, 'hard_lease');
    assert.equal(refused.code, 1);
    const error = refused.error();
    assert.equal(error.code, 'handoff_mode_not_quiescent');
    assert.deepEqual(error.details['claimed_todos'], [
      { todo_id: 'todo_parser', claimed_by: 'agent-a', status: 'open' },
    ]);
    assert.equal(state(claimed), before);
    // The preview says so too: it is the same check.
    assert.equal((await setMode(claimed, 'hard_lease', false)).error().code, 'handoff_mode_not_quiescent');

    const leased = makeWorkspace({}, STATE);
    const acquired = await cli(leased, [
      ...['task-lease', 'acquire', '--goal-id', 'g', '--todo-id', 'todo_parser'],
      ...['--owner', 'agent-b', '--idempotency-key', 'k1'],
    ]);
    assert.equal(acquired.code, 0, acquired.stdout);
    const leasedBefore = state(leased);
    const refusedLease = await setMode(leased, 'soft_claim');
    assert.equal(refusedLease.error().code, 'handoff_mode_not_quiescent');
    assert.deepEqual(
      (refusedLease.error().details['active_leases'] as Record<string, unknown>[]).map((l) => [
        l['todo_id'],
        l['owner'],
      ]),
      [['todo_parser', 'agent-b']],
    );
    assert.equal(state(leased), leasedBefore);
  });

  it('an unknown mode is a usage error (exit 2)', async () => {
    const ws = makeWorkspace({}, STATE);
    const run = await setMode(ws, 'strict');
    assert.equal(run.code, 2);
  });
});

describe('user todos in hard_lease (the original rule)', () => {
  async function hardLease(): Promise<Workspace> {
    const ws = makeWorkspace({}, STATE);
    assert.equal((await setMode(ws, 'hard_lease')).code, 0);
    return ws;
  }
  const decide = (ws: Workspace, extra: string[]) =>
    cli(ws, [
      ...['todo', 'complete', '--goal-id', 'g', '--todo-id', 'todo_gate'],
      ...['--decision-outcome', 'approve', '--evidence', 'approved in review', ...extra],
    ]);

  it('a gate decision mints the lease for the acting agent, completes, and releases it', async () => {
    const ws = await hardLease();
    const run = await decide(ws, ['--agent-id', 'agent-a']);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const fence = run.json()['task_lease_fence'] as Record<string, unknown>;
    assert.deepEqual(
      ['required', 'auto_acquired', 'owner', 'released'].map((k) => fence[k]),
      [true, true, 'agent-a', true],
    );
    assert.deepEqual(
      ['owner', 'idempotency_key', 'status'].map((k) => lease(ws, 'todo_gate')[k]),
      ['agent-a', 'auto-todo_gate', 'released'],
    );
    assert.match(state(ws), /todo_id=todo_gate status=done/);
  });

  it('without --agent-id the gate decision is refused and nothing is written', async () => {
    const ws = await hardLease();
    const before = state(ws);
    const run = await decide(ws, []);
    assert.equal(run.error().code, 'handoff_mode_requires_lease');
    assert.equal(run.error().details['reason'], 'missing_actor');
    assert.equal(state(ws), before);
    assert.equal(fs.existsSync(leaseFile(ws, 'todo_gate')), false);
  });

  it('never displaces a live lease another agent holds on the gate', async () => {
    const ws = await hardLease();
    const held = await cli(ws, [
      ...['task-lease', 'acquire', '--goal-id', 'g', '--todo-id', 'todo_gate'],
      ...['--owner', 'agent-b', '--idempotency-key', 'kb'],
    ]);
    assert.equal(held.code, 0, held.stdout);
    const before = state(ws);
    const run = await decide(ws, ['--agent-id', 'agent-a']);
    assert.equal(run.code, 1);
    assert.equal(run.error().code, 'lease_fence_required');
    assert.equal(state(ws), before);
    assert.deepEqual([lease(ws, 'todo_gate')['owner'], lease(ws, 'todo_gate')['status']], ['agent-b', 'active']);
  });

  it('a user action (not a gate) needs a lease like an agent todo', async () => {
    const ws = await hardLease();
    const before = state(ws);
    const run = await cli(ws, [
      ...['todo', 'complete', '--goal-id', 'g', '--todo-id', 'todo_action', '--evidence', 'rotated'],
      ...['--agent-id', 'agent-a'],
    ]);
    assert.equal(run.error().code, 'handoff_mode_requires_lease');
    assert.equal(state(ws), before);
  });
});
