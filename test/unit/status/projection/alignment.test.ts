import assert from 'node:assert/strict';
import {
  actionsAligned,
  compareForm,
  containsCredential,
  displayText,
  publicSafeCompact,
} from '../../../../src/core/status/projection/text';

describe('projection text: normalization and alignment (§4.4)', () => {
  it('case A1: a priority tag and role prefix do not break alignment', () => {
    assert.equal(
      actionsAligned(
        '[P1] Agent: Validate the primary public PoC control-plane lane.',
        'Validate the primary public PoC control-plane lane.',
      ),
      true,
    );
  });

  it('case A2: a todo id prefix and a P<n>: prefix are stripped before comparing', () => {
    assert.equal(
      actionsAligned(
        'todo_fe0c5551dd89: P2: Route quota execution through interaction_contract.agent_channel.primary_action',
        'P2: Route quota execution through interaction_contract.agent_channel.primary_action',
      ),
      true,
    );
  });

  it('case A3: case, whitespace and a codex: prefix are ignored', () => {
    assert.equal(actionsAligned('codex:   Do   X', 'do x'), true);
    assert.equal(actionsAligned('Run tests', 'run tests'), true);
  });

  it('case A4: a label of 8+ characters inside the other text aligns; a shorter one does not', () => {
    assert.equal(actionsAligned('Fix bug', 'Fix bug in parser'), false);
    assert.equal(actionsAligned('Fix bugs', 'fix bugs in parser'), true);
  });

  it('case A5: the label before a colon aligns when found in the other text (label rule)', () => {
    assert.equal(actionsAligned('Refactor the parser: split lexer', 'We should Refactor the parser today'), true);
  });

  it('case A6: the first six words of the leading clause align when found in the other text (prefix rule)', () => {
    assert.equal(
      actionsAligned(
        'Run the trace reducer backfill and validate output',
        'Run the trace reducer backfill and then stop',
      ),
      true,
    );
  });

  it('case A7: a short label before the colon does not align; empty texts never align', () => {
    assert.equal(actionsAligned('Deploy: now', 'deploy later'), false);
    assert.equal(actionsAligned('', ''), false);
    assert.equal(actionsAligned(null, 'anything at all here'), false);
  });

  it('alignment is symmetric on the spec pairs', () => {
    assert.equal(actionsAligned('fix bugs in parser', 'Fix bugs'), true);
    assert.equal(
      actionsAligned(
        'Run the trace reducer backfill and then stop',
        'Run the trace reducer backfill and validate output',
      ),
      true,
    );
  });

  it('compare form strips each prefix kind once, in order', () => {
    assert.equal(compareForm('todo_abc123: P1: [ops] Agent: Do  it'), 'do it');
    assert.equal(compareForm('Agent: [P1] do it'), '[p1] do it');
    assert.equal(compareForm('[a] [b] do it'), '[b] do it');
  });

  it('display form collapses whitespace and cuts at 320 characters with an ellipsis', () => {
    assert.equal(displayText('  a \n\t b  '), 'a b');
    assert.equal(displayText(null), '');
    const long = displayText('x'.repeat(400));
    assert.equal(Array.from(long).length, 320);
    assert.ok(long.endsWith('…'));
    assert.equal(displayText('y'.repeat(320)), 'y'.repeat(320));
  });

  it('public-safe compaction hides texts with local paths or secrets', () => {
    assert.equal(publicSafeCompact('  Inspect   the run  '), 'Inspect the run');
    assert.equal(publicSafeCompact('open /Users/me/notes.md'), null);
    assert.equal(publicSafeCompact('see /home/me/x and /tmp/y'), null);
    assert.equal(publicSafeCompact('copy C:\\Users\\me\\x'), null);
    assert.equal(publicSafeCompact('use Bearer abc.def'), null);
    assert.equal(publicSafeCompact('call with token=abcdefghijkl'), null);
    assert.equal(publicSafeCompact('push with ghp_abcdef123456'), null);
    assert.equal(publicSafeCompact('jwt eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl'), null);
    assert.equal(publicSafeCompact('ak=xyz sk=abc'), null);
    assert.equal(publicSafeCompact('   '), null);
    assert.equal(containsCredential('run the task=foo step'), false);
  });
});
