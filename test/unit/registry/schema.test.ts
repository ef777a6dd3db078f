import assert from 'node:assert/strict';
import { normalizeQuota, RegistryDocumentSchema, roundHalfEven } from '../../../src/core/registry/schema';

describe('registry schema', () => {
  describe('normalizeQuota', () => {
    it('defaults everything when there is no quota: compute 1, 24 h, 1-minute slots, 1440 slots', () => {
      assert.deepEqual(normalizeQuota({ id: 'g' }), {
        compute: 1,
        window_hours: 24,
        slot_minutes: 1,
        allowed_slots: 1440,
      });
      assert.deepEqual(normalizeQuota(null), { compute: 1, window_hours: 24, slot_minutes: 1, allowed_slots: 1440 });
      assert.deepEqual(normalizeQuota({ quota: 'weird' }), {
        compute: 1,
        window_hours: 24,
        slot_minutes: 1,
        allowed_slots: 1440,
      });
    });

    it('clamps compute to [0, 1] and keeps 0 (a paused goal)', () => {
      assert.equal(normalizeQuota({ quota: { compute: 1.7 } }).compute, 1);
      assert.equal(normalizeQuota({ quota: { compute: -0.3 } }).compute, 0);
      assert.deepEqual(normalizeQuota({ quota: { compute: 0 } }), {
        compute: 0,
        window_hours: 24,
        slot_minutes: 1,
        allowed_slots: 0,
      });
    });

    it('rounds compute to 2 decimals, half to even on exact ties like Python', () => {
      assert.equal(normalizeQuota({ quota: { compute: 0.333333 } }).compute, 0.33);
      assert.equal(normalizeQuota({ quota: { compute: 0.125 } }).compute, 0.12);
      assert.equal(normalizeQuota({ quota: { compute: 0.375 } }).compute, 0.38);
      // 2.675 is really 2.67499… in binary, so it rounds down (no tie).
      assert.equal(roundHalfEven(2.675, 2), 2.67);
      assert.equal(roundHalfEven(0.126, 2), 0.13);
    });

    it('derives allowed_slots as round(window·60/slot·compute), half to even', () => {
      assert.equal(normalizeQuota({ quota: { compute: 0.01, window_hours: 24 } }).allowed_slots, 14);
      assert.equal(normalizeQuota({ quota: { compute: 0.5 } }).allowed_slots, 720);
      assert.equal(normalizeQuota({ quota: { compute: 1, window_hours: 1, slot_minutes: 8 } }).allowed_slots, 8);
      assert.equal(roundHalfEven(2.5, 0), 2);
      assert.equal(roundHalfEven(3.5, 0), 4);
      // 1 h / 24-minute slots at 1.0 = 2.5 slots → 2 (Python rounding), not 3.
      assert.equal(normalizeQuota({ quota: { window_hours: 1, slot_minutes: 24 } }).allowed_slots, 2);
    });

    it('keeps an explicit allowed_slots (truncated, at least 0), including 0', () => {
      assert.equal(normalizeQuota({ quota: { allowed_slots: 0 } }).allowed_slots, 0);
      assert.equal(normalizeQuota({ quota: { allowed_slots: 12.9 } }).allowed_slots, 12);
      assert.equal(normalizeQuota({ quota: { allowed_slots: -3 } }).allowed_slots, 0);
    });

    it('makes window_hours and slot_minutes whole numbers of at least 1', () => {
      const quota = normalizeQuota({ quota: { window_hours: 0.5, slot_minutes: 0 } });
      assert.equal(quota.window_hours, 1);
      assert.equal(quota.slot_minutes, 1);
      assert.equal(normalizeQuota({ quota: { window_hours: 36.9 } }).window_hours, 36);
    });

    it('falls back to the defaults for booleans and unparsable values, and parses numeric strings', () => {
      assert.deepEqual(
        normalizeQuota({ quota: { compute: true, window_hours: 'soon', slot_minutes: false, allowed_slots: '' } }),
        { compute: 1, window_hours: 24, slot_minutes: 1, allowed_slots: 1440 },
      );
      assert.deepEqual(normalizeQuota({ quota: { compute: ' 0.5 ', window_hours: '12' } }), {
        compute: 0.5,
        window_hours: 12,
        slot_minutes: 1,
        allowed_slots: 360,
      });
      assert.equal(normalizeQuota({ quota: { compute: Number.NaN } }).compute, 1);
    });

    it('honors the legacy top-level compute_quota unless quota.compute is set', () => {
      assert.equal(normalizeQuota({ compute_quota: 0.25 }).compute, 0.25);
      assert.equal(normalizeQuota({ compute_quota: 0.25, quota: { window_hours: 24 } }).allowed_slots, 360);
      assert.equal(normalizeQuota({ compute_quota: 0.25, quota: { compute: 0.75 } }).compute, 0.75);
    });

    it('echoes a stored spent_slots only when present and parsable', () => {
      assert.deepEqual(normalizeQuota({ quota: { compute: 0.5, spent_slots: 0 } }), {
        compute: 0.5,
        window_hours: 24,
        slot_minutes: 1,
        allowed_slots: 720,
        spent_slots: 0,
      });
      assert.equal('spent_slots' in normalizeQuota({ quota: { spent_slots: 'many' } }), false);
    });
  });

  describe('RegistryDocumentSchema (reader view)', () => {
    it('treats a non-list goals as no goals and skips non-objects and id-less entries', () => {
      assert.deepEqual(RegistryDocumentSchema.parse({ goals: { a: 1 } }).goals, []);
      const doc = RegistryDocumentSchema.parse({
        goals: [{ id: 'a' }, 'junk', { domain: 'x' }, { id: '' }, { id: 0 }, { id: 7 }, { id: 'a' }],
      });
      assert.deepEqual(
        doc.goals.map((g) => g.id),
        ['a', '7', 'a'],
      );
    });

    it('passes unknown fields through and reads badly typed known fields as absent', () => {
      const doc = RegistryDocumentSchema.parse({
        extra: { keep: true },
        goals: [{ id: 'g', repo: 42, custom: [1], adapter: { kind: 'k', mine: 1 } }],
      });
      assert.deepEqual(doc['extra'], { keep: true });
      const goal = doc.goals[0];
      assert.ok(goal);
      assert.equal(goal.repo, undefined);
      assert.deepEqual(goal['custom'], [1]);
      assert.deepEqual(goal.adapter, { kind: 'k', mine: 1 });
    });
  });
});
