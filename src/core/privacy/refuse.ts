import type { LoopxErrorCode } from '../errorCodes';
import { LoopxError } from '../errors';
import { findCredentials } from './scrub';

/**
 * Refusal of credentials in text a person or an agent writes into durable state (the state file,
 * the registry, run records). It uses the scrubber's own detector, so what is refused here is
 * exactly what the scrubber would redact as a credential. The value itself never appears in the
 * error: only the field and the kinds found.
 */

/** The message for a field (empty: the caller names it) holding credentials of the given kinds. */
export function credentialMessage(field: string, kinds: readonly string[]): string {
  const subject = field === '' ? '' : `${field} `;
  return `${subject}holds a credential (${kinds.join(', ')}); remove the secret and try again: LoopX refuses credentials in anything it writes to durable state (state files, registry, run records)`;
}

/**
 * Throws `LoopxError(code)` naming the first field whose text holds a credential. `fields` maps a
 * field's name as the user knows it (`--next-action`, `evidence`) to its text; absent ones are skipped.
 */
export function refuseCredentials(
  fields: Readonly<Record<string, string | null | undefined>>,
  code: LoopxErrorCode = 'credential_refused',
): void {
  for (const [field, text] of Object.entries(fields)) {
    if (typeof text !== 'string' || text === '') continue;
    const kinds = findCredentials(text);
    if (kinds.length > 0)
      throw new LoopxError(code, credentialMessage(field, kinds), { field, credential_kinds: kinds });
  }
}
