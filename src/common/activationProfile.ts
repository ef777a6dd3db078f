import { writeFileSync } from 'node:fs';

/**
 * A CPU profile of the extension host from `activate()` until every goal's status is read, written
 * to the file `$LOOPX_PROFILE_ACTIVATION` names (open it in Chrome DevTools, or summarize it with
 * `node scripts/cpuprofile-top.mjs`). For finding what a slow start spends its time on: the
 * benchmark's own code runs only after LoopX has activated. Returns the stop, or undefined when unset.
 */
export function startActivationProfile(): (() => void) | undefined {
  const file = process.env['LOOPX_PROFILE_ACTIVATION'];
  if (file === undefined || file === '') return undefined;
  // Loaded only when asked for: the inspector module costs every other start a few milliseconds.
  const { Session } = process.getBuiltinModule('node:inspector');
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 100 });
  session.post('Profiler.start');
  return () =>
    session.post('Profiler.stop', (error, result) => {
      if (error === null) writeFileSync(file, JSON.stringify(result.profile));
      session.disconnect();
    });
}
