// Bundles the extension, the CLI, the demo agent and the real-VS-Code test suites with esbuild.
// Type checking is a separate gate (`npm run typecheck`), as in the esbuild sample.
import * as esbuild from 'esbuild';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const root = new URL('..', import.meta.url).pathname;

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  // Test hooks (src/core/turn/crashHook.ts) compile to nothing in every bundle; only the tests' tsx runs keep them.
  define: { LOOPX_SHIPPED_BUILD: 'true' },
  minifySyntax: true,
  logLevel: 'warning',
  absWorkingDir: root,
};

function listEntries(dir, pattern) {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { recursive: true })
    .map(String)
    .filter((file) => pattern.test(file))
    .map((file) => join(dir, file));
}

const builds = [
  { ...common, entryPoints: ['src/extension.ts'], outfile: 'out/extension.js', external: ['vscode'] },
  { ...common, entryPoints: ['src/cli/main.ts'], outfile: 'out/cli-main.js' },
  // The `loopx` bin: a small launcher that loads cli-main.js through a V8 code cache.
  { ...common, entryPoints: ['src/cli/launcher.ts'], outfile: 'out/cli.js', banner: { js: '#!/usr/bin/env node' } },
  // The built-in demo agent runs as its own process (the `demo` executor spawns it like any CLI agent).
  { ...common, entryPoints: ['src/core/executors/demoAgentMain.ts'], outfile: 'out/demoAgent.js' },
];

// Webview scripts run in the browser sandbox of a webview: one IIFE each, zod and uPlot bundled in (no remote content).
builds.push({
  ...common,
  platform: 'browser',
  target: 'es2022',
  format: 'iife',
  define: {},
  entryPoints: {
    warnings: 'src/webviews/warnings/browser/main.ts',
    goalDetail: 'src/webviews/goalDetail/browser/main.ts',
  },
  outdir: 'out/webviews',
  minify: true,
});

// Integration suites run inside the extension host: `vscode` and mocha come from the host / node_modules.
const integrationEntries = listEntries('test/integration', /\.ts$/);
if (integrationEntries.length > 0) {
  builds.push({
    ...common,
    entryPoints: integrationEntries,
    outdir: 'out/test/integration',
    outbase: 'test/integration',
    bundle: true,
    external: ['vscode', 'mocha'],
    sourcemap: true,
    minify: false,
  });
}

if (!watch) rmSync(join(root, 'out'), { recursive: true, force: true });
mkdirSync(join(root, 'out'), { recursive: true });

if (watch) {
  const contexts = await Promise.all(builds.map((b) => esbuild.context(b)));
  await Promise.all(contexts.map((c) => c.watch()));
  console.log('[build] watching for changes');
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
  chmodSync(join(root, 'out/cli.js'), 0o755);
  copyFileSync(join(root, 'node_modules/uplot/dist/uPlot.min.css'), join(root, 'out/webviews/uPlot.min.css'));
  console.log(`[build] ${builds.length} bundles written to out/${production ? ' (production)' : ''}`);
}
