/**
 * Integration tier: the mocha suites in test/integration run inside a real VS Code extension host.
 * Here that host is code-server (VS Code 1.139 server + web workbench, driven by headless Chromium);
 * where a desktop VS Code exists, set LOOPX_VSCODE_EXECUTABLE and @vscode/test-electron runs the same suites.
 *   1. the extension under development, on a copy of the demo workspace;
 *   2. the extension under development in an UNTRUSTED workspace (workspace trust on, folder not trusted, the
 *      status server turned on in the user settings): writes, agent runs and the status server are refused;
 *   3. the packaged .vsix, installed with `--install-extension` the way a user would, checked by a probe extension;
 *   4. the extension under development on a two-folder `.code-workspace` (multi-root: per-folder registries,
 *      goals grouped by folder, a status server per registry).
 * A suite that runs no test, or leaves one pending, fails the run.
 * Writes the combined counts to $LOOPX_TEST_SUMMARY; exits non-zero on any failure or timeout.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { materializeDemoWorkspace, materializeTwoFolderWorkspace, REPO_ROOT } from './demoWorkspace';
import { combine, judgeSuite, printResults, readSummary, type TestSummary } from './testSummary';
import {
  installVsix,
  launchChromium,
  packageTestExtension,
  runTestsInWorkbench,
  startCodeServer,
  writeQuietSettings,
} from './vscodeHost';

const TIMEOUT_MS = Number(process.env['TEST_TIMEOUT_MS'] ?? 180_000);
const SUITE = join(REPO_ROOT, 'out', 'test', 'integration', 'suite', 'index');
const VSIX_SUITE = join(REPO_ROOT, 'out', 'test', 'integration', 'vsix', 'index');
const UNTRUSTED_SUITE = join(REPO_ROOT, 'out', 'test', 'integration', 'untrusted', 'index');
const PROBE = join(REPO_ROOT, 'test', 'integration', 'vsix-probe');
const LM_SUITE = join(REPO_ROOT, 'out', 'test', 'integration', 'lm', 'index');
const MULTIROOT_SUITE = join(REPO_ROOT, 'out', 'test', 'integration', 'multiroot', 'index');
/** A test extension that registers a deterministic language model (vscode.lm provider API). */
const LM_PROVIDER = join(REPO_ROOT, 'test', 'integration', 'lm-provider');

async function runInCodeServer(
  label: string,
  options: {
    extensionDevelopmentPath: string;
    extensionTestsPath: string;
    extensionsDir?: string;
    env?: NodeJS.ProcessEnv;
    untrusted?: boolean;
    settings?: Record<string, unknown>;
    /** Opens a two-folder `.code-workspace` (see materializeTwoFolderWorkspace) instead of the demo folder. */
    twoFolders?: boolean;
  },
): Promise<TestSummary | undefined> {
  const scratch = mkdtempSync(join(tmpdir(), 'loopx-it-'));
  const workspace = options.twoFolders
    ? materializeTwoFolderWorkspace(join(scratch, 'workspace'))
    : materializeDemoWorkspace(join(scratch, 'workspace'));
  const summaryFile = join(scratch, 'summary.json');
  const server = await startCodeServer({
    workspace,
    rootDir: join(scratch, 'host'),
    ...(options.extensionsDir ? { extensionsDir: options.extensionsDir } : {}),
    ...(options.untrusted ? { untrusted: true } : {}),
    ...(options.settings ? { settings: options.settings } : {}),
    env: { ...options.env, LOOPX_TEST_SUMMARY: summaryFile },
  });
  const browser = await launchChromium();
  try {
    console.log(`\n${label} (code-server ${server.url})`);
    const run = await runTestsInWorkbench({ server, browser, workspace, timeoutMs: TIMEOUT_MS, ...options });
    lap(`suite finished (exit ${run.exitCode})`);
    const summary = readSummary(summaryFile);
    if (summary) printResults(summary);
    if (run.exitCode === 124) console.log(`  ✖ timed out after ${TIMEOUT_MS} ms`);
    if (run.exitCode !== 0 || !summary) {
      console.log(run.logs.slice(-40).join('\n'));
      return summary ? judgeSuite(label, { ...summary, failed: Math.max(1, summary.failed) }) : undefined;
    }
    return judgeSuite(label, summary);
  } finally {
    await browser.close();
    await server.stop();
    if (!process.env['KEEP_TMP']) rmSync(scratch, { recursive: true, force: true });
  }
}

