import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TodoEditResultSchema as TodoEditJsonSchema } from '../../../src/core/ops/todoFields';
import { TodoListResultSchema as TodoListJsonSchema } from '../../../src/core/ops/resultSchemas';
import { runLoopx } from '../cli/run';

const STATE = [
  '---',
  'status: active',
  '---',
  '## User Todo',
  '- [ ] Approve publishing.',
  '  <!-- loopx:todo todo_id=todo_gate_publish task_class=user_gate blocks_agent=codex-main unblocks_todo_id=todo_publish -->',
  '## Agent Todo',
  '- [ ] [P1] Publish the package.',
  '  <!-- loopx:todo todo_id=todo_publish status=open task_class=advancement_task -->',
  '- [ ] [P2] Untagged todo.',
  '## Next Action',
  '- Publish the package.',
  '',
].join('\n');

interface Project {
  dir: string;
  stateFile: string;
  run: (...argv: string[]) => ReturnType<typeof runLoopx>;
}

function project(registeredAgents: string[] | null = ['codex-main', 'codex-side']): Project {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-todo-cli-'));
  const stateFile = path.join(dir, '.codex', 'goals', 'g1', 'ACTIVE_GOAL_STATE.md');
  fs.mkdirSync(path.dirname(stateFile), { recursive: true });
  fs.writeFileSync(stateFile, STATE);
  fs.mkdirSync(path.join(dir, '.loopx'));
  const goal: Record<string, unknown> = { id: 'g1', repo: dir, state_file: '.codex/goals/g1/ACTIVE_GOAL_STATE.md' };
  if (registeredAgents !== null) goal['coordination'] = { registered_agents: registeredAgents };
  fs.writeFileSync(path.join(dir, '.loopx', 'registry.json'), JSON.stringify({ goals: [goal] }));
  return {
    dir,
    stateFile,
    run: (...argv) => runLoopx(argv, { cwd: dir, env: { HOME: dir }, now: '2026-07-01T12:00:00Z' }),
  };
}

