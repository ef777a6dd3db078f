/**
 * The order of the status payload's items and run history (the original's `discover_goal_ids`: `sorted` over the
 * registry's goal ids, so code-point order; a repeated id once). Runtime goals outside the registry are listed by
 * the original only when the registry asked for is its global registry; ours lists the registry's goals only.
 * The editor's trees keep their own order (the workspace read model's).
 */
const SURROGATE = /[\uD800-\uDFFF]/; // code units: no `u` flag

export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  // Without surrogates UTF-16 order is code-point order.
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : 1;
  const ca = Array.from(a);
  const cb = Array.from(b);
  for (let i = 0; i < Math.min(ca.length, cb.length); i++) {
    const x = ca[i]!.codePointAt(0)!;
    const y = cb[i]!.codePointAt(0)!;
    if (x !== y) return x - y;
  }
  return ca.length - cb.length;
}

export function byGoalId(a: { goalId: string }, b: { goalId: string }): number {
  return compareCodePoints(a.goalId, b.goalId);
}
