/**
 * Opens VS Code on the demo workspace with the packaged extension installed:
 * desktop `code` when it is on PATH, otherwise code-server on 127.0.0.1 with a printed URL.
 * Options: --reset (fresh copy of the demo workspace), --port N (code-server port, default 8733),
 * --code-server (use code-server even when `code` exists). Ctrl+C stops what it started.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { materializeDemoWorkspace, REPO_ROOT } from '../test/support/demoWorkspace';
import { ensureVscodeTestHost, installVsix, startCodeServer } from '../test/support/vscodeHost';

const args = process.argv.slice(2);
const reset = args.includes('--reset');
const forceCodeServer = args.includes('--code-server');
const portArg = args[args.indexOf('--port') + 1];
const requestedPort =
  args.includes('--port') && portArg ? Number(portArg) : Number(process.env['LOOPX_DEMO_PORT'] ?? 8733);

function log(message: string): void {
  console.log(`[start] ${message}`);
}

function hasDesktopCode(): boolean {
  return spawnSync('code', ['--version'], { stdio: 'ignore' }).status === 0;
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function main(): Promise<void> {
  log('building and packaging the extension…');
  const vsix =
    execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'package.mjs')], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    })
      .trim()
      .split('\n')
      .pop() ?? '';
  const demoRoot = join(REPO_ROOT, '.demo');
  const workspace = materializeDemoWorkspace(join(demoRoot, 'workspace'), { replace: reset });
  log(`demo workspace: ${workspace}${reset ? ' (fresh copy)' : ' (kept; pass --reset for a fresh copy)'}`);

  if (!forceCodeServer && hasDesktopCode()) {
    log('installing into desktop VS Code and opening the demo workspace…');
    execFileSync('code', ['--install-extension', vsix, '--force'], { stdio: 'inherit' });
    execFileSync('code', [workspace], { stdio: 'inherit' });
    return;
  }

  log('no desktop VS Code on PATH: using code-server (installed once into .vscode-test/)');
  ensureVscodeTestHost();
  const extensionsDir = join(demoRoot, 'extensions');
  mkdirSync(extensionsDir, { recursive: true });
  installVsix(vsix, extensionsDir);
  const port = (await portIsFree(requestedPort)) ? requestedPort : 0;
  if (port === 0) log(`port ${requestedPort} is in use; picking a free one (use --port N to choose)`);
  const server = await startCodeServer({
    workspace,
    extensionsDir,
    port,
    rootDir: join(demoRoot, 'host'),
    keepDirs: true,
  });
  const url = `${server.url}/?folder=${encodeURIComponent(workspace)}`;
  console.log(
    `\n  LoopX demo is running in VS Code (code-server ${server.url}, bound to 127.0.0.1 only).\n\n  Open: ${url}\n\n  Press Ctrl+C to stop.\n`,
  );

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log('stopping code-server…');
    await server.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  server.process.once('exit', (code) => {
    if (!stopping) {
      log(`code-server exited (${code ?? 'signal'})`);
      process.exit(1);
    }
  });
}

main().catch((error: unknown) => {
  console.error(`[start] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
