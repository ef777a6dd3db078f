import type { LoopxErrorCode } from './errorCodes';

/**
 * The one error type the control plane throws on purpose. `code` is stable and
 * machine-readable (callers branch on it); `message` says what went wrong and how to fix it;
 * `details` carries the structured facts (file, field, holder of a lock, …). The codes are listed
 * in errorCodes.ts.
 */
export class LoopxError extends Error {
  override readonly name = 'LoopxError';
  constructor(
    readonly code: LoopxErrorCode,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }

  toJSON(): { code: LoopxErrorCode; message: string; details: Readonly<Record<string, unknown>> } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

export function isLoopxError(value: unknown, code?: LoopxErrorCode): value is LoopxError {
  return value instanceof LoopxError && (code === undefined || value.code === code);
}

/** Best-effort message of anything thrown, for logs and error replies. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
