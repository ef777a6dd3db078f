import assert from 'node:assert/strict';
import { classifyLeaf, findPrivateMarkers, MAX_PRIVATE_MARKERS } from '../../../src/core/privacy/markers';

describe('privacy markers', () => {
  it('case 30: raw source references, local paths and private text are detected', () => {
    assert.equal(classifyLeaf('source_ref', 'doc-123'), 'raw_source_reference');
    assert.equal(classifyLeaf('url', 'https://example.com/page'), 'raw_source_reference');
    assert.equal(classifyLeaf('markdown_path', '/abs/p.md'), 'local_path');
    assert.equal(classifyLeaf('note', '/tmp/x'), 'local_path');
    assert.equal(classifyLeaf('common_runtime_root', '/home/u/rt'), 'local_path');
    assert.equal(classifyLeaf('json_path', 'rel/p.json'), null);
    assert.equal(classifyLeaf('repo', '/path/to/project'), null);
    assert.equal(classifyLeaf('note', 'Use a Token here'), 'private_text');
    assert.equal(classifyLeaf('note', 'tokenizer'), 'private_text');
    assert.equal(classifyLeaf('note', 'my password'), 'private_text');
  });

  it('case 30 (whitespace fix, deviation from the original): a local path after whitespace is detected', () => {
    // The original missed "see /tmp/x" and flagged "dirs/tmp/x" (spec §13.1); we fix both.
    assert.equal(classifyLeaf('note', 'see /tmp/x'), 'local_path');
    assert.equal(classifyLeaf('note', 'dirs/tmp/x'), null);
    assert.equal(classifyLeaf('note', 'line one\n~/notes/a.md'), 'local_path');
    assert.equal(classifyLeaf('note', 'key:/Users/me/x'), 'local_path');
    assert.equal(classifyLeaf('note', 'quoted "/var/folders/ab/c"'), 'local_path');
  });

  it('a path key with a tilde or a Windows drive is a local path; a relative value under a path key is not', () => {
    assert.equal(classifyLeaf('repo', '~/projects/app'), 'local_path');
    assert.equal(classifyLeaf('source_registry', 'C:\\work\\.loopx\\registry.json'), 'local_path');
    assert.equal(classifyLeaf('repo', 'projects/app'), null);
  });

  it('walks nested leaves with key paths and never records values', () => {
    const scan = findPrivateMarkers({
      schema_version: '0.1',
      goals: [
        { id: 'a', repo: '/home/u/a', guards: ['fine', 'see /tmp/x'], adapter: { kind: 'k' }, quota: { compute: 1 } },
        { id: 'b', authority_sources: [{ source_ref: 'wiki-1' }], note: null },
      ],
    });
    assert.deepEqual(scan.markers, [
      { path: 'goals[0].repo', kind: 'local_path' },
      { path: 'goals[0].guards[1]', kind: 'local_path' },
      { path: 'goals[1].authority_sources[0].source_ref', kind: 'raw_source_reference' },
    ]);
    assert.equal(scan.truncated, false);
    assert.ok(!JSON.stringify(scan).includes('/home/u/a'));
  });

  it('keeps at most 25 markers and says when it stopped', () => {
    const guards = Array.from({ length: 40 }, (_, index) => `secret ${index}`);
    const scan = findPrivateMarkers({ guards });
    assert.equal(scan.markers.length, MAX_PRIVATE_MARKERS);
    assert.equal(scan.truncated, true);
    assert.equal(scan.markers[24]?.path, 'guards[24]');
    for (const marker of scan.markers) assert.deepEqual(Object.keys(marker).sort(), ['kind', 'path']);
  });
});
