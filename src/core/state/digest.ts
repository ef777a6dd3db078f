import { createHash } from 'node:crypto';

/** First 16 hex digits of SHA-256 over the file's text exactly as written (UTF-8). */
export function stateDigest16(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
}
