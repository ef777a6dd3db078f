import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { writeJsonPretty } from '../../../src/cli/jsonStream';
import { fixedClock } from '../../../src/core/clock';
import { redactCredentialsShared } from '../../../src/core/privacy/scrub';
import { GoalStatusCache } from '../../../src/core/status/goalStatus';
import {
  deriveItemText,
  knownJsonText,
  prettyJsonAt,
  setItemText,
  STATUS_ITEM_LEVEL,
} from '../../../src/core/status/itemText';
import { goalItems, type StatusPayload } from '../../../src/core/status/statusPayload';
import { statusQuotaSummaries } from '../../../src/core/status/statusQuota';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import { loadStatusAt } from '../../support/status';

/** What `JSON.stringify(value, null, 2)` prints for `value` as a member nested `level` objects deep. */
function nestedText(value: unknown, level: number): string | undefined {
  let wrapped: unknown = value;
  for (let i = 0; i < level; i++) wrapped = { k: wrapped };
  const text = JSON.stringify(wrapped, null, 2) as string | undefined;
  if (text === undefined || (level > 0 && text === '{}')) return undefined;
  let start = 0;
  let end = 0;
  for (let l = 1; l <= level; l++) start += `{\n${'  '.repeat(l)}"k": `.length;
  for (let l = 0; l < level; l++) end += `\n${'  '.repeat(l)}}`.length;
  return text.slice(start, text.length - end);
}

/** Keys that are not array indexes (those V8 orders first, whatever the order they were added in). */
const key = fc.string({ maxLength: 8 }).filter((text) => !/^(0|[1-9][0-9]*)$/.test(text));
const record = fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { minKeys: 1, maxKeys: 8 });

