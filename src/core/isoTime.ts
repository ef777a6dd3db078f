const ISO_INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/iu;

/**
 * Milliseconds since the epoch of an ISO-8601 timestamp as the original writes them
 * (`2026-06-22T00:01:00+00:00`, `…Z`, fractional seconds, date only), or null when it does not parse.
 * A timestamp without an offset is read as UTC, so results never depend on the machine's time zone.
 */
export function parseIsoInstant(text: string | null | undefined): number | null {
  if (typeof text !== 'string') return null;
  const fast = parseCanonicalInstant(text);
  if (fast !== undefined) return fast;
  const match = ISO_INSTANT.exec(text.trim());
  if (match === null) return null;
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', offset = 'Z'] = match;
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3));
  const utc = Date.UTC(
    Number(year),
    Number(month) - 1,
    Number(day),
    Number(hour),
    Number(minute),
    Number(second),
    millis,
  );
  const date = new Date(utc);
  // Reject impossible calendar values (2026-02-31, 25:00) instead of letting Date roll them over.
  if (
    date.getUTCMonth() !== Number(month) - 1 ||
    date.getUTCDate() !== Number(day) ||
    Number(hour) > 23 ||
    Number(minute) > 59 ||
    Number(second) > 59
  ) {
    return null;
  }
  return utc - offsetMinutes(offset) * 60_000;
}

/** Value of the two ASCII digits at `at`, or -1 when either is not a digit. */
function twoDigits(text: string, at: number): number {
  const high = text.charCodeAt(at) - 48;
  const low = text.charCodeAt(at + 1) - 48;
  return high >= 0 && high <= 9 && low >= 0 && low <= 9 ? high * 10 + low : -1;
}

/**
 * The common shape `YYYY-MM-DDTHH:MM:SS` + `Z` or `±HH:MM` (every timestamp LoopX writes), read
 * without the regular expression: run indexes hold one per row. Same result as the general path;
 * undefined for any other shape, which then takes the general path.
 */
function parseCanonicalInstant(text: string): number | null | undefined {
  const length = text.length;
  if (length !== 20 && length !== 25) return undefined;
  if (
    text.charCodeAt(4) !== 45 ||
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 84 ||
    text.charCodeAt(13) !== 58 ||
    text.charCodeAt(16) !== 58
  )
    return undefined;
  const century = twoDigits(text, 0);
  const yearInCentury = twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  if (century < 0 || yearInCentury < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0)
    return undefined;
  let offset = 0;
  if (length === 20) {
    if (text.charCodeAt(19) !== 90) return undefined;
  } else {
    const sign = text.charCodeAt(19);
    const offsetHours = twoDigits(text, 20);
    const offsetMins = twoDigits(text, 23);
    if ((sign !== 43 && sign !== 45) || text.charCodeAt(22) !== 58 || offsetHours < 0 || offsetMins < 0)
      return undefined;
    offset = (sign === 45 ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const year = century * 100 + yearInCentury;
  // The general path's check (no calendar roll-over) without building a Date; Date.UTC reads years 0–99 as 1900–1999.
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysInMonth(year < 100 ? 1900 + year : year, month) ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  )
    return null;
  return Date.UTC(year, month - 1, day, hour, minute, second, 0) - offset * 60_000;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  if (month === 2 && ((year % 4 === 0 && year % 100 !== 0) || year % 400 === 0)) return 29;
  return DAYS_IN_MONTH[month - 1] as number;
}

function offsetMinutes(offset: string): number {
  if (offset.toUpperCase() === 'Z') return 0;
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0'));
}