async function runInDesktop(
  executable: string,
  label: string,
  extensionDevelopmentPath: string,
  extensionTestsPath: string,
  extraArgs: string[] = [],
  env: NodeJS.ProcessEnv = {},
  trust: { untrusted?: boolean; settings?: Record<string, unknown> } = {},
): Promise<TestSummary | undefined> {
  const { runTests } = await import('@vscode/test-electron');
  const scratch = mkdtempSync(join(tmpdir(), 'loopx-it-'));
  const userData = join(scratch, 'user-data');
  mkdirSync(userData, { recursive: true });
  writeQuietSettings(userData, {
    ...(trust.untrusted
      ? { 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'never' }
      : {}),
    ...trust.settings,
  });
  const workspace = materializeDemoWorkspace(join(scratch, 'workspace'));
  const summaryFile = join(scratch, 'summary.json');
  console.log(`\n${label} (${executable})`);
  try {
    await runTests({
      vscodeExecutablePath: executable,
      extensionDevelopmentPath,
      extensionTestsPath,
      launchArgs: [
        workspace,
        '--user-data-dir',
        userData,
        ...(trust.untrusted ? [] : ['--disable-workspace-trust']),
        ...extraArgs,
      ],
      extensionTestsEnv: { ...env, LOOPX_TEST_SUMMARY: summaryFile },
    });
  } catch (error) {
    console.log(`  ✖ ${String(error)}`);
  }
  const summary = readSummary(summaryFile);
  if (summary) printResults(summary);
  return judgeSuite(label, summary);
}

/** A port that is free right now on 127.0.0.1. */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const startedAt = Date.now();
function lap(message: string): void {
  console.log(`  [${((Date.now() - startedAt) / 1000).toFixed(1)} s] ${message}`);
}

/** `LOOPX_IT_ONLY=lm,untrusted` runs only those suites (dev, lm, untrusted, multiroot, vsix), for a change that touches one. */
const ONLY = new Set((process.env['LOOPX_IT_ONLY'] ?? '').split(',').filter((s) => s.trim() !== ''));
const wanted = (suite: 'dev' | 'lm' | 'untrusted' | 'multiroot' | 'vsix'): boolean =>
  ONLY.size === 0 || ONLY.has(suite);

