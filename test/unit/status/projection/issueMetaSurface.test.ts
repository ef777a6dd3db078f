import assert from 'node:assert/strict';
import { issueMetaSurface } from '../../../../src/core/status/projection/issueMetaSurface';

/**
 * The original's `issue_meta_surface` (loopx/control_plane/work_items/issue_meta_surface.py). The expected values are
 * the original's `parse_issue_meta_surface` of the same texts.
 */
const PR_SECTION = `## Issue/PR Meta Surface
- repo=acme/widgets issue=#12 owner=platform validation="npm test" promotion=release labels="a, b;a|c"
- repo=acme/x owner=o validation=v
`;
const BOTH = `${PR_SECTION}## Issue Meta Surface
- id=first-anchor repo=acme/api issue_or_pr=PR-7 owner-route=api-team
  validation_surface=ci promotion=main code=src/api status=open freshness=fresh label=bug
- repo=<private> owner=o validation=v promotion=p
* repo=acme/y owner=o validation=v promotion=p
`;

describe('status item: issue_meta_surface', () => {
  it('the first heading with a valid block; aliases, continuation lines, labels, a derived anchor; incomplete dropped', () => {
    assert.deepEqual(issueMetaSurface(BOTH), {
      schema_version: 'issue_meta_surface_v0',
      source_section: 'Issue Meta Surface',
      item_count: 2,
      items: [
        {
          schema_version: 'issue_meta_surface_item_v0',
          index: 1,
          anchor_id: 'first-anchor',
          repo_handle: 'acme/api',
          issue_handle: 'PR-7',
          owner_route: 'api-team',
          related_code_hint: 'src/api',
          validation_surface: 'ci',
          promotion_target: 'main',
          status: 'open',
          freshness: 'fresh',
          labels: ['bug'],
        },
        {
          schema_version: 'issue_meta_surface_item_v0',
          index: 3,
          repo_handle: 'acme/y',
          owner_route: 'o',
          validation_surface: 'v',
          promotion_target: 'p',
          anchor_id: 'issue_anchor_3e61847719',
        },
      ],
    });
    assert.deepEqual(issueMetaSurface(PR_SECTION), {
      schema_version: 'issue_meta_surface_v0',
      source_section: 'Issue/PR Meta Surface',
      item_count: 1,
      items: [
        {
          schema_version: 'issue_meta_surface_item_v0',
          index: 1,
          repo_handle: 'acme/widgets',
          issue_handle: '#12',
          owner_route: 'platform',
          validation_surface: 'npm test',
          promotion_target: 'release',
          labels: ['a', 'b', 'c'],
          anchor_id: 'issue_anchor_2625daa7f0',
        },
      ],
    });
    assert.equal(issueMetaSurface('## Issue Meta Surface\n- repo=a owner=o validation=v\n'), null);
    assert.equal(issueMetaSurface('## Next Action\n- repo=a owner=o validation=v promotion=p\n'), null);
  });
});
