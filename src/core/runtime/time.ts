/**
 * Timestamps of runtime files. Run records carry LOCAL time with its UTC offset at seconds
 * precision (`2026-01-01T12:00:00+08:00`), as the original writes `generated_at`; archive folder
 * names carry a compact UTC stamp (`20260101T040000Z`).
 */

const pad = (value: number, width = 2): string => String(Math.trunc(value)).padStart(width, '0');

/**
 * `date` as local ISO time with offset, seconds precision. `utcOffsetMinutes` defaults to this
 * machine's offset at that instant (east of UTC is positive, e.g. +480 for UTC+8).
 */
export function formatLocalIsoSeconds(date: Date, utcOffsetMinutes: number = -date.getTimezoneOffset()): string {
  const shifted = new Date(date.getTime() + utcOffsetMinutes * 60_000);
  const sign = utcOffsetMinutes < 0 ? '-' : '+';
  const absolute = Math.abs(utcOffsetMinutes);
  return (
    `${pad(shifted.getUTCFullYear(), 4)}-${pad(shifted.getUTCMonth() + 1)}-${pad(shifted.getUTCDate())}` +
    `T${pad(shifted.getUTCHours())}:${pad(shifted.getUTCMinutes())}:${pad(shifted.getUTCSeconds())}` +
    `${sign}${pad(absolute / 60)}:${pad(absolute % 60)}`
  );
}

/** `YYYYMMDDTHHMMSSZ` in UTC, the suffix of archived runtime goal folders. */
export function compactUtcStamp(date: Date): string {
  return (
    `${pad(date.getUTCFullYear(), 4)}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}` +
    `T${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}Z`
  );
}
