// Bundles the extension, the CLI, the demo agent and the real-VS-Code test suites with esbuild.
// Type checking is a separate gate (`npm run typecheck`), as in the esbuild sample.
import * as esbuild from 'esbuild';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import {
  builtFiles,
  COPIED_FILES,
  SHIPPED_BUNDLES,
  vscodeignoreFor,
  WEBVIEW_OUTDIR,
  WEBVIEW_SCRIPTS,
} from './runtime-files.mjs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const root = new URL('..', import.meta.url).pathname;
// `--out-root DIR` writes out/ under DIR instead of the repository, with only what ships (no test suites):
// scripts/package.mjs builds the .vsix that way, so packaging leaves the development build in out/ alone.
const outRootArg = process.argv.indexOf('--out-root');
const outRoot = outRootArg === -1 ? root : resolve(process.argv[outRootArg + 1] ?? '');
const at = (file) => join(outRoot, file);

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

/**
 * Node built-ins the CLI loads on first use instead of at start. `node:child_process` (and through it
 * `net`, `stream`, `dgram`) costs 2–5 ms of every start: commander requires it at its top level for
 * external subcommands LoopX never has, and the modules that run git import it for a call only some
 * commands make. Every use in the bundle reads a property at call time (`childProcess.spawn`,
 * `(0, import_x.execFile)(…)`), so a proxy that requires the module on the first property read is
 * the module for them.
 */
const LAZY_BUILTINS = ['child_process'];
const LAZY_NAMESPACE = 'loopx-lazy-builtin';
const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(build) {
    const filter = new RegExp(`^(node:)?(${LAZY_BUILTINS.join('|')})$`);
    build.onResolve({ filter }, (args) =>
      args.namespace === LAZY_NAMESPACE
        ? { path: args.path, external: true }
        : { path: args.path.replace(/^node:/, ''), namespace: LAZY_NAMESPACE },
    );
    // esbuild's interop (`__toESM`) reads `__esModule`, lists a module's keys and reads each key's
    // descriptor for its `enumerable` flag when a module imports names from it: those answers come
    // from the export names (taken from this Node at build time; a built-in has no `__esModule`), so
    // only reading a value loads the module.
    build.onLoad({ filter: /.*/, namespace: LAZY_NAMESPACE }, async (args) => ({
      loader: 'js',
      contents: `let real;
const load = () => (real ??= require('node:${args.path}'));
const names = ${JSON.stringify(Object.keys(await import(`node:${args.path}`)).filter((name) => name !== 'default'))};
module.exports = new Proxy({}, {
  get: (_, key) => (key === '__esModule' ? undefined : load()[key]),
  has: (_, key) => names.includes(key) || key in load(),
  ownKeys: () => [...names],
  getOwnPropertyDescriptor: (_, key) =>
    names.includes(key) ? { configurable: true, enumerable: true, get: () => load()[key] } : undefined,
});
`,
    }));
  },
};

/**
 * One namespace object per Node built-in for the whole bundle. esbuild turns each module's
 * `import * as fs from 'node:fs'` into its own `__toESM(require('node:fs'))`, which copies every export
 * of the built-in onto a fresh object as a getter: ~140 such imports in src/, 74 of them run by `status`,
 * cost 13–17 ms of every start. Here a source file's import statement of a built-in resolves to one
 * ES module per built-in (`export * from 'node:fs'`), copied once (esbuild's `__reExport`, the same live
 * getters) and shared by every importer. `require()` calls (bundled CommonJS packages) keep the real module.
 */
const SHARED_NAMESPACE = 'loopx-shared-builtin';
const sourceDir = join(root, 'src') + sep;
const sharedBuiltins = {
  name: 'shared-builtins',
  setup(build) {
    build.onResolve({ filter: /^node:[a-z_/]+$/ }, (args) => {
      if (args.namespace === SHARED_NAMESPACE) return { path: args.path, external: true };
      if (args.kind !== 'import-statement' || !args.importer.startsWith(sourceDir)) return undefined;
      if (LAZY_BUILTINS.includes(args.path.replace(/^node:/, ''))) return undefined;
      return { path: args.path, namespace: SHARED_NAMESPACE };
    });
    build.onLoad({ filter: /.*/, namespace: SHARED_NAMESPACE }, (args) => ({
      loader: 'js',
      contents: `export * from '${args.path}';\n`,
    }));
  },
};

/**
 * An ASCII-only CLI bundle: the launcher (src/cli/launcher.ts) then reads it as Latin-1, a copy (0.5 ms),
 * where decoding 2–3 MB of UTF-8 costs 4–6 ms of every start, and V8 keeps it as a one-byte string.
 * esbuild escapes non-ASCII text in strings but leaves it in regular expression literals; this rewrites
 * each non-ASCII character of a regex literal in a source file as the escape that matches the same
 * character (`\uXXXX`, or `\u{X}` beyond the BMP under the `u` or `v` flag). A tagged template's raw
 * text stays as written (a tag sees it): sources write those escaped. test/unit/cli/bundle.test.ts checks
 * the bundle is ASCII; a bundle that is not still loads (the launcher then decodes UTF-8).
 */
