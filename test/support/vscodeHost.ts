/**
 * Starts a real VS Code (code-server's server + web workbench) and drives it with Chromium,
 * following ../shared/docs/real-vscode-testing.md. Used by the integration driver, the VSIX
 * check, the UI end-to-end tests and `npm start`.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { npmChildEnv } from '../../scripts/npm-env.cjs';
import { codeServerInstall } from './codeServerInstall';
import { REPO_ROOT } from './demoWorkspace';

export const CACHE_DIR = process.env['LOOPX_VSCODE_TEST_CACHE'] || join(REPO_ROOT, '.vscode-test');
/** The code-server (and its Node) this run uses: LOOPX_CODE_SERVER_VERSION / LOOPX_CODE_SERVER_NODE, else the default. */
export const CODE_SERVER = codeServerInstall(CACHE_DIR);
const NODE_BIN_DIR = join(CODE_SERVER.nodeDir, 'node_modules', '.bin');
const CODE_SERVER_BIN = join(CODE_SERVER.codeServerDir, 'node_modules', '.bin', 'code-server');
export const CHROMIUM_PATH = process.env['LOOPX_CHROMIUM'] ?? '/usr/bin/chromium';

const verbose = process.env['VERBOSE'] === '1';

/** Installs Chromium, Node and code-server (CODE_SERVER) into .vscode-test once (a no-op when cached). */
export function ensureVscodeTestHost(): void {
  if (existsSync(CODE_SERVER_BIN) && existsSync(CHROMIUM_PATH)) return;
  const result = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'setup-vscode-test.sh')], {
    stdio: 'inherit',
    env: npmChildEnv(process.env, {
      LOOPX_VSCODE_TEST_CACHE: CACHE_DIR,
      LOOPX_CODE_SERVER_VERSION: CODE_SERVER.version,
      LOOPX_CODE_SERVER_NODE: CODE_SERVER.nodeMajor,
    }),
  });
  if (result.status !== 0) throw new Error('scripts/setup-vscode-test.sh failed');
}

export interface CodeServer {
  url: string;
  port: number;
  process: ChildProcess;
  dirs: { root: string; userData: string; extensions: string };
  log: () => string;
  stop: () => Promise<void>;
}

export interface CodeServerOptions {
  workspace: string;
  host?: string;
  port?: number;
  extensionsDir?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * Workspace trust on (the folder opens untrusted, in restricted mode, with no startup prompt)
   * instead of the default `--disable-workspace-trust`.
   */
  untrusted?: boolean;
  /** More user settings for this run. */
  settings?: Record<string, unknown>;
  /**
   * The display language (`--locale`, e.g. `zh-cn`): what `vscode.env.language` says, so extensions load their
   * package.nls.<language>.json and l10n bundles. See `writeEmptyLanguagePack`.
   */
  locale?: string;
  /** Keeps the user-data/extensions folders after stop (for `npm start`). */
  keepDirs?: boolean;
  rootDir?: string;
  /** A command that starts code-server (which it `exec`s), e.g. `nsenter --net=<ns>` to run it in a network namespace. */
  launcher?: readonly string[];
}

/** code-server's environment: without the outer npm's variables, which would reach its terminals and tasks. */
function codeServerEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return npmChildEnv(process.env, { ...extra, PATH: `${NODE_BIN_DIR}:${extra['PATH'] ?? process.env['PATH'] ?? ''}` });
}

export function writeQuietSettings(userDataDir: string, extra: Record<string, unknown> = {}): void {
  const userDir = join(userDataDir, 'User');
  mkdirSync(userDir, { recursive: true });
  writeFileSync(
    join(userDir, 'settings.json'),
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'workbench.welcomePage.walkthroughs.openOnInstall': false,
        'telemetry.telemetryLevel': 'off',
        'extensions.autoUpdate': false,
        'extensions.autoCheckUpdates': false,
        'update.mode': 'none',
        'chat.disableAIFeatures': true,
        'chat.commandCenter.enabled': false,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        'security.workspace.trust.enabled': false,
        'git.enabled': false,
        ...extra,
      },
      null,
      2,
    ),
  );
}

let vscodeOptionFlag: boolean | undefined;
/**
 * Whether this code-server takes `--vscode-option` (recent releases; 4.90 refuses it as unknown). Without it the
 * smoke-test driver stays off, which the suites do not need: the workbench reports the end of an extension
 * test run (`codeAutomationExit`) and refuses dialogs in a test run either way.
 */
