/**
 * The list of deliberate deviations from the original Python LoopX (test/compat/deviations.json), which
 * `npm run compat:seeds` reads to tell a listed deviation from an unlisted difference. Its shape is fixed (the quota
 * and families lists are merged by a union of entries): {family, rule, description, cases}. Every rule is also
 * described in docs/compatibility.md. Needs nothing outside the repository.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/demoWorkspace';

const load = () => import('../../../scripts/compat-deviations.mjs');

const entry = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  family: 'refresh',
  rule: 'next-action-heading-any-level',
  description: 'a Next Action heading at another level is read and rewritten in place',
  cases: ['kit:refresh-002', '3:refresh-0*'],
  ...over,
});

describe('compat deviation list (test/compat/deviations.json)', () => {
  it('is well formed: every entry names a kit family, a kebab-case rule, a description and its cases', async () => {
    const { deviationProblems, DEVIATIONS_FILE, FAMILIES } = await load();
    assert.equal(DEVIATIONS_FILE, join(REPO_ROOT, 'test', 'compat', 'deviations.json'));
    const list: unknown = JSON.parse(readFileSync(DEVIATIONS_FILE, 'utf8'));
    assert.deepEqual(deviationProblems(list), []);
    assert.ok(Array.isArray(list) && list.length > 0);
    for (const item of list as { family: string; rule: string; cases: string[] }[]) {
      assert.ok(FAMILIES.includes(item.family), item.family);
      assert.match(item.rule, /^[a-z0-9]+(-[a-z0-9]+)*$/);
      assert.deepEqual(Object.keys(item).sort(), ['cases', 'description', 'family', 'rule']);
    }
  });

  it("holds the shipped kit's nine deviations", async () => {
    const { loadDeviations, deviationFor } = await load();
    const list = loadDeviations();
    const shipped = [
      ['archive', 'archive-023'],
      ['refresh', 'refresh-002'],
      ['refresh', 'refresh-009'],
      ['refresh', 'refresh-015'],
      ['refresh', 'refresh-032'],
      ['refresh', 'refresh-033'],
      ['configure', 'configure-004'],
      ['register', 'register-008'],
      ['register', 'register-009'],
    ] as const;
    for (const [family, id] of shipped) assert.ok(deviationFor(list, 'kit', id, family), `kit:${id}`);
  });

  it('names every rule in docs/compatibility.md', async () => {
    const { loadDeviations } = await load();
    const docs = readFileSync(join(REPO_ROOT, 'docs', 'compatibility.md'), 'utf8');
    for (const { family, rule } of loadDeviations()) assert.ok(docs.includes(`\`${rule}\``), `${family}/${rule}`);
  });

  it('reports each malformed shape', async () => {
    const { deviationProblems } = await load();
    assert.deepEqual(deviationProblems([entry()]), []);
    assert.deepEqual(deviationProblems({}), ['the deviation list is not a JSON array']);
    const problem = (over: Record<string, unknown>): string => {
      const found = deviationProblems([entry(over)]);
      assert.equal(found.length, 1, JSON.stringify(found));
      return found[0] ?? '';
    };
    assert.match(problem({ family: 'quotas' }), /family "quotas" is not a kit family/);
    assert.match(problem({ rule: 'Next Action' }), /rule must be a kebab-case name/);
    assert.match(problem({ description: '' }), /description must say/);
    assert.match(problem({ cases: [] }), /cases must be a non-empty array/);
    assert.match(problem({ cases: ['refresh-002'] }), /is not <seed>:<case-id>/);
    assert.match(problem({ extra: 1 }), /keys are cases,description,extra,family,rule/);
    assert.deepEqual(deviationProblems([entry(), entry()]), ['refresh/next-action-heading-any-level is listed twice']);
  });

  it('covers a case by exact key or glob, only in its own family', async () => {
    const { deviationFor } = await load();
    const list = [entry({ cases: ['kit:refresh-002', '3:refresh-01?', '*:refresh-03*'] })] as never[];
    assert.ok(deviationFor(list, 'kit', 'refresh-002', 'refresh'));
    assert.equal(deviationFor(list, 1, 'refresh-002', 'refresh'), undefined);
    assert.ok(deviationFor(list, 3, 'refresh-015', 'refresh'));
    assert.equal(deviationFor(list, 3, 'refresh-1150', 'refresh'), undefined);
    assert.ok(deviationFor(list, 7, 'refresh-033', 'refresh'));
    assert.ok(deviationFor(list, 'kit', 'refresh-032', 'refresh'));
    assert.equal(deviationFor(list, 7, 'refresh-033', 'status'), undefined);
    assert.equal(deviationFor(list, 7, 'refresh-040', 'refresh'), undefined);
  });

  it('names the exact listed cases that were compared and matched', async () => {
    const { matchingListedCases } = await load();
    const list = [
      entry({ cases: ['kit:refresh-002', 'kit:refresh-009', 'kit:refresh-0*', '2:refresh-002'] }),
    ] as never[];
    const compared = new Set(['refresh-002', 'refresh-009']);
    assert.deepEqual(matchingListedCases(list, 'kit', compared, new Set(['refresh-002'])), ['kit:refresh-009']);
    assert.deepEqual(matchingListedCases(list, 'kit', new Set(['refresh-002']), new Set()), ['kit:refresh-002']);
    assert.deepEqual(matchingListedCases(list, 2, compared, compared), []);
  });
});