const asciiRegexLiterals = {
  name: 'ascii-regex-literals',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(sourceDir)) return undefined;
      const text = await readFile(args.path, 'utf8');
      if (!/[\u0080-\uffff]/.test(text)) return undefined;
      const { default: ts } = await import('typescript');
      const source = ts.createSourceFile(args.path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
      const edits = [];
      const visit = (node) => {
        if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
          const literal = node.getText(source);
          const flags = literal.slice(literal.lastIndexOf('/') + 1);
          const unicode = /[uv]/.test(flags);
          // A character escaped as it is (`\，`) is left alone: its escape would escape the backslash.
          if (/\\[\u0080-\uffff]/.test(literal)) return;
          const escaped = literal.replace(/[\u{80}-\u{10ffff}]/gu, (char) => {
            const code = char.codePointAt(0);
            if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`;
            if (unicode) return `\\u{${code.toString(16)}}`;
            return [...char.split('')].map((unit) => `\\u${unit.charCodeAt(0).toString(16)}`).join('');
          });
          if (escaped !== literal) edits.push({ start: node.getStart(source), end: node.getEnd(), escaped });
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
      let contents = text;
      for (const { start, end, escaped } of edits.reverse())
        contents = contents.slice(0, start) + escaped + contents.slice(end);
      return { contents, loader: 'ts' };
    });
  },
};

// What ships (scripts/runtime-files.mjs) is built first; `ships` marks those builds for the output check below.
const builds = SHIPPED_BUNDLES.map((bundle) => ({
  ...common,
  ...bundle,
  // The CLI bundle is read at every start of `loopx`: no whitespace or comments (the source map maps it),
  // ASCII only, one namespace per built-in, child_process loaded on first use.
  ...(bundle.outfile === 'out/cli-main.js'
    ? { plugins: [lazyBuiltins, sharedBuiltins, asciiRegexLiterals], minifyWhitespace: true }
    : {}),
  outfile: at(bundle.outfile),
  metafile: true,
  ships: true,
}));

// Webview scripts run in the browser sandbox of a webview: one IIFE each, zod and uPlot bundled in (no remote content).
builds.push({
  ...common,
  platform: 'browser',
  target: 'es2022',
  format: 'iife',
  define: {},
  entryPoints: WEBVIEW_SCRIPTS,
  outdir: at(WEBVIEW_OUTDIR),
  minify: true,
  metafile: true,
  ships: true,
});

// Integration suites run inside the extension host: `vscode` and mocha come from the host / node_modules.
const integrationEntries = listEntries('test/integration', /\.ts$/);
if (integrationEntries.length > 0 && outRoot === root) {
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

if (!watch) rmSync(at('out'), { recursive: true, force: true });
mkdirSync(at('out'), { recursive: true });

/** esbuild's options: a build without our `ships` mark. */
function esbuildOptions(build) {
  const options = { ...build };
  delete options.ships;
  return options;
}

/** Fails the build when a shipping build writes a file runtime-files.mjs does not name (it would not ship). */
function checkShippedOutputs(results) {
  const written = results
    .filter((_, index) => builds[index].ships)
    .flatMap((result) => Object.keys(result.metafile.outputs))
    .map((file) => relative(outRoot, resolve(root, file)).split(sep).join('/'))
    .filter((file) => !file.endsWith('.map'));
  const listed = new Set(builtFiles());
  const unlisted = written.filter((file) => !listed.has(file));
  if (unlisted.length > 0) {
    throw new Error(
      `[build] ${unlisted.join(', ')}: written by a shipping build but not listed in scripts/runtime-files.mjs, so the .vsix would lack it`,
    );
  }
}

if (watch) {
  const contexts = await Promise.all(builds.map((b) => esbuild.context(esbuildOptions(b))));
  await Promise.all(contexts.map((c) => c.watch()));
  console.log('[build] watching for changes');
} else {
  checkShippedOutputs(await Promise.all(builds.map((b) => esbuild.build(esbuildOptions(b)))));
  chmodSync(at('out/cli.js'), 0o755);
  for (const [to, from] of Object.entries(COPIED_FILES)) copyFileSync(join(root, from), at(to));
  // The repository's .vscodeignore follows the list (for `vsce ls` here; packaging writes its own copy).
  if (outRoot === root) writeFileSync(join(root, '.vscodeignore'), vscodeignoreFor(root));
  console.log(`[build] ${builds.length} bundles written to ${at('out')}${production ? ' (production)' : ''}`);
}
