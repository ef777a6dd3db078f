import { parseIsoInstant } from './isoTime';

/**
 * Numbers and times as the original LoopX (Python) writes them in its status reports, so ours are equal value for
 * value: `round(x, n)` (half to even on exact ties), a float's `str()`, and a parsed timestamp's `isoformat()` in UTC.
 */

/** Python's `round(x, digits)` for a float: the nearest decimal, an exact tie to the even digit. */
export function pyRound(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  // An exact binary tie at `digits` decimals is an odd multiple of 2^-(digits+1) (10^d = 2^d·5^d).
  const scaled = x * 2 ** (digits + 1);
  if (Number.isInteger(scaled) && Math.abs(scaled % 2) === 1) {
    const shifted = x * 10 ** digits;
    const lower = Math.floor(shifted);
    const even = lower % 2 === 0 ? lower : lower + 1;
    return even / 10 ** digits;
  }
  return Number(x.toFixed(digits));
}

/** Python's `str()` of a float (`26.0`, `1.5`). */
export function pyFloatStr(x: number): string {
  return Number.isInteger(x) && Math.abs(x) < 1e16 ? `${x}.0` : String(x);
}

/** A timestamp as the original reads one (`parse_timestamp`): microseconds since the epoch, or null. */
export interface PyInstant {
  /** Microseconds since the epoch (UTC). */
  us: number;
  /** `isoformat()` of the instant in UTC (`2026-06-22T00:01:00+00:00`, `.ffffff` when it has microseconds). */
  iso: string;
}

const FRACTION = /[T ]\d{2}:\d{2}(?::\d{2})?\.(\d+)/;

export function pyInstant(value: unknown): PyInstant | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  const ms = parseIsoInstant(value.trim());
  if (ms === null) return null;
  const fraction = FRACTION.exec(value)?.[1] ?? '';
  const micros = Number(fraction.padEnd(6, '0').slice(0, 6));
  const seconds = Math.floor(ms / 1000);
  const us = seconds * 1_000_000 + micros;
  return { us, iso: isoOfMicros(us) };
}

/** `datetime.isoformat()` of an instant in UTC, from microseconds since the epoch. */
export function isoOfMicros(us: number): string {
  const seconds = Math.floor(us / 1_000_000);
  const micros = us - seconds * 1_000_000;
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  return `${base}${micros === 0 ? '' : `.${String(micros).padStart(6, '0')}`}+00:00`;
}

/** Python's `str(value or "")` for the JSON values a row holds. */
export function pyText(value: unknown): string {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return '';
  if (value === true) return 'True';
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : JSON.stringify(value);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Python's truthiness of a JSON value. */
export function truthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}
