import * as path from 'node:path';

/**
 * Where this host's built-in demo agent is installed: set once by the composition root (the CLI's
 * main, the extension's activation), read when an executor is built. Kept apart from the executors
 * (and free of schemas) so that setting it costs a CLI process nothing it does not use.
 */

export const DEMO_AGENT_BUNDLE = 'demoAgent.js';

/**
 * How to start the bundled demo agent: the build writes src/core/executors/demoAgentMain.ts to
 * `<bundleDir>/demoAgent.js` (from source, run demoAgentMain.ts under tsx instead).
 */
export function demoAgentArgv(bundleDir: string): string[] {
  return [process.execPath, path.join(bundleDir, DEMO_AGENT_BUNDLE)];
}

let installedDemoAgentArgv: readonly string[] | undefined;

/**
 * How this host starts the built-in demo agent, set once by the composition root (the CLI's main,
 * the extension's activation): the only part of a host that knows where its bundles are installed.
 * Returns the previous setting.
 */
export function installDemoAgent(argv: readonly string[] | undefined): readonly string[] | undefined {
  const previous = installedDemoAgentArgv;
  installedDemoAgentArgv = argv === undefined ? undefined : [...argv];
  return previous;
}

/** The installed demo agent's argv, or undefined when none is installed. */
export function installedDemoAgent(): readonly string[] | undefined {
  return installedDemoAgentArgv;
}