async function main(): Promise<void> {
  const desktop = process.env['LOOPX_VSCODE_EXECUTABLE'];
  const summaries: (TestSummary | undefined)[] = [];
  // While iterating: LOOPX_IT_ONLY=development runs that suite alone (LOOPX_IT_GREP narrows it further).
  const only = process.env['LOOPX_IT_ONLY'];
  if (only === 'development') {
    console.log(`LOOPX_IT_ONLY=${only}: the other integration suites are not run`);
    const summary = await runInCodeServer(
      only === 'development' ? 'Extension under development' : 'Untrusted workspace',
      {
        extensionDevelopmentPath: REPO_ROOT,
        extensionTestsPath: only === 'development' ? SUITE : UNTRUSTED_SUITE,
      },
    );
    // npm test's oldest-vscode tier runs this suite alone and counts it from the summary file.
    if (process.env['LOOPX_TEST_SUMMARY'] && summary)
      writeFileSync(process.env['LOOPX_TEST_SUMMARY'], JSON.stringify(summary));
    process.exitCode = summary && summary.failed === 0 && summary.passed > 0 ? 0 : 1;
    return;
  }

  if (wanted('dev')) {
    summaries.push(
      desktop
        ? await runInDesktop(desktop, 'Extension under development', REPO_ROOT, SUITE)
        : await runInCodeServer('Extension under development', {
            extensionDevelopmentPath: REPO_ROOT,
            extensionTestsPath: SUITE,
          }),
    );
  }

  if (!desktop && wanted('lm')) {
    lap('development suite done; the language-model suite next');
    // The workbench takes one extension under development, so the provider is installed, as a user would.
    const lmExtensionsDir = mkdtempSync(join(tmpdir(), 'loopx-lm-ext-'));
    try {
      installVsix(packageTestExtension(LM_PROVIDER, lmExtensionsDir), lmExtensionsDir);
      summaries.push(
        await runInCodeServer('Language model (test provider extension)', {
          extensionDevelopmentPath: REPO_ROOT,
          extensionTestsPath: LM_SUITE,
          extensionsDir: lmExtensionsDir,
          settings: { 'chat.disableAIFeatures': false },
        }),
      );
    } finally {
      rmSync(lmExtensionsDir, { recursive: true, force: true });
    }
  }

  if (wanted('untrusted')) {
    lap('development suite done; the untrusted workspace next');
    const statusPort = await freePort();
    // Chat on, so the language-model tools exist there and the test can see that only the read ones do.
    const untrustedSettings = {
      'loopx.statusServer.enabled': true,
      'loopx.statusServer.port': statusPort,
      'chat.disableAIFeatures': false,
    };
    const untrustedEnv = { LOOPX_UNTRUSTED_STATUS_PORT: String(statusPort) };
    summaries.push(
      desktop
        ? await runInDesktop(desktop, 'Untrusted workspace', REPO_ROOT, UNTRUSTED_SUITE, [], untrustedEnv, {
            untrusted: true,
            settings: untrustedSettings,
          })
        : await runInCodeServer('Untrusted workspace', {
            extensionDevelopmentPath: REPO_ROOT,
            extensionTestsPath: UNTRUSTED_SUITE,
            untrusted: true,
            settings: untrustedSettings,
            env: untrustedEnv,
          }),
    );
  }

  if (!desktop && wanted('multiroot')) {
    lap('untrusted suite done; the two-folder workspace next');
    const statusPort = await freePort();
    summaries.push(
      await runInCodeServer('Two-folder workspace (multi-root)', {
        extensionDevelopmentPath: REPO_ROOT,
        extensionTestsPath: MULTIROOT_SUITE,
        twoFolders: true,
        settings: { 'loopx.statusServer.enabled': true, 'loopx.statusServer.port': statusPort },
        env: { LOOPX_MULTIROOT_STATUS_PORT: String(statusPort) },
      }),
    );
  }

  if (wanted('vsix')) {
    lap('multi-root suite done; packaging the .vsix');
    const vsix =
      execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'package.mjs')], {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      })
        .trim()
        .split('\n')
        .pop() ?? '';
    const extensionsDir = mkdtempSync(join(tmpdir(), 'loopx-vsix-ext-'));
    try {
      installVsix(vsix, extensionsDir);
      lap('installed the .vsix');
      const env = { LOOPX_EXPECTED_EXTENSIONS_DIR: extensionsDir };
      summaries.push(
        desktop
          ? await runInDesktop(
              desktop,
              'Packaged .vsix, installed',
              PROBE,
              VSIX_SUITE,
              ['--extensions-dir', extensionsDir],
              env,
            )
          : await runInCodeServer('Packaged .vsix, installed', {
              extensionDevelopmentPath: PROBE,
              extensionTestsPath: VSIX_SUITE,
              extensionsDir,
              env,
            }),
      );
    } finally {
      // Packaging builds in a staging folder: the development bundles in out/ are still there for later tiers.
      rmSync(extensionsDir, { recursive: true, force: true });
    }
  }

  const total = combine(summaries);
  if (process.env['LOOPX_TEST_SUMMARY']) writeFileSync(process.env['LOOPX_TEST_SUMMARY'], JSON.stringify(total));
  console.log(`\nintegration: ${total.passed} passed, ${total.failed} failed`);
  process.exitCode = total.failed > 0 || total.passed === 0 ? 1 : 0;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
