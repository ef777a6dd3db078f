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

/**
 * A write refused by a read-only file system (EROFS) as a clear error instead of an internal one:
 * inside Codex's `workspace-write` sandbox the project's `.codex/` (a goal's default state folder)
 * is read-only to the commands the agent runs, `loopx` among them. Anything else is returned as is.
 */
export function withReadOnlyHint(error: unknown): unknown {
  if (isLoopxError(error) || !(error instanceof Error)) return error;
  const errno = error as NodeJS.ErrnoException;
  if (errno.code !== 'EROFS') return error;
  const where = errno.path === undefined ? 'a LoopX file' : errno.path;
  return new LoopxError(
    'read_only_file_system',
    `cannot write ${where}: the file system is read-only here (EROFS). Inside Codex's workspace-write sandbox the project's .codex/ folder is read-only: run the turn through LoopX (loopx turn run-once gives Codex the goal's state and runtime folders as writable roots, --add-dir), or start Codex with --add-dir <that folder> (docs/executors.md#codex-and-its-sandbox)`,
    { path: errno.path ?? null, syscall: errno.syscall ?? null },
  );
}
