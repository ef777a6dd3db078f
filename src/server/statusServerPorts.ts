/**
 * Which port each registry's status server asks for: the first registry the configured port, the
 * next ones the ports after it (stable across restarts, so a dashboard's bookmark keeps working),
 * and `0` (a free port) when the setting is `0`, out of range, or runs past 65535.
 */
export function preferredStatusPort(configured: number, index: number, fallback: number): number {
  const base = Number.isInteger(configured) && configured >= 0 && configured <= 65535 ? configured : fallback;
  if (base === 0) return 0;
  const port = base + index;
  return port <= 65535 ? port : 0;
}

/**
 * The port to listen on now: a free one (`0`) chosen after the preferred port was busy is kept for
 * the session while the preferred port stays the same (another window holds the default port).
 */
export function portToListenOn(preferred: number, busy: ReadonlyMap<number, number>): number {
  return busy.get(preferred) ?? preferred;
}
