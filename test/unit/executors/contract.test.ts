import assert from 'node:assert/strict';
import { extractMachineObject, extractObjectFromMessage } from '../../../src/core/executors/extract';
import {
  checkHostResult,
  checkTurnReceipt,
  FAILED_PHASE_BY_KIND,
  HOST_FAILURE_REASONS,
  RESULT_MAX_BYTES,
  TURN_PHASES,
} from '../../../src/core/protocol/contract';

const KEY = `sha256:${'a'.repeat(64)}`;

function progress(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema_version: 'loopx_turn_result_v0',
    turn_key: KEY,
    result_kind: 'validated_progress',
    completed_phases: ['host_execute', 'typed_result'],
    summary: 'Linked the notes.',
    classification: 'fixture_progress',
    recommended_action: 'Write the index.',
    next_action: 'Write the index.',
    delivery_batch_scale: 'implementation',
    delivery_outcome: 'outcome_progress',
    vision_unchanged_reason: 'objective unchanged',
    todo: { todo_id: 'todo_a', disposition: 'in_progress' },
    ...overrides,
  };
}

function problems(value: unknown, expected = { turn_key: KEY, selected_todo: { todo_id: 'todo_a' } }): string {
  const check = checkHostResult(value, expected);
  assert.equal(check.ok, false, 'expected the result to be refused');
  return check.ok ? '' : check.problems.join('\n');
}

