import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { build } from 'esbuild';
import { REPO_ROOT } from '../../support/demoWorkspace';

/** Bundles the CLI and the demo agent like the release build, into a private folder; returns cli.js. */
export async function buildCliBundle(): Promise<string> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-cli-bundle-'));
  const common = {
    bundle: true,
    platform: 'node' as const,
    target: 'node20',
    format: 'cjs' as const,
    logLevel: 'warning' as const,
    absWorkingDir: REPO_ROOT,
  };
  await build({
    ...common,
    entryPoints: [path.join(REPO_ROOT, 'src', 'cli', 'main.ts')],
    outfile: path.join(out, 'cli.js'),
  });
  await build({
    ...common,
    entryPoints: [path.join(REPO_ROOT, 'src', 'core', 'executors', 'demoAgentMain.ts')],
    outfile: path.join(out, 'demoAgent.js'),
  });
  return path.join(out, 'cli.js');
}

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <argv>` as a separate process with a minimal environment. */
export function runNode(argv: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, {
      cwd,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
