/**
 * Which code-server and Node the real-VS-Code tiers use, and where they are installed: the rule
 * scripts/setup-vscode-test.sh applies (a unit test runs its `--print-dirs` against this). The default pair keeps
 * its folders; another code-server version (LOOPX_CODE_SERVER_VERSION, 4.X.Y ships VS Code 1.X) or Node major
 * (LOOPX_CODE_SERVER_NODE) gets folders of its own, so the oldest-engine tier never overwrites the usual host.
 */
import { join } from 'node:path';

export const DEFAULT_CODE_SERVER_VERSION = '4.139.1';
export const DEFAULT_CODE_SERVER_NODE = '24';

export interface CodeServerInstall {
  version: string;
  nodeMajor: string;
  /** Holds node_modules/.bin/node. */
  nodeDir: string;
  /** Holds node_modules/.bin/code-server. */
  codeServerDir: string;
}

export function codeServerInstall(cacheDir: string, env: NodeJS.ProcessEnv = process.env): CodeServerInstall {
  const version = env['LOOPX_CODE_SERVER_VERSION'] || DEFAULT_CODE_SERVER_VERSION;
  const nodeMajor = env['LOOPX_CODE_SERVER_NODE'] || DEFAULT_CODE_SERVER_NODE;
  return {
    version,
    nodeMajor,
    nodeDir: join(cacheDir, nodeMajor === DEFAULT_CODE_SERVER_NODE ? 'node' : `node-${nodeMajor}`),
    codeServerDir: join(cacheDir, version === DEFAULT_CODE_SERVER_VERSION ? 'code-server' : `code-server-${version}`),
  };
}