function passesVscodeOptions(): boolean {
  vscodeOptionFlag ??= spawnSync(CODE_SERVER_BIN, ['--help'], {
    encoding: 'utf8',
    env: codeServerEnv(),
  }).stdout.includes('--vscode-option');
  return vscodeOptionFlag;
}

/**
 * The VS Code server takes `--locale` only for a language that a language pack provides: it looks the language up in
 * `<user data>/languagepacks.json` (which installing a pack writes) and otherwise falls back to English. The real packs
 * cannot be downloaded here, so this writes that entry for a pack with no translations: the workbench's own texts stay
 * English, while `vscode.env.language` is `locale` and extensions show their own translations.
 */
function writeEmptyLanguagePack(root: string, userData: string, locale: string): void {
  const translations = join(root, 'language-pack', 'main.i18n.json');
  mkdirSync(dirname(translations), { recursive: true });
  writeFileSync(translations, JSON.stringify({ version: '1.0.0', contents: {} }));
  mkdirSync(userData, { recursive: true });
  writeFileSync(
    join(userData, 'languagepacks.json'),
    JSON.stringify({
      [locale]: {
        hash: `loopx-test-${locale}`,
        extensions: [{ extensionIdentifier: { id: `loopx-tests.language-pack-${locale}` }, version: '0.0.1' }],
        translations: { vscode: translations },
        label: locale,
      },
    }),
  );
}

