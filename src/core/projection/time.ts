const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/iu;

/**
 * Milliseconds since the epoch of an ISO-8601 timestamp as the original writes them
 * (`2026-06-22T00:01:00+00:00`, `…Z`, fractional seconds, date only), or null when it does not parse.
 * A timestamp without an offset is read as UTC, so results never depend on the machine's time zone.
 */
export function parseIsoInstant(text: string | null | undefined): number | null {
  if (typeof text !== 'string') return null;
  const match = ISO_INSTANT.exec(text.trim());
  if (match === null) return null;
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', offset = 'Z'] = match;
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3));
  const utc = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second), millis);
  const date = new Date(utc);
  // Reject impossible calendar values (2026-02-31, 25:00) instead of letting Date roll them over.
  if (date.getUTCMonth() !== Number(month) - 1 || date.getUTCDate() !== Number(day) || Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) {
    return null;
  }
  return utc - offsetMinutes(offset) * 60_000;
}

function offsetMinutes(offset: string): number {
  if (offset.toUpperCase() === 'Z') return 0;
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0'));
}
