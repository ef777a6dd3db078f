/**
 * Polling for tests that wait on another process, a watcher or the extension host: the one copy every suite
 * imports. A timeout here fails the test with what it waited for; it never measures speed.
 */

/** How long a wait lasts by default before the test fails: generous, so a loaded machine does not fail it. */
export const DEFAULT_WAIT_MS = 30_000;

/**
 * Calls `probe` every `intervalMs` until it returns something other than `undefined`, and returns that; throws
 * "timed out waiting for <what>" after `timeoutMs`.
 */
export async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = DEFAULT_WAIT_MS,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Like `waitFor`, for a yes/no condition: resolves once `check` is true. */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = DEFAULT_WAIT_MS,
  intervalMs = 100,
): Promise<void> {
  await waitFor(async () => ((await check()) ? true : undefined), what, timeoutMs, intervalMs);
}
