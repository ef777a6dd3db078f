import assert from 'node:assert/strict';
import { parseStateDocument } from '../../../src/core/state/document';
import { readNextAction, setFrontMatterField, writeNextAction } from '../../../src/core/state/nextAction';

describe('next action writer', () => {
  it('case R3: replaces the existing section body with a blank line, the bullet and a blank line', () => {
    const text = '---\nstatus: active\n---\n## Next Action\n- old\n## Progress Ledger\n- p\n';
    const result = writeNextAction(text, 'new act');
    assert.equal(result.text, '---\nstatus: active\n---\n## Next Action\n\n- new act\n\n## Progress Ledger\n- p\n');
    assert.equal(result.changed, true);
    assert.deepEqual(writeNextAction(result.text, 'new act'), { text: result.text, changed: false });
  });

  it('case R3: inserts a missing section before Progress Ledger, or appends it', () => {
    assert.equal(
      writeNextAction('## Agent Todo\n## Progress Ledger\n', 'go').text,
      '## Agent Todo\n## Next Action\n\n- go\n\n## Progress Ledger\n',
    );
    assert.equal(
      writeNextAction('## Agent Todo\n- [ ] x', 'go').text,
      '## Agent Todo\n- [ ] x\n\n## Next Action\n\n- go',
    );
  });

  it('case N2 fix: a ### next action heading is rewritten in place, never duplicated', () => {
    const text = '## Agent Todo\n\n### next action\n- deep heading ok\n## Progress Ledger\n';
    const result = writeNextAction(text, 'Promote the vliw repair slice as the durable next action.');
    assert.equal(
      result.text,
      '## Agent Todo\n\n### next action\n\n- Promote the vliw repair slice as the durable next action.\n\n## Progress Ledger\n',
    );
    assert.equal((result.text.match(/next action/gi) ?? []).length, 2);
    assert.equal(
      readNextAction(parseStateDocument(result.text)),
      'Promote the vliw repair slice as the durable next action.',
    );
  });

  it('only blank lines differing is no change', () => {
    const text = '## Next Action\n- same\n## Other\n';
    assert.deepEqual(writeNextAction(text, 'same'), { text, changed: false });
  });

  it('sets a front matter field in place, adds a missing one, or creates the block', () => {
    const text = '---\r\nstatus: active\r\nupdated_at: 2026-01-01T00:00:00Z\r\n---\r\nbody\r\n';
    assert.equal(
      setFrontMatterField(text, 'updated_at', '2026-02-02T00:00:00Z').text,
      text.replace('2026-01-01', '2026-02-02'),
    );
    assert.equal(
      setFrontMatterField(text, 'owner_mode', 'solo').text,
      text.replace('---\r\nbody', 'owner_mode: solo\r\n---\r\nbody'),
    );
    assert.equal(setFrontMatterField('body\n', 'updated_at', 'X').text, '---\nupdated_at: X\n---\nbody\n');
    assert.equal(setFrontMatterField(text, 'status', 'active').changed, false);
  });
});
