import { LoopxError } from './errors';

/**
 * Every reader of "now" in the control plane goes through a Clock, so tests and replays can
 * pin time. `LOOPX_NOW` (an ISO-8601 instant) pins it for the CLI and the extension alike.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export function fixedClock(instant: Date | string): Clock {
  const date = typeof instant === 'string' ? parseInstant(instant, 'clock') : instant;
  return { now: () => new Date(date.getTime()) };
}

function parseInstant(text: string, source: string): Date {
  const date = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(date.getTime())) {
    throw new LoopxError(
      'invalid_clock',
      `${source} must be an ISO-8601 instant such as 2026-01-31T12:00:00Z, got ${JSON.stringify(text)}.`,
      { source, value: text },
    );
  }
  return date;
}

/** The clock for this process: pinned by `LOOPX_NOW` when set, the system clock otherwise. */
export function clockFromEnv(env: NodeJS.ProcessEnv = process.env): Clock {
  const pinned = env['LOOPX_NOW'];
  if (pinned === undefined || pinned.trim() === '') return systemClock;
  return fixedClock(parseInstant(pinned.trim(), 'LOOPX_NOW'));
}

/** UTC timestamp in the original's style: seconds precision with a `Z` suffix. */
export function isoSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
