/**
 * The order of the status payload's items and run history (the original's `discover_goal_ids`: `sorted` over the
 * registry's goal ids, so code-point order; a repeated id once). Runtime goals outside the registry are listed by
 * the original only when the registry asked for is its global registry; ours lists the registry's goals only.
 * The editor's trees keep their own order (the workspace read model's).
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
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
