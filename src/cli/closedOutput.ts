/**
 * Output into a reader that stops early (`loopx status | head`): the pipe's write fails with EPIPE,
 * which Node reports as an 'error' event and, unheard, as a crash with a stack trace. LoopX treats a
 * closed stdout or stderr as "nobody wants the rest": further output is dropped, the command finishes
 * what it was doing (a write it started is not cut short) and the process exits with the command's own
 * code, 0 on success, as ripgrep does (docs/reliability.md#output-into-a-closed-pipe).
 */

/** Error codes that mean the reader of a stream went away. */
const READER_GONE = new Set(['EPIPE', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END']);

/** A writer of `text` to `stream` that ends quietly when its reader goes away; other errors still surface. */
export function guardedOutput(stream: NodeJS.WritableStream): { write: (text: string) => void } {
  let gone = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== undefined && READER_GONE.has(error.code)) {
      gone = true;
      return;
    }
    throw error;
  });
  return {
    write: (text) => {
      if (gone) return;
      stream.write(text);
    },
  };
}
