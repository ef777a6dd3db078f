import * as assert from 'node:assert/strict';
import { statusEntryKey, statusStateFile } from '../../../src/core/status/goalStatus';
import { statusRef } from '../../support/status';

/**
 * The item cache keys a goal's status by what status shows of its entry (`statusEntryKey`); the persistent cache
 * keeps those keys across processes, so a change of their text must bump `STATUS_CACHE_SCHEMA`. These are the
 * keys the status target of before gave (its fields, in its order).
 */
describe('statusEntryKey: what status shows of a goal entry, keyed as before', () => {
  it('is the fields of the entry, in the order the persistent cache was written with', () => {
    const ref = statusRef({
      goalId: 'g1',
      projectRoot: '/p',
      runtimeRoot: '/p/.loopx/runtime',
      homeDir: '/home/u',
      entry: {
        display_name: 'Goal one',
        status: 'active',
        state_file: '/p/STATE.md',
        adapter: { kind: 'loopx' },
        coordination: { registered_agents: ['codex'] },
        quota: { compute: 0.5 },
      },
    });
    assert.equal(
      statusEntryKey(ref),
      JSON.stringify({
        goalId: 'g1',
        displayName: 'Goal one',
        status: 'active',
        domain: null,
        projectRoot: '/p',
        runtimeRoot: '/p/.loopx/runtime',
        stateFile: '/p/STATE.md',
        agents: ['codex'],
        registryMember: true,
        adapterStatus: null,
        adapterKind: 'loopx',
        registryWaitingOn: null,
        attentionStatus: null,
        subAgents: false,
        registryOperatorQuestion: null,
        registryNextHandoffCondition: null,
      }),
    );
  });

  it("fills what the entry leaves out as status always did: the id, 'unknown', no state file without state_file", () => {
    const ref = statusRef({
      goalId: 'g2',
      projectRoot: '/p',
      runtimeRoot: '/r',
      homeDir: '/home/u',
      entry: { repo: '~/project', waiting_on: 'operator', attention_status: 'blocked', domain: 'docs' },
    });
    const fields = JSON.parse(statusEntryKey(ref)) as Record<string, unknown>;
    assert.equal(fields['displayName'], 'g2');
    assert.equal(fields['status'], 'unknown');
    assert.equal(fields['domain'], 'docs');
    assert.equal(fields['registryWaitingOn'], 'operator');
    assert.equal(fields['attentionStatus'], 'blocked');
    // A repo without state_file: the GoalRef's statePath would be bootstrap's default place; status reads none.
    assert.equal(statusStateFile(ref), null);
    const relative = statusRef({ ...ref, entry: { repo: '~/project', state_file: 'STATE.md' } });
    assert.equal(statusStateFile(relative), '/home/u/project/STATE.md');
  });
});
