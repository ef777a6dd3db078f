import * as fs from 'node:fs';
import * as path from 'node:path';
import { clockFromEnv, type Clock } from '../clock';
import { DEMO_AGENT_BUNDLE, demoAgentArgv, installDemoAgent } from '../executors/installedDemoAgent';

/**
 * What a host's composition root (the CLI's main, the extension's activation) sets up once before
 * any operation runs: where the built-in demo agent is installed, and the clock its operations see
 * (`OperationEnvironment.clock`). Operations never take the demo agent as an argument. This module
 * loads nothing else: the CLI calls it on every start, whatever the command.
 */

/**
 * The demo agent is the bundle `demoAgent.js` in `bundleDir`; when that bundle is absent (run from
 * source), `fallback` says how to start it instead, or nothing when the demo agent is unavailable.
 */
export function installDemoAgentFrom(bundleDir: string, fallback?: () => readonly string[] | undefined): void {
  installDemoAgent(fs.existsSync(path.join(bundleDir, DEMO_AGENT_BUNDLE)) ? demoAgentArgv(bundleDir) : fallback?.());
}

/**
 * The clock a host hands its operations: pinned by `LOOPX_NOW` in `env` (an ISO-8601 instant; any
 * other value is an `invalid_clock` error) when set, the system clock otherwise. An `env` without
 * `LOOPX_NOW` (e.g. `{}`) always gives the system clock.
 */
export function hostClock(env: NodeJS.ProcessEnv = process.env): Clock {
  return clockFromEnv(env);
}
