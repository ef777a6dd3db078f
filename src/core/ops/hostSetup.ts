import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEMO_AGENT_BUNDLE, demoAgentArgv, installDemoAgent } from '../executors/installedDemoAgent';

/**
 * What a host's composition root (the CLI's main, the extension's activation) sets up once before
 * any operation runs: where the built-in demo agent is installed. Operations never take it as an
 * argument. This module loads nothing else: the CLI calls it on every start, whatever the command.
 */

/**
 * The demo agent is the bundle `demoAgent.js` in `bundleDir`; when that bundle is absent (run from
 * source), `fallback` says how to start it instead, or nothing when the demo agent is unavailable.
 */
export function installDemoAgentFrom(bundleDir: string, fallback?: () => readonly string[] | undefined): void {
  installDemoAgent(fs.existsSync(path.join(bundleDir, DEMO_AGENT_BUNDLE)) ? demoAgentArgv(bundleDir) : fallback?.());
}