describe('loopx todo', () => {
  it('todo list prints the todos with the original field names, gates and what they block', async () => {
    const p = project();
    const run = await p.run('todo', 'list', '--goal-id', 'g1', '--format', 'json');
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const json = TodoListJsonSchema.parse(run.json());
    assert.deepEqual(
      json.todos.map((t) => [t.todo_id, t.role, t.priority, t.status, t.blocked_by.map((b) => b.relation)]),
      [
        ['todo_gate_publish', 'user', null, 'open', []],
        ['todo_publish', 'agent', 'P1', 'open', ['gate_targets_todo']],
        [json.todos[2]?.todo_id, 'agent', 'P2', 'open', []],
      ],
    );
    assert.deepEqual(
      json.open_gates.map((g) => [g.todo_id, g.blocked_todo_ids]),
      [['todo_gate_publish', ['todo_publish']]],
    );
    assert.equal(json.diagnostics.warning_count, 1, 'the untagged todo has an implicit id');
    const markdown = await p.run('todo', 'list', '--goal-id', 'g1');
    assert.match(
      markdown.stdout,
      /\| `todo_publish` \| agent \| P1 \| open \| {2}\| Publish the package\. \| todo_gate_publish \(gate_targets_todo, open\) \|/,
    );
    assert.match(markdown.stdout, /line 10: implicit_todo_ids/);
  });

  it('todo add, claim, complete with a successor: each a minimal write', async () => {
    const p = project();
    const add = await p.run(
      'todo',
      'add',
      '--goal-id',
      'g1',
      '--text',
      'Write the release notes.',
      '--priority',
      'p2',
      '--format',
      'json',
    );
    assert.equal(add.code, 0, add.stdout + add.stderr);
    const added = TodoEditJsonSchema.parse(add.json());
    assert.equal(added.written, true);
    // LoopX's contract: `added` is a boolean, with the todo's id, role, section and status beside it.
    assert.deepEqual(
      [added.added, added.already_exists, added.role, added.section, added.status, added.todo, 'changed' in added],
      [true, false, 'agent', 'Agent Todo', 'open', '[P2] Write the release notes.', false],
    );
    assert.equal(added.todo_item.text, '[P2] Write the release notes.');
    const written = fs.readFileSync(p.stateFile, 'utf8');
    assert.match(
      written,
      /- \[ \] \[P2\] Write the release notes\.\n {2}<!-- loopx:todo todo_id=todo_[0-9a-f]{12} status=open updated_at=2026-07-01T12:00:00Z -->\n\n## Next Action/,
      'no task_class is written unless given, and a blank line is left before the next heading, as in the original',
    );
    assert.match(written, /^---\nstatus: active\nupdated_at: 2026-07-01T12:00:00Z\n---\n/, 'front matter updated_at');

    const again = await p.run(
      'todo',
      'add',
      '--goal-id',
      'g1',
      '--text',
      '[P2]   Write the release notes.',
      '--format',
      'json',
    );
    const duplicate = TodoEditJsonSchema.parse(again.json());
    assert.deepEqual(
      [duplicate.added, duplicate.already_exists, duplicate.todo_id, duplicate.written],
      [false, true, added.todo_id, false],
    );
    assert.equal(fs.readFileSync(p.stateFile, 'utf8'), written, 'a duplicate that has updated_at writes nothing');

    const claim = await p.run(
      'todo',
      'claim',
      '--goal-id',
      'g1',
      '--todo-id',
      added.todo_id,
      '--agent-id',
      'Codex Side',
      '--format',
      'json',
    );
    assert.equal(claim.code, 0, claim.stdout);
    assert.equal(TodoEditJsonSchema.parse(claim.json()).claimed_by, 'codex-side', '--agent-id alone still claims');

    const complete = await p.run(
      'todo',
      'complete',
      '--goal-id',
      'g1',
      '--todo-id',
      added.todo_id,
      '--evidence',
      'notes merged',
      '--next-agent-todo',
      'Announce the release.',
      '--next-claimed-by',
      'codex-side',
      '--agent-id',
      'codex-side',
      '--format',
      'json',
    );
    assert.equal(complete.code, 0, complete.stdout);
    const done = TodoEditJsonSchema.parse(complete.json());
    assert.deepEqual([done.completed, done.changed, done.status], [true, true, 'done']);
    assert.equal(done.added_todos[0]?.claimed_by, 'codex-side');
    assert.equal(done.todo_item.metadata['successor_todo_ids'], done.added_todos[0]?.todo_id);
  });

  it('todo claim refuses an agent off the roster with the spec text (exit 1)', async () => {
    const p = project(['a1', 'a2']);
    const run = await p.run(
      'todo',
      'claim',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_publish',
      '--agent-id',
      'zz',
      '--format',
      'json',
    );
    assert.equal(run.code, 1);
    const error: Record<string, unknown> = { ...run.error() };
    assert.equal(error['code'], 'agent_not_registered');
    assert.equal(error['message'], "claimed_by='zz' is not registered for goal 'g1'; registered_agents=a1, a2");
    assert.equal(fs.readFileSync(p.stateFile, 'utf8'), STATE);
    const body = run.json();
    assert.deepEqual([body['ok'], body['added'], body['already_exists'], body['goal_id']], [false, false, false, 'g1']);
    const legacy = project(null);
    const noRoster = await legacy.run(
      'todo',
      'claim',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_publish',
      '--claimed-by',
      'anyone',
      '--format',
      'json',
    );
    assert.equal(noRoster.code, 1, 'a goal without a roster accepts no agent id (the original refuses too)');
    assert.match(noRoster.error().message, /^claimed_by='anyone' cannot be used because goal 'g1' has no coordination/);
    assert.equal(fs.readFileSync(legacy.stateFile, 'utf8'), STATE);
  });

  it('todo claim on a multi-agent goal needs the acting --agent-id, and refuses a todo another agent holds', async () => {
    const p = project();
    const claim = (...extra: string[]) =>
      p.run('todo', 'claim', '--goal-id', 'g1', '--todo-id', 'todo_publish', ...extra, '--format', 'json');
    const noActor = await claim('--claimed-by', 'codex-main');
    assert.equal(noActor.code, 1);
    assert.match(noActor.error().message, /^multi-agent todo claim requires --agent-id/);
    assert.equal(fs.readFileSync(p.stateFile, 'utf8'), STATE);
    assert.equal((await claim('--claimed-by', 'codex-main', '--agent-id', 'codex-main')).code, 0);
    const taken = await claim('--claimed-by', 'codex-side', '--agent-id', 'codex-side');
    assert.equal(taken.code, 1);
    assert.match(
      taken.error().message,
      /^agent_id='codex-side' cannot claim todo_id='todo_publish'; it is claimed_by='codex-main'/,
    );
  });

  it('todo claim of a todo that does not exist says "not found" before asking for the acting --agent-id', async () => {
    const p = project();
    const run = await p.run(
      'todo',
      'claim',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_nope',
      '--claimed-by',
      'codex-main',
      '--format',
      'json',
    );
    assert.equal(run.code, 1);
    assert.match(run.error().message, /^todo_id 'todo_nope' was not found in active user or agent todos/);
  });

  it('todo complete on a multi-agent goal names its lifecycle actor (--agent-id), as in the original', async () => {
    const p = project();
    const complete = (todoId: string, ...extra: string[]) =>
      p.run('todo', 'complete', '--goal-id', 'g1', '--todo-id', todoId, ...extra, '--format', 'json');
    const unnamed = await complete('todo_publish', '--evidence', 'done');
    assert.equal(unnamed.code, 1);
    assert.match(unnamed.error().message, /^multi-agent todo complete requires --agent-id to attribute the lifecycle/);
    assert.equal(fs.readFileSync(p.stateFile, 'utf8'), STATE, 'a refused completion writes nothing');
    const missing = await complete('todo_nope');
    assert.match(missing.error().message, /^todo_id 'todo_nope' was not found/, 'not found comes first');
    // A user gate bound to codex-main (blocks_agent) is answered by that agent only.
    const otherAgent = await complete('todo_gate_publish', '--decision-outcome', 'approve', '--agent-id', 'codex-side');
    assert.equal(otherAgent.code, 1);
    assert.match(
      otherAgent.error().message,
      /^agent_id='codex-side' cannot complete user todo_id='todo_gate_publish'; its response continuation is bound to bound_agent='codex-main'/,
    );
    // A todo another agent claimed is completed by its claimant.
    assert.equal(
      (await p.run('todo', 'claim', '--goal-id', 'g1', '--todo-id', 'todo_publish', '--agent-id', 'codex-main')).code,
      0,
    );
    const notClaimant = await complete('todo_publish', '--agent-id', 'codex-side');
    assert.match(
      notClaimant.error().message,
      /^agent_id='codex-side' cannot complete todo_id='todo_publish'; it is claimed_by='codex-main'/,
    );
    assert.equal((await complete('todo_publish', '--agent-id', 'codex-main')).code, 0);
  });

  it('todo complete: an exactly linked user gate decision needs no --agent-id; a one-agent goal never does', async () => {
    const linked = project();
    const text = fs
      .readFileSync(linked.stateFile, 'utf8')
      .replace(
        'unblocks_todo_id=todo_publish -->',
        'unblocks_todo_id=todo_publish decision_scope=public_claim:project:release -->',
      )
      .replace(
        'task_class=advancement_task -->',
        'task_class=advancement_task required_decision_scopes=public_claim:project:release -->',
      );
    fs.writeFileSync(linked.stateFile, text);
    const gate = await linked.run(
      'todo',
      'complete',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_gate_publish',
      '--decision-outcome',
      'approve',
      '--format',
      'json',
    );
    assert.equal(gate.code, 0, gate.stdout);
    const solo = project(['codex-main']);
    const plain = await solo.run(
      'todo',
      'complete',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_publish',
      '--format',
      'json',
    );
    assert.equal(plain.code, 0, plain.stdout);
  });

  it('todo complete without evidence or continuation continues the goal (active_goal), as in the original', async () => {
    const p = project();
    const plain = await p.run(
      'todo',
      'complete',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_publish',
      '--agent-id',
      'codex-main',
      '--format',
      'json',
    );
    assert.equal(plain.code, 0, plain.stdout);
    const plainJson = TodoEditJsonSchema.parse(plain.json());
    assert.equal(plainJson.todo_item.metadata['completion_continuation'], 'active_goal');
    assert.equal(plainJson.todo_item.metadata['evidence'], undefined);
    assert.match(fs.readFileSync(p.stateFile, 'utf8'), /- \[x\] \[P1\] Publish the package\./);
    const missing = await p.run('todo', 'complete', '--goal-id', 'g1', '--todo-id', 'todo_nope', '--format', 'json');
    assert.equal(missing.code, 1);
    assert.match(missing.error().message, /^todo_id 'todo_nope' was not found in active user or agent todos/);
    fs.writeFileSync(p.stateFile, STATE);
    const final = await p.run(
      'todo',
      'complete',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_publish',
      '--evidence',
      'published v1',
      '--no-follow-up',
      '--agent-id',
      'codex-main',
      '--format',
      'json',
    );
    assert.equal(final.code, 0, final.stdout);
    assert.equal(TodoEditJsonSchema.parse(final.json()).todo_item.metadata['no_followup'], 'true');
  });

  it('gates: add with gate flags, resolve with --decision-outcome, reject keeps the work blocked', async () => {
    const p = project();
    const gate = await p.run(
      'todo',
      'add',
      '--goal-id',
      'g1',
      '--text',
      'Approve the announcement.',
      '--unblocks-todo-id',
      'todo_publish',
      '--decision-scope',
      'public_claim:project:release',
      '--blocks-agent',
      'codex-main',
      '--format',
      'json',
    );
    assert.equal(gate.code, 0, gate.stdout + gate.stderr);
    const gateJson = TodoEditJsonSchema.parse(gate.json());
    assert.deepEqual([gateJson.role, gateJson.task_class], ['user', 'user_gate']);
    const bad = await p.run(
      'todo',
      'complete',
      '--goal-id',
      'g1',
      '--todo-id',
      gateJson.todo_id,
      '--evidence',
      'x',
      '--decision-outcome',
      'maybe',
    );
    assert.equal(bad.code, 2);
    const reject = await p.run(
      'todo',
      'complete',
      '--goal-id',
      'g1',
      '--todo-id',
      gateJson.todo_id,
      '--evidence',
      'owner said no',
      '--agent-id',
      'codex-main',
      '--decision-outcome',
      'reject',
      '--format',
      'json',
    );
    assert.equal(reject.code, 0, reject.stdout);
    const approve = await p.run(
      'todo',
      'complete',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_gate_publish',
      '--evidence',
      'owner said yes',
      '--agent-id',
      'codex-main',
      '--decision-outcome',
      'approve',
      '--format',
      'json',
    );
    assert.deepEqual(
      TodoEditJsonSchema.parse(approve.json()).released_todo_ids,
      [],
      'the rejected gate still holds todo_publish',
    );
    const list = TodoListJsonSchema.parse((await p.run('todo', 'list', '--goal-id', 'g1', '--format', 'json')).json());
    assert.deepEqual(
      list.todos.find((t) => t.todo_id === 'todo_publish')?.blocked_by.map((b) => `${b.gate_todo_id}:${b.gate_state}`),
      [`${gateJson.todo_id}:rejected`],
    );
  });

  it('todo update, supersede and defer', async () => {
    const p = project();
    const update = await p.run(
      'todo',
      'update',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_publish',
      '--priority',
      'P0',
      '--status',
      'blocked',
      '--note',
      'waits for CI',
      '--format',
      'json',
    );
    assert.equal(update.code, 0, update.stdout);
    assert.deepEqual(TodoEditJsonSchema.parse(update.json()).changed_fields, ['text', 'status', 'note']);
    assert.equal(
      (await p.run('todo', 'update', '--goal-id', 'g1', '--todo-id', 'todo_publish', '--status', 'done')).code,
      2,
    );
    assert.equal((await p.run('todo', 'update', '--goal-id', 'g1', '--todo-id', 'todo_publish')).code, 2);

    const supersede = await p.run(
      'todo',
      'supersede',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_publish',
      '--successor-text',
      'Publish to the internal registry.',
      '--reason',
      'scope cut',
      '--format',
      'json',
    );
    assert.equal(supersede.code, 0, supersede.stdout);
    const replacement = TodoEditJsonSchema.parse(supersede.json()).added_todos[0];
    assert.ok(replacement);

    const defer = await p.run(
      'todo',
      'defer',
      '--goal-id',
      'g1',
      '--todo-id',
      replacement.todo_id,
      '--reason',
      'needs a token',
      '--resume-when',
      'capacity_available:gpu',
      '--format',
      'json',
    );
    assert.equal(defer.code, 0, defer.stdout);
    assert.equal(TodoEditJsonSchema.parse(defer.json()).status, 'deferred');
    const markdown = await p.run('todo', 'list', '--goal-id', 'g1', '--all');
    assert.match(markdown.stdout, /deferred/);
  });

  it('todo complete --no-follow-up says what was done (--evidence), as the original requires; nothing written', async () => {
    const p = project(['codex-main']);
    const before = fs.readFileSync(p.stateFile, 'utf8');
    const bare = await p.run('todo', 'complete', '--goal-id', 'g1', '--todo-id', 'todo_publish', '--no-follow-up');
    assert.equal(bare.code, 1, bare.stdout);
    assert.match(bare.stdout + bare.stderr, /--no-follow-up requires --note or --evidence/);
    assert.equal(fs.readFileSync(p.stateFile, 'utf8'), before);
    const done = await p.run(
      'todo',
      'complete',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_publish',
      '--no-follow-up',
      '--evidence',
      'published',
    );
    assert.equal(done.code, 0, done.stdout);
  });

  it('todo defer names when it resumes, as the original refuses a deferral without one (exit 1, nothing written)', async () => {
    const p = project();
    const before = fs.readFileSync(p.stateFile, 'utf8');
    const bare = await p.run('todo', 'defer', '--goal-id', 'g1', '--todo-id', 'todo_publish', '--reason', 'some day');
    assert.equal(bare.code, 1, bare.stdout);
    assert.match(bare.stdout + bare.stderr, /transition to deferred requires --resume-when with a supported condition/);
    assert.equal(fs.readFileSync(p.stateFile, 'utf8'), before);
    // The original's spelling of the same deferral, with a condition as it normalizes it (lowercase).
    const update = await p.run(
      'todo',
      'update',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_publish',
      '--status',
      'deferred',
      '--reason',
      'after review',
      '--resume-when',
      'PR_MERGED:#12',
      '--format',
      'json',
    );
    assert.equal(update.code, 0, update.stdout);
    assert.equal(TodoEditJsonSchema.parse(update.json()).status, 'deferred');
    assert.match(
      fs.readFileSync(p.stateFile, 'utf8'),
      /- \[-\] \[P1\] Publish the package\.\n.*status=deferred .*resume_when=pr_merged\S*12 reason=after%20review /,
    );
  });

  it('reports an unknown goal and a missing todo', async () => {
    const p = project();
    const goal = await p.run('todo', 'list', '--goal-id', 'nope');
    assert.equal(goal.code, 1);
    assert.match(goal.stderr, /goal 'nope' is not in the registry/);
    assert.equal((await p.run('todo', 'list', '--goal-id', '../x')).code, 2);
    const todo = await p.run(
      'todo',
      'claim',
      '--goal-id',
      'g1',
      '--todo-id',
      'todo_missing',
      '--agent-id',
      'codex-main',
    );
    assert.equal(todo.code, 1);
    assert.match(todo.stderr, /todo_id 'todo_missing' was not found in active user or agent todos/);
  });
});
