import { LoopxError } from '../core/errors';
import { numberFromText, type DecimalSpec } from '../core/ops/fields';

/**
 * A numeric CLI option read strictly (plain decimal, range checked): undefined when the option is
 * absent, a usage error (exit 2) naming the option for anything else that is not a valid number,
 * the empty string included.
 */
export function numericOption(
  options: Record<string, unknown>,
  key: string,
  flag: string,
  spec: DecimalSpec,
): number | undefined {
  const raw = options[key];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw new LoopxError('usage', `${flag} needs a value`, { field: flag });
  return numberFromText(raw, flag, spec);
}