describe('host result contract (loopx_turn_result_v0)', () => {
  it('accepts the spec example shape and normalizes batch-scale aliases', () => {
    const check = checkHostResult(progress({ delivery_batch_scale: 'bounded_segment' }), {
      turn_key: KEY,
      selected_todo: { todo_id: 'todo_a' },
    });
    assert.ok(check.ok);
    assert.equal(check.result.delivery_batch_scale, 'single_surface');
    assert.deepEqual(check.result.changed_files, []);
  });

  it('rejects unknown fields and unknown result kinds', () => {
    assert.match(problems(progress({ mood: 'happy' })), /mood/);
    assert.match(problems(progress({ result_kind: 'done' })), /result_kind/);
  });

  it('material results need classification, recommended action, batch scale and outcome', () => {
    const text = problems(
      progress({
        classification: undefined,
        recommended_action: undefined,
        delivery_batch_scale: undefined,
        delivery_outcome: undefined,
      }),
    );
    for (const field of ['classification', 'recommended_action', 'delivery_batch_scale', 'delivery_outcome'])
      assert.match(text, new RegExp(`${field}: is required`));
  });

  it('stop kinds may not declare a path delta; material_replan needs replan_required and a vision', () => {
    const wait = {
      schema_version: 'loopx_turn_result_v0',
      turn_key: KEY,
      result_kind: 'wait',
      summary: 'Nothing to do.',
      next_action: 'Wait.',
      path_delta: 'unchanged',
      vision_unchanged_reason: 'same',
    };
    assert.match(problems(wait, { turn_key: KEY, selected_todo: null } as never), /may not declare a path delta/);
    const replan = problems(progress({ path_delta: 'material_replan' }));
    assert.match(replan, /material_replan needs result_kind replan_required/);
    assert.match(replan, /vision packet/);
    assert.match(
      problems(progress({ path_delta: 'unchanged', vision_unchanged_reason: undefined })),
      /vision_unchanged_reason/,
    );
  });

  it('a done todo needs evidence and exactly one of successor or no_follow_up, and result_kind validated_completion', () => {
    const done = (todo: Record<string, unknown>, kind = 'validated_completion'): Record<string, unknown> =>
      progress({ result_kind: kind, todo: { todo_id: 'todo_a', disposition: 'done', evidence: 'it works', ...todo } });
    assert.ok(
      checkHostResult(done({ no_follow_up: true }), { turn_key: KEY, selected_todo: { todo_id: 'todo_a' } }).ok,
    );
    assert.ok(
      checkHostResult(done({ successor: { text: 'Next thing.', priority: 'P2' } }), {
        turn_key: KEY,
        selected_todo: { todo_id: 'todo_a' },
      }).ok,
    );
    assert.match(problems(done({})), /exactly one of successor/);
    assert.match(problems(done({ no_follow_up: true, successor: { text: 'x' } })), /exactly one of successor/);
    assert.match(problems(done({ no_follow_up: true, evidence: '' })), /todo\.evidence/);
    assert.match(
      problems(done({ no_follow_up: true }, 'validated_progress')),
      /needs result_kind validated_completion/,
    );
  });

  it('user_action_required needs a question for the user', () => {
    const ask = {
      schema_version: 'loopx_turn_result_v0',
      turn_key: KEY,
      result_kind: 'user_action_required',
      summary: 'Blocked.',
      next_action: 'Ask.',
    };
    assert.match(
      problems({ ...ask, todo: { todo_id: 'todo_a', disposition: 'in_progress' } }),
      /needs disposition needs_user or blocked/,
    );
    assert.match(problems({ ...ask, todo: { todo_id: 'todo_a', disposition: 'needs_user' } }), /todo\.question/);
    assert.ok(
      checkHostResult(
        { ...ask, todo: { todo_id: 'todo_a', disposition: 'needs_user', question: 'Approve?' } },
        { turn_key: KEY, selected_todo: { todo_id: 'todo_a' } },
      ).ok,
    );
  });

  it('a host cannot claim validation, and changed files stay inside the project', () => {
    assert.match(
      problems(progress({ completed_phases: ['host_execute', 'typed_result', 'validation'] })),
      /validation and later phases are LoopX's/,
    );
    assert.match(problems(progress({ changed_files: ['/etc/passwd'] })), /relative to the project root/);
    assert.match(problems(progress({ changed_files: ['notes/../../outside.md'] })), /relative to the project root/);
    assert.match(problems(progress({ changed_files: ['C:\\Users\\me\\x.md'] })), /relative to the project root/);
  });

  it('shared text must be public-safe: no absolute paths or credentials', () => {
    assert.match(
      problems(progress({ next_action: 'Edit /home/alice/work/notes.md next.' })),
      /next_action: must be public-safe/,
    );
    assert.match(
      problems(progress({ recommended_action: `Use token=${'z'.repeat(20)}` })),
      /recommended_action: must be public-safe/,
    );
  });

  it('refuses results over 12,000 bytes before looking at them', () => {
    const check = checkHostResult(progress({ summary: 'x'.repeat(RESULT_MAX_BYTES) }));
    assert.equal(check.ok, false);
    assert.equal(check.ok ? null : check.reason, 'result_too_large');
  });

  it('binds the answer to the request: turn key and selected todo', () => {
    assert.match(problems(progress({ turn_key: undefined })), /turn_key: missing/);
    assert.match(problems(progress({ turn_key: `sha256:${'b'.repeat(64)}` })), /does not match/);
    assert.match(problems(progress({ todo: undefined })), /todo: missing/);
    assert.match(
      problems(progress({ todo: { todo_id: 'todo_b', disposition: 'in_progress' } })),
      /not the selected todo todo_a/,
    );
  });

  it('names every host failure reason of the executors', () => {
    assert.deepEqual([...HOST_FAILURE_REASONS].sort(), [
      'agent_reported_error',
      'cancelled',
      'contract_violation',
      'malformed_result',
      'non_zero_exit',
      'result_too_large',
      'spawn_failed',
      'timeout',
    ]);
    assert.equal(FAILED_PHASE_BY_KIND.host_failure, 'host_execute');
  });
});

