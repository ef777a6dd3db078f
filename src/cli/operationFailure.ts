import type { LoopxError } from '../core/errors';

/** A failed operation with the fields its original prints beside `error` in the JSON failure. */
export class OperationFailure extends Error {
  constructor(
    readonly failure: LoopxError,
    readonly fields: Record<string, unknown>,
  ) {
    super(failure.message);
    this.name = 'OperationFailure';
  }
}
