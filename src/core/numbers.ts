import type { LoopxErrorCode } from './errorCodes';
import { LoopxError } from './errors';

/**
 * The one strict reader of numbers given as text (CLI options, string fields of API calls).
 * `Number()` accepts far too much: `0x10` is 16, `1e3` is 1000, `' 7 '` is 7, `''` is 0 and `-0`
 * survives as a value that reads back unequal. Only plain decimal is accepted here.
 */

export interface DecimalSpec {
  /** Whole numbers only. */
  integer?: boolean;
  min?: number;
  /** The minimum itself is not allowed (`> min`). */
  minExclusive?: boolean;
  max?: number;
}

/** Optional minus, no leading zeros, optional fraction: `0`, `12`, `0.25`, `-3`. */
const DECIMAL = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

function describe(spec: DecimalSpec): string {
  const kind = spec.integer === true ? 'a whole number' : 'a number';
  const { min, max } = spec;
  if (min !== undefined && max !== undefined && spec.minExclusive !== true) return `${kind} from ${min} to ${max}`;
  const parts: string[] = [];
  if (min !== undefined) parts.push(spec.minExclusive === true ? `greater than ${min}` : `at least ${min}`);
  if (max !== undefined) parts.push(`at most ${max}`);
  return parts.length === 0 ? kind : `${kind} ${parts.join(' and ')}`;
}

/**
 * Parses `raw` as plain decimal within `spec`, else throws LoopxError `code` naming `flag`, the
 * value given and the accepted form.
 */
export function parseDecimal(
  raw: string,
  flag: string,
  spec: DecimalSpec = {},
  code: LoopxErrorCode = 'usage',
): number {
  const fail = (why: string): LoopxError =>
    new LoopxError(code, `${flag} must be ${describe(spec)}, got ${JSON.stringify(raw)}${why}`, {
      field: flag,
      value: raw,
    });
  if (!DECIMAL.test(raw)) {
    throw fail(
      `: write it in plain decimal digits, such as ${spec.integer === true ? '3' : '3 or 0.5'} (no hex, exponent, spaces or leading zeros)`,
    );
  }
  const value = Number(raw);
  if (Object.is(value, -0)) throw fail(': -0 is not a number LoopX stores; write 0');
  if (!Number.isFinite(value)) throw fail('');
  if (spec.integer === true && (!Number.isSafeInteger(value) || raw.includes('.'))) throw fail('');
  if (spec.min !== undefined && (spec.minExclusive === true ? value <= spec.min : value < spec.min)) throw fail('');
  if (spec.max !== undefined && value > spec.max) throw fail('');
  return value;
}