describe('status items kept pre-serialized (itemText.ts)', () => {
  it('prettyJsonAt is JSON.stringify(…, null, 2) as the value reads nested that deep', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.integer({ min: 0, max: 5 }), (value, level) => {
        assert.equal(prettyJsonAt(value, level), nestedText(value, level));
      }),
    );
    assert.equal(prettyJsonAt(undefined, 3), undefined);
    assert.equal(
      prettyJsonAt(() => 1, 2),
      undefined,
    );
    assert.equal(prettyJsonAt(null, 2), 'null');
  });

  it('an answer item made from a cached one reads as JSON.stringify of it: kept members spliced, the others serialized', () => {
    fc.assert(
      fc.property(
        record,
        fc.array(fc.tuple(fc.nat(), fc.jsonValue({ maxDepth: 2 })), { maxLength: 4 }),
        fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
        (cachedFields, replaced, added) => {
          const text = prettyJsonAt(cachedFields, STATUS_ITEM_LEVEL) as string;
          const cached = JSON.parse(text) as Record<string, unknown>;
          setItemText(cached, text);
          const keys = Object.keys(cached);
          // Replaced members keep their place (a spread); added members come after.
          const answer: Record<string, unknown> = { ...cached };
          for (const [at, value] of replaced) answer[keys[at % keys.length] as string] = value;
          for (const [name, value] of Object.entries(added)) if (!(name in cached)) answer[name] = value;
          deriveItemText(answer, cached);
          assert.equal(knownJsonText(cached, STATUS_ITEM_LEVEL), text);
          assert.equal(knownJsonText(answer, STATUS_ITEM_LEVEL), prettyJsonAt(answer, STATUS_ITEM_LEVEL));
          // Only at the level the texts are for.
          assert.equal(knownJsonText(answer, STATUS_ITEM_LEVEL + 1), undefined);
        },
      ),
    );
  });

  it('a member replaced by an equal copy, patched or left out is never taken from the cached text', () => {
    const cached = { goal_id: 'g', handoff_readiness: { ready: true, checks: [1, 2] }, quota: null, tail: 'x' };
    const text = prettyJsonAt(cached, STATUS_ITEM_LEVEL) as string;
    setItemText(cached, text);
    // An answer-time patch: same key, new object (a monitor count moved with the clock).
    const patched = { ...cached, handoff_readiness: { ready: false, checks: [1, 2] }, due_monitors: 2 };
    deriveItemText(patched, cached);
    assert.equal(knownJsonText(patched, STATUS_ITEM_LEVEL), prettyJsonAt(patched, STATUS_ITEM_LEVEL));
    assert.match(knownJsonText(patched, STATUS_ITEM_LEVEL) ?? '', /"ready": false/);
    // A member dropped (undefined) is not spliced in: no text from the cache is claimed for the item.
    const dropped = { ...cached, quota: undefined };
    deriveItemText(dropped, cached);
    assert.equal(knownJsonText(dropped, STATUS_ITEM_LEVEL), undefined);
    // Keys in another order than the cached item's: not composed.
    const reordered = { tail: 'x', goal_id: 'g', handoff_readiness: cached.handoff_readiness, quota: null };
    deriveItemText(reordered, cached);
    assert.equal(knownJsonText(reordered, STATUS_ITEM_LEVEL), undefined);
    // An object status knows nothing of.
    assert.equal(knownJsonText({ ...cached }, STATUS_ITEM_LEVEL), undefined);
  });

  it('writeJsonPretty with the known texts prints the same bytes, and takes them', () => {
    const cached = { goal_id: 'g', list: [{ a: 1 }, { b: [2, 3] }], text: 'a "quoted"\nline' };
    const text = prettyJsonAt(cached, STATUS_ITEM_LEVEL) as string;
    setItemText(cached, text);
    const answer = { ...cached, quota: { state: 'ok' } };
    deriveItemText(answer, cached);
    const payload = { ok: true, attention_queue: { available: true, items: [answer, cached] }, run_history: {} };
    let asked = 0;
    let spliced = 0;
    let out = '';
    writeJsonPretty(payload, (piece) => (out += piece), {
      knownText: (value, level) => {
        asked++;
        const known = knownJsonText(value, level);
        if (known !== undefined) spliced++;
        return known;
      },
    });
    assert.equal(out, `${JSON.stringify(payload, null, 2)}\n`);
    assert.ok(asked >= 2);
    assert.equal(spliced, 2, 'both items were spliced');
  });

  describe('on a workspace (the demo), as `loopx status --format json` prints it', () => {
    const clock = fixedClock('2026-11-28T12:00:00Z');
    let dir: string;
    before(() => {
      dir = materializeDemoWorkspace(
        path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-item-text-'))), 'demo'),
      );
    });
    after(() => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));

    /** One status call as a fresh process makes it (a new in-memory cache), printed as the CLI prints it. */
    async function printed(at = clock): Promise<{ payload: StatusPayload; text: string; spliced: number }> {
      const registryPath = path.join(dir, '.loopx', 'registry.json');
      const payload = redactCredentialsShared(
        await loadStatusAt({
          registryPath,
          homeDir: dir,
          cache: new GoalStatusCache(),
          persistentCache: true,
          redact: true,
          quotaSummary: statusQuotaSummaries({ registryPath, clock: at, homeDir: dir }),
        }),
      );
      let text = '';
      let spliced = 0;
      writeJsonPretty(payload, (piece) => (text += piece), {
        knownText: (value, level) => {
          const known = knownJsonText(value, level);
          if (known !== undefined) spliced++;
          return known;
        },
      });
      return { payload, text, spliced };
    }

    it('cold, warm (items parsed from the persistent cache) and at a later time: the bytes of JSON.stringify, items spliced', async () => {
      const cold = await printed();
      assert.equal(cold.text, `${JSON.stringify(cold.payload, null, 2)}\n`);
      const goals = goalItems(cold.payload).length;
      assert.ok(goals >= 1);
      assert.equal(cold.spliced, goals, 'every goal item spliced');
      const warm = await printed();
      assert.equal(warm.text, cold.text);
      assert.equal(warm.spliced, goals);
      // Another time: the quota (answered per call) may differ; the text is still the payload's.
      const later = await printed(fixedClock('2026-12-05T08:00:00Z'));
      assert.equal(later.text, `${JSON.stringify(later.payload, null, 2)}\n`);
      assert.equal(later.spliced, goals);
    });
  });
});
