import assert from 'node:assert/strict';
import type { RoleOpenCounts, StateProjectionGapInput } from '../../../../src/core/status/projection/inputs';
import { stateProjectionGap } from '../../../../src/core/status/projection/projectionGap';
import { stateProjectionGapSchema } from '../../../../src/core/status/projection/schemas';

// These tests pass what the state parser reads from each spec fixture: the Next Action entries
// (bullet markers stripped) and each role's open checkbox count.
const none: RoleOpenCounts = { markdownOpenCount: 0 };

function gap(
  entries: string[],
  agent: RoleOpenCounts = none,
  user: RoleOpenCounts = none,
): ReturnType<typeof stateProjectionGap> {
  const input: StateProjectionGapInput = { nextActionEntries: entries, agentTodos: agent, userTodos: user };
  return stateProjectionGap(input);
}

describe('stateProjectionGap (§4.5)', () => {
  it('case G1: an executable Next Action with only done agent todos → agent gap', () => {
    // "## Agent Todo\n- [x] Finish the previous bounded implementation slice.\n## Next Action\n- Run the trace reducer …"
    const entry = 'Run the trace reducer backfill and validate the benchmark compact output.';
    const result = gap([entry]);
    assert.deepEqual(result, {
      schema_version: 'state_projection_gap_v0',
      kind: 'state_projection_gap',
      severity: 'warning',
      requires_todo_expansion: true,
      agent_open_count: 0,
      user_open_count: 0,
      target_roles: ['agent'],
      evidence_count: 1,
      first_evidence: [
        {
          kind: 'next_action_executable_without_agent_todo',
          target_role: 'agent',
          section: 'Next Action',
          text: entry,
        },
      ],
      recommended_action:
        'expand the Next Action into explicit todos (agent work under Agent Todo, owner waits under User Todo), or rewrite the Next Action to match the open todos',
      message:
        'The Next Action asks for agent work but there is no open Agent Todo. Add the missing todo, or rewrite the Next Action.',
      id: 'lxw_bc4ab5c7a405c1be',
      compared: [{ field: 'next_action', value: entry }],
      actions: [{ kind: 'add_todo', role: 'agent', text: entry }, { kind: 'dismiss' }],
    });
    assert.equal(stateProjectionGapSchema.safeParse(result).success, true);
  });

  it('case G2: a wait on the owner with no open user todo → user gap (English and Chinese)', () => {
    for (const entry of [
      'Wait for owner approval before uploading anything.',
      '等待用户确认后再继续外部发布。',
      '待审批后执行公开发布。',
    ]) {
      const result = gap([entry]);
      assert.deepEqual(result?.target_roles, ['user'], entry);
      assert.deepEqual(result?.first_evidence, [
        { kind: 'next_action_waits_without_user_todo', target_role: 'user', section: 'Next Action', text: entry },
      ]);
    }
    const both = gap(['Run tests, then wait for owner approval.']);
    assert.deepEqual(both?.target_roles, ['agent', 'user']);
    assert.equal(both?.evidence_count, 2);
    assert.deepEqual(both?.actions, [
      { kind: 'add_todo', role: 'agent', text: 'Run tests, then wait for owner approval.' },
      { kind: 'add_todo', role: 'user', text: 'Run tests, then wait for owner approval.' },
      { kind: 'dismiss' },
    ]);
    assert.equal(
      both?.message,
      'The Next Action asks for agent work but there is no open Agent Todo and waits on the owner but there is no open User Todo. Add the missing todo, or rewrite the Next Action.',
    );
  });

  it('case G3: an open agent todo with the Next Action text → no gap, and the user-wait rule does not misfire', () => {
    for (const entry of [
      'Run the trace reducer backfill.',
      'Keep/suppress decision packet rows in the runner sidecar.',
      '请检查用户态字段是否被误投影。',
    ]) {
      assert.equal(gap([entry], { markdownOpenCount: 1 }), null, entry);
    }
  });

  it('case G4: summary counts win over Markdown; no verb or no Next Action → no gap', () => {
    assert.equal(gap(['Run tests.'], { summary: { open: '3' }, markdownOpenCount: 0 }), null);
    assert.equal(gap(['Celebrate.']), null);
    assert.equal(gap([]), null);
    assert.equal(
      gap(['Run tests.'], { summary: { open_count: 0, open: 5 }, markdownOpenCount: 2 })?.agent_open_count,
      0,
    );
    assert.equal(gap(['Run tests.'], { summary: { open_count: 'many' }, markdownOpenCount: 2 })?.agent_open_count, 0);
  });

  it('case G4 (bug 7 fixed): an empty summary {} falls back to the Markdown count instead of meaning zero', () => {
    // The original reported a gap here even though the Markdown has an open agent todo.
    assert.equal(gap(['Run tests.'], { summary: {}, markdownOpenCount: 1 }), null);
    assert.equal(gap(['Run tests.'], { summary: {}, markdownOpenCount: 0 })?.target_roles[0], 'agent');
  });

  it('reads only the first three entries and shows at most three pieces of evidence', () => {
    const entries = [
      'Run one, then wait for owner approval.',
      'Fix two and wait for user decision.',
      'Add three.',
      'Validate four.',
    ];
    const result = gap(entries);
    assert.equal(result?.evidence_count, 5);
    assert.equal(result?.first_evidence.length, 3);
    assert.equal(
      result?.first_evidence.some((item) => item.text === 'Validate four.'),
      false,
    );
  });

  it('matches executable verbs as whole words only', () => {
    assert.equal(gap(['Keep the runner sidecar warm.']), null);
    assert.equal(gap(['推进公开发布。'])?.target_roles[0], 'agent');
  });
});
