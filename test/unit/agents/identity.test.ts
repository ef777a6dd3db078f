import assert from 'node:assert/strict';
import {
  agentIdProblem,
  agentProfileForGoal,
  evaluateIdentityGate,
  normalizeAgentId,
  normalizeAgentIdList,
  registeredAgentsForGoal,
  requireRegisteredAgent,
  resolveThreadBinding,
  type ThreadBinding,
} from '../../../src/core/registry/agentIds';
import { LoopxError } from '../../../src/core/errors';

function thrown(fn: () => unknown): LoopxError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof LoopxError, `expected a LoopxError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected an error');
}

describe('agent identity', () => {
  it('case 1: normalizes agent ids', () => {
    assert.equal(normalizeAgentId('Codex Main'), 'codex-main');
    assert.equal(normalizeAgentId('  codex_main '), 'codex_main');
    assert.equal(normalizeAgentId('codex\tmain  x'), 'codex-main-x');
    assert.equal(normalizeAgentId('Agent@Host:1'), 'agent@host:1');
  });

  it('case 2: rejects values that are not agent ids, keeping 80 characters but not 81', () => {
    for (const value of ['1agent', 'agent/x', 'a,b', 'ünïcode', '', '   ', null, undefined, 0, 5, 'a'.repeat(81)]) {
      assert.equal(normalizeAgentId(value), null, `value ${JSON.stringify(value)}`);
    }
    assert.equal(normalizeAgentId('a'.repeat(80)), 'a'.repeat(80));
  });

  it('case 2 (fixed): booleans are not agent ids (the original mapped true to "true")', () => {
    assert.equal(normalizeAgentId(true), null);
    assert.equal(normalizeAgentId(false), null);
    assert.deepEqual(normalizeAgentIdList([true, 'a']), ['a']);
  });

  it('explains why a value is not an agent id', () => {
    assert.match(agentIdProblem('1agent') ?? '', /starts with a letter a-z/);
    assert.match(agentIdProblem(true) ?? '', /expected a string, got boolean/);
    assert.match(agentIdProblem('  ') ?? '', /empty/);
    assert.equal(agentIdProblem('codex-main'), null);
  });

  it('case 3: normalizes lists', () => {
    assert.deepEqual(
      normalizeAgentIdList(['a', 'A', { id: 'b' }, { agent_id: 'c' }, { name: 'D' }, { x: 1 }, '1bad']),
      ['a', 'b', 'c', 'd'],
    );
    assert.deepEqual(normalizeAgentIdList(null), []);
    assert.deepEqual(normalizeAgentIdList('Codex Main'), ['codex-main']);
    assert.deepEqual(normalizeAgentIdList('a,b'), [], 'commas are not split');
  });

  it('case 4: registered agents are the ordered union of coordination, top-level and spawn_policy lists', () => {
    const goal = {
      id: 'g',
      coordination: { registered_agents: ['coord', 'top'] },
      registered_agents: ['top'],
      spawn_policy: { registered_agents: 'spawn' },
    };
    assert.deepEqual(registeredAgentsForGoal(goal), ['coord', 'top', 'spawn']);
    assert.deepEqual(registeredAgentsForGoal({ id: 'g', coordination: 'junk' }), []);
  });

  it('case 5: looks up agent profiles in a dict by normalized key and in a list by any id field', () => {
    const dictGoal = {
      id: 'g',
      coordination: { agent_profiles: { 'codex-main': { role: 'main' }, 'Codex-Other': { role: 'other' } } },
    };
    assert.deepEqual(agentProfileForGoal(dictGoal, 'Codex Main'), { role: 'main', agent_id: 'codex-main' });
    assert.equal(agentProfileForGoal(dictGoal, 'codex-other'), null);
    const listGoal = { id: 'g', coordination: { agent_profiles: [{ id: 'Codex Main', role: 'x' }] } };
    assert.deepEqual(agentProfileForGoal(listGoal, 'codex-main'), {
      id: 'Codex Main',
      role: 'x',
      agent_id: 'codex-main',
    });
    assert.equal(agentProfileForGoal(listGoal, 'other'), null);
  });

  it('case 6: requires a registered agent with the original error texts', () => {
    const goal = { id: 'g', coordination: { registered_agents: ['a1', 'a2'] } };
    assert.equal(requireRegisteredAgent(goal, 'A1'), 'a1');

    const notRegistered = thrown(() => requireRegisteredAgent(goal, 'zz'));
    assert.equal(notRegistered.code, 'agent_not_registered');
    assert.equal(notRegistered.message, "claimed_by='zz' is not registered for goal 'g'; registered_agents=a1, a2");

    const invalid = thrown(() => requireRegisteredAgent(goal, '9'));
    assert.equal(invalid.code, 'agent_id_invalid');
    assert.equal(invalid.message, 'claimed_by must be a public-safe registered agent id');

    const empty = thrown(() => requireRegisteredAgent({ id: 'h' }, 'a1'));
    assert.equal(empty.code, 'agent_registry_roster_missing');
    assert.equal(
      empty.message,
      "claimed_by='a1' cannot be used because goal 'h' has no coordination.registered_agents list. " +
        'Register this peer identity first: loopx configure-goal --goal-id h --registered-agent a1 --execute',
    );
  });

  it('case 6: lets a subsystem name its field and prefix its codes', () => {
    const error = thrown(() =>
      requireRegisteredAgent({ id: 'g', coordination: { registered_agents: ['a'] } }, 'b', {
        field: 'agent_id',
        codePrefix: 'quota_',
      }),
    );
    assert.equal(error.code, 'quota_agent_not_registered');
    assert.match(error.message, /^agent_id='b' is not registered/);
  });

  it('resolves thread bindings per thread and host surface', () => {
    const goal = {
      id: 'g',
      coordination: {
        thread_agent_bindings: [
          { thread_id: 't1', host_surface: 'codex-app', agent_id: 'B' },
          { thread_id: 't2', agent_id: 'a' },
          { thread_id: 't2', agent_id: 'b' },
          { thread_id: 't3', host_surface: 'codex-cli', agent_id: 'a' },
        ],
      },
    };
    assert.deepEqual(resolveThreadBinding(goal, 't1'), { status: 'bound', agent_id: 'b', thread_id: 't1' });
    assert.deepEqual(resolveThreadBinding(goal, 't2'), { status: 'conflict', agent_ids: ['a', 'b'], thread_id: 't2' });
    assert.deepEqual(resolveThreadBinding(goal, 't3', 'codex-app'), { status: 'missing', thread_id: 't3' });
    assert.deepEqual(resolveThreadBinding(goal, 'zz'), { status: 'missing', thread_id: 'zz' });
    assert.equal(resolveThreadBinding(goal, ' '), null);
  });
});

describe('identity gate', () => {
  const gate = (registered: string[], requested?: string, options: { fresh?: boolean; binding?: ThreadBinding } = {}) =>
    evaluateIdentityGate({
      goalId: 'g',
      registeredAgents: registered,
      requestedAgentId: requested,
      freshAgentDefault: options.fresh ?? false,
      threadBinding: options.binding ?? null,
    });

  it('case 10: without the fresh default', () => {
    const legacy = gate([]);
    assert.equal(legacy.status, 'legacy_unscoped');
    assert.equal(legacy.activation_allowed, true);
    assert.equal(legacy.agent_id, null);
    assert.equal(legacy.identity_selection_gate, null);
    assert.equal(gate([], 'anyone').agent_id, 'anyone');

    const single = gate(['a']);
    assert.equal(single.status, 'single_registered_agent_selected');
    assert.equal(single.agent_id, 'a');

    const two = gate(['a', 'b']);
    assert.equal(two.status, 'selection_required');
    assert.equal(two.activation_allowed, false);
    assert.equal(two.identity_selection_gate?.choices.length, 2);
    assert.equal(two.identity_selection_gate?.activation_input_command, null);
    assert.deepEqual(two.identity_selection_gate?.choices[0], {
      action: 'takeover_existing_agent',
      agent_id: 'a',
      requires_explicit_takeover_intent: true,
    });
    assert.equal(two.identity_selection_gate?.fresh_agent_registration, undefined);

    const selected = gate(['a', 'b'], 'B');
    assert.equal(selected.status, 'selected');
    assert.equal(selected.agent_id, 'b');
    assert.equal(gate(['a', 'b'], 'c').status, 'invalid_selection');
  });

  it('case 11: with the fresh default (onboarding)', () => {
    const fresh = gate(['codex-existing'], undefined, { fresh: true });
    assert.equal(fresh.status, 'fresh_agent_registration_required');
    assert.equal(fresh.activation_allowed, false);
    const packet = fresh.identity_selection_gate;
    assert.ok(packet);
    assert.equal(packet.default_action, 'register_fresh_agent');
    assert.equal(
      packet.fresh_agent_registration?.preview_command,
      "loopx register-agent --goal-id g --agent-id '<new-public-safe-agent-id>' --require-new",
    );
    assert.ok(packet.fresh_agent_registration?.preview_command.endsWith('--require-new'));
    assert.ok(packet.fresh_agent_registration?.execute_command.endsWith('--require-new --execute'));
    assert.deepEqual(packet.fresh_agent_registration?.continuation_contract.requires_true, [
      'ok',
      'changed',
      'written',
      'verified',
    ]);
    assert.equal(packet.choices.length, 1);
    assert.equal(packet.choices[0]?.agent_id, 'codex-existing');

    assert.deepEqual(gate([], undefined, { fresh: true }).identity_selection_gate?.choices, []);

    const unregistered = gate(['codex-existing'], 'new', { fresh: true });
    assert.equal(unregistered.status, 'invalid_selection');
    assert.equal(unregistered.identity_selection_gate?.fresh_agent_registration?.agent_id, 'new');
    assert.equal(
      unregistered.identity_selection_gate?.fresh_agent_registration?.execute_command,
      'loopx register-agent --goal-id g --agent-id new --require-new --execute',
    );

    const registered = gate(['codex-existing'], 'codex-existing', { fresh: true });
    assert.equal(registered.status, 'selected');
    assert.equal(registered.identity_selection_gate, null);
  });

  it('case 12: thread bindings', () => {
    const bound = (agent: string): ThreadBinding => ({ status: 'bound', agent_id: agent, thread_id: 't' });
    assert.equal(gate(['a', 'b'], undefined, { binding: bound('b') }).status, 'thread_binding_selected');
    assert.equal(gate(['a', 'b'], undefined, { binding: bound('b') }).agent_id, 'b');
    assert.equal(gate(['a', 'b'], undefined, { binding: bound('z') }).status, 'thread_binding_invalid');
    assert.equal(
      gate(['a', 'b'], undefined, { binding: { status: 'conflict', agent_ids: ['a', 'b'], thread_id: 't' } }).status,
      'thread_binding_conflict',
    );
    const explicit = gate(['a', 'b'], 'a', { binding: bound('b') });
    assert.equal(explicit.status, 'explicit_agent_selected');
    assert.equal(explicit.agent_id, 'a');
    assert.equal(gate(['a', 'b'], 'z', { binding: bound('b') }).status, 'invalid_selection');
    assert.equal(
      gate(['a', 'b'], undefined, { binding: { status: 'missing', thread_id: 't' } }).status,
      'thread_binding_selection_required',
    );
  });

  it('treats a requested id that is not an agent id as an invalid selection, not as no id', () => {
    const result = gate(['a'], '9x');
    assert.equal(result.status, 'invalid_selection');
    assert.equal(result.requested_agent_id, '9x');
    assert.match(result.reason, /not a public-safe agent id/);
    const fresh = gate(['a'], '9x', { fresh: true });
    assert.equal(fresh.identity_selection_gate?.fresh_agent_registration?.agent_id, null);
  });
});