describe('turn receipts (§4.2)', () => {
  it('case 32: a result with phases [host_execute, typed_result, validation] is validated; a mismatched turn_key is not ok', () => {
    const receipt = {
      turn_key: KEY,
      result_kind: 'validated_progress',
      completed_phases: ['host_execute', 'typed_result', 'validation'],
    };
    assert.deepEqual(checkTurnReceipt(receipt, KEY), { ok: true, status: 'validated', problems: [] });
    const mismatch = checkTurnReceipt(receipt, `sha256:${'c'.repeat(64)}`);
    assert.equal(mismatch.ok, false);
    assert.equal(mismatch.status, 'invalid');
  });

  it('orders statuses: committed with all seven phases, failed and stopped kinds, in_progress', () => {
    assert.equal(
      checkTurnReceipt({ turn_key: KEY, result_kind: 'validated_progress', completed_phases: [...TURN_PHASES] }, KEY)
        .status,
      'committed',
    );
    assert.equal(
      checkTurnReceipt(
        { turn_key: KEY, result_kind: 'host_failure', completed_phases: [], failed_phase: 'host_execute' },
        KEY,
      ).status,
      'failed',
    );
    assert.equal(
      checkTurnReceipt(
        {
          turn_key: KEY,
          result_kind: 'validation_failed',
          completed_phases: ['host_execute', 'typed_result'],
          failed_phase: 'validation',
        },
        KEY,
      ).status,
      'failed',
    );
    assert.equal(
      checkTurnReceipt({ turn_key: KEY, result_kind: 'wait', completed_phases: ['host_execute', 'typed_result'] }, KEY)
        .status,
      'stopped',
    );
    assert.equal(
      checkTurnReceipt(
        {
          turn_key: KEY,
          result_kind: 'terminal_closeout_failed',
          completed_phases: TURN_PHASES.slice(0, 5),
          failed_phase: 'terminal_closeout',
        },
        KEY,
      ).status,
      'failed',
    );
  });

  it('refuses phases out of order, a failed phase that is not next, material kinds without validation and spends on no-spend kinds', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { result_kind: 'validated_progress', completed_phases: ['typed_result', 'host_execute', 'validation'] },
        /ordered prefix/,
      ],
      [
        { result_kind: 'writeback_failed', completed_phases: ['host_execute'], failed_phase: 'durable_writeback' },
        /not the next uncompleted phase/,
      ],
      [
        {
          result_kind: 'validated_progress',
          completed_phases: ['host_execute', 'typed_result'],
          failed_phase: 'validation',
        },
        /only allowed on failure kinds/,
      ],
      [
        { result_kind: 'repair_required', completed_phases: ['host_execute', 'typed_result'] },
        /needs the validation phase/,
      ],
      [
        { result_kind: 'user_action_required', completed_phases: TURN_PHASES.slice(0, 5) },
        /may not include quota_spend/,
      ],
    ];
    for (const [receipt, message] of cases) {
      const check = checkTurnReceipt({ turn_key: KEY, ...receipt } as never, KEY);
      assert.equal(check.status, 'invalid');
      assert.match(check.problems.join('\n'), message);
    }
  });
});

describe('result extraction', () => {
  it('machine output: the whole text, else the last line that is a JSON object', () => {
    assert.deepEqual(extractMachineObject('{"a":1}'), { a: 1 });
    assert.deepEqual(extractMachineObject('log {"not": json\n{"a":1}\n{"a":2}\ntrailing log'), { a: 2 });
    assert.equal(extractMachineObject('[1,2]\nplain'), null);
  });

  it('model text: the last fenced JSON block, then the last JSON line; never brace-matching in prose', () => {
    assert.deepEqual(extractObjectFromMessage('Done.\n```json\n{"a":1}\n```\nthen\n```\n{"a":2}\n```'), { a: 2 });
    assert.equal(extractObjectFromMessage('Done.\n```ts\nconst a = {"a":1};\n```'), null);
    assert.deepEqual(extractObjectFromMessage('Done, result below.\n{"a":3}'), { a: 3 });
    assert.equal(extractObjectFromMessage('I used {"a":1} inline in a sentence.'), null);
  });
});