export async function startCodeServer(options: CodeServerOptions): Promise<CodeServer> {
  ensureVscodeTestHost();
  const root = options.rootDir ?? mkdtempSync(join(tmpdir(), 'loopx-vscode-'));
  const userData = join(root, 'user-data');
  const extensions = options.extensionsDir ?? join(root, 'extensions');
  mkdirSync(extensions, { recursive: true });
  writeQuietSettings(userData, {
    ...(options.untrusted
      ? {
          'security.workspace.trust.enabled': true,
          'security.workspace.trust.startupPrompt': 'never',
          'security.workspace.trust.banner': 'never',
        }
      : {}),
    ...options.settings,
  });
  if (options.locale && !options.locale.startsWith('en')) writeEmptyLanguagePack(root, userData, options.locale);
  const configFile = join(root, 'code-server.yaml');
  writeFileSync(configFile, 'auth: none\ncert: false\n');
  const host = options.host ?? '127.0.0.1';
  const args = [
    '--config',
    configFile,
    '--auth',
    'none',
    '--bind-addr',
    `${host}:${options.port ?? 0}`,
    '--disable-telemetry',
    '--disable-update-check',
    ...(options.untrusted ? [] : ['--disable-workspace-trust']),
    '--disable-getting-started-override',
    '--ignore-last-opened',
    ...(options.locale ? ['--locale', options.locale] : []),
    '--user-data-dir',
    userData,
    '--extensions-dir',
    extensions,
    ...(passesVscodeOptions() ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
    options.workspace,
  ];
  const [program, ...programArgs] = [...(options.launcher ?? []), CODE_SERVER_BIN, ...args] as [string, ...string[]];
  const child = spawn(program, programArgs, {
    detached: true,
    env: codeServerEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`code-server did not start within 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (verbose) process.stderr.write(chunk);
      const match = /HTTP server listening on (http:\/\/[^\s/]+)\/?/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolvePromise(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`code-server exited with ${code}:\n${output}`));
    });
  });
  const port = Number(new URL(url).port);
  return {
    url,
    port,
    process: child,
    dirs: { root, userData, extensions },
    log: () => output,
    stop: async () => {
      await killGroup(child);
      if (!options.keepDirs && !process.env['KEEP_TMP']) rmSync(root, { recursive: true, force: true });
    },
  };
}

async function killGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null) return;
  const exited = new Promise<void>((resolvePromise) => child.once('exit', () => resolvePromise()));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const timeout = new Promise<'timeout'>((resolvePromise) => setTimeout(() => resolvePromise('timeout'), 5000));
  if ((await Promise.race([exited, timeout])) === 'timeout') {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

/** Installs a .vsix into an extensions folder the way a user would. */
export function installVsix(vsixPath: string, extensionsDir: string): void {
  ensureVscodeTestHost();
  const result = spawnSync(
    CODE_SERVER_BIN,
    ['--extensions-dir', extensionsDir, '--install-extension', vsixPath, '--force'],
    { env: codeServerEnv(), encoding: 'utf8' },
  );
  if (result.status !== 0)
    throw new Error(`code-server --install-extension failed:\n${result.stdout}\n${result.stderr}`);
}

/** Packages a test extension folder (e.g. test/integration/lm-provider) as a .vsix in `scratch`. */
export function packageTestExtension(folder: string, scratch: string): string {
  const staging = join(scratch, 'staging');
  cpSync(folder, staging, { recursive: true });
  writeFileSync(join(staging, 'LICENSE'), 'MIT (test fixture)\n');
  const vsix = join(scratch, 'test-extension.vsix');
  execFileSync(
    process.execPath,
    [
      join(REPO_ROOT, 'node_modules', '@vscode', 'vsce', 'vsce'),
      'package',
      '--no-dependencies',
      '--allow-missing-repository',
      '--skip-license',
      '-o',
      vsix,
    ],
    { cwd: staging, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return vsix;
}

/** Headless Chromium; `executablePath` may be a wrapper that starts it elsewhere (in a network namespace). */
export async function launchChromium(executablePath: string = CHROMIUM_PATH): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

export function remoteUri(server: CodeServer, absolutePath: string): string {
  return `vscode-remote://127.0.0.1:${server.port}${absolutePath}`;
}

/** The workbench on a folder, or on a multi-root workspace when `folder` is a `.code-workspace` file. */
export function workbenchUrl(server: CodeServer, folder: string, payload: [string, string][]): string {
  const query = new URLSearchParams({
    [folder.endsWith('.code-workspace') ? 'workspace' : 'folder']: folder,
    payload: JSON.stringify([...payload, ['skipWelcome', 'true'], ['skipReleaseNotes', 'true']]),
  });
  return `${server.url}/?${query.toString()}`;
}

export interface SuiteRun {
  exitCode: number;
  logs: string[];
}

/**
 * Opens the workbench with an extension under development and its test module, and resolves
 * when the extension host has run the tests (`codeAutomationExit`).
 */
export async function runTestsInWorkbench(options: {
  server: CodeServer;
  browser: Browser;
  workspace: string;
  extensionDevelopmentPath: string;
  extensionTestsPath: string;
  timeoutMs: number;
  /** Runs on the page once the workbench starts loading, beside the extension host (e.g. opens a view as a user would). */
  onWorkbench?: (page: Page) => Promise<void>;
}): Promise<SuiteRun> {
  // The clipboard as a user's browser grants it: older workbenches (VS Code 1.90) read it back through
  // navigator.clipboard only, which headless Chromium refuses without the permission.
  const context = await options.browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
  const page: Page = await context.newPage();
  const logs: string[] = [];
  let finish: (code: number) => void = () => {};
  const finished = new Promise<number>((resolvePromise) => {
    finish = resolvePromise;
  });
  await page.exposeFunction('codeAutomationExit', (code: number) => finish(code));
  await page.exposeFunction('codeAutomationLog', (_level: unknown, args: unknown[]) => {
    const line = Array.isArray(args) ? args.map(String).join(' ') : String(args);
    logs.push(line);
    if (verbose) process.stderr.write(`[workbench] ${line}\n`);
  });
  if (verbose) page.on('console', (message) => process.stderr.write(`[console] ${message.text()}\n`));
  await page.goto(
    workbenchUrl(options.server, options.workspace, [
      ['extensionDevelopmentPath', remoteUri(options.server, options.extensionDevelopmentPath)],
      ['extensionTestsPath', remoteUri(options.server, options.extensionTestsPath)],
    ]),
  );
  // Not awaited before the suite: it runs beside it; a failure is logged, the suite decides.
  const beside = options
    .onWorkbench?.(page)
    .catch((error: unknown) => logs.push(`onWorkbench failed: ${String(error)}`));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<number>((resolvePromise) => {
    timer = setTimeout(() => resolvePromise(124), options.timeoutMs);
  });
  const exitCode = await Promise.race([finished, timeout]);
  await beside;
  clearTimeout(timer);
  await context.close().catch(() => undefined);
  return { exitCode, logs };
}
