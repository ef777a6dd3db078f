// What the extension loads at run time, hence exactly what the .vsix ships: one list, derived from the
// build's own targets. scripts/build.mjs builds these targets (and fails if esbuild writes a file this
// list does not name); scripts/package.mjs stages these files and nothing else and checks vsce's listing
// against them; test/unit/package/ checks that every path the code loads is here and nothing dev-only is.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';

/** The bundles that ship: esbuild options beyond the shared ones, one output file each. */
export const SHIPPED_BUNDLES = [
  { entryPoints: ['src/extension.ts'], outfile: 'out/extension.js', external: ['vscode'] },
  { entryPoints: ['src/cli/main.ts'], outfile: 'out/cli-main.js' },
  // The `loopx` bin: a small launcher that loads cli-main.js through a V8 code cache.
  { entryPoints: ['src/cli/launcher.ts'], outfile: 'out/cli.js', banner: { js: '#!/usr/bin/env node' } },
  // The built-in demo agent runs as its own process (the `demo` executor spawns it like any CLI agent).
  { entryPoints: ['src/core/executors/demoAgentMain.ts'], outfile: 'out/demoAgent.js' },
];

/** Webview scripts (src/webviews/shared/html.ts loads `out/webviews/<name>.js`): entry name → source. */
export const WEBVIEW_SCRIPTS = {
  warnings: 'src/webviews/warnings/browser/main.ts',
  goalDetail: 'src/webviews/goalDetail/browser/main.ts',
};
export const WEBVIEW_OUTDIR = 'out/webviews';

/** Files the build copies into out/ as they are: destination → source. */
export const COPIED_FILES = {
  'out/webviews/uPlot.min.css': 'node_modules/uplot/dist/uPlot.min.css',
};

/** Files and folders that ship from the repository as they are (the manifest, the docs vsce reads, media/). */
export const STATIC_ENTRIES = ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'media'];

/**
 * Shipped when present: the localized manifest strings (package.nls.json, package.nls.<locale>.json) and the
 * l10n/ folder of string bundles that package.json's `l10n` names.
 */
export const LOCALIZATION_ENTRIES = [/^package\.nls(\.[\w-]+)?\.json$/, /^l10n$/];
const LOCALIZATION_IGNORE_PATTERNS = ['package.nls*.json', 'l10n/**'];

/** Every output file of the build that ships (repository-relative, `/`-separated). */
export function builtFiles() {
  return [
    ...SHIPPED_BUNDLES.map((bundle) => bundle.outfile),
    ...Object.keys(WEBVIEW_SCRIPTS).map((name) => posix.join(WEBVIEW_OUTDIR, `${name}.js`)),
    ...Object.keys(COPIED_FILES),
  ].sort();
}

/** Every file of the package, static ones expanded from the working tree (repository-relative, sorted). */
export function runtimeFiles(root) {
  const files = [...builtFiles()];
  const localization = readdirSync(root).filter((name) => LOCALIZATION_ENTRIES.some((pattern) => pattern.test(name)));
  for (const entry of [...STATIC_ENTRIES, ...localization]) {
    const abs = join(root, entry);
    if (!existsSync(abs)) throw new Error(`${entry} is listed in scripts/runtime-files.mjs but does not exist`);
    if (statSync(abs).isDirectory()) {
      for (const file of readdirSync(abs, { recursive: true }).map(String)) {
        if (statSync(join(abs, file)).isFile()) files.push(posix.join(entry, file.split('\\').join('/')));
      }
    } else files.push(entry);
  }
  return [...new Set(files)].sort();
}

/**
 * The .vscodeignore that keeps exactly the package's files: the repository's own (the build writes it, a unit
 * test checks it) and the staging folder's (written by scripts/package.mjs) are this text.
 */
export function vscodeignoreFor(root) {
  const kept = [
    ...builtFiles(),
    ...STATIC_ENTRIES.map((entry) => (statSync(join(root, entry)).isDirectory() ? `${entry}/**` : entry)),
    ...LOCALIZATION_IGNORE_PATTERNS,
  ];
  return [
    '# Written by scripts/build.mjs from scripts/runtime-files.mjs (what the .vsix ships); `npm run package`',
    '# writes the same into its staging folder, and test/unit/package checks this copy.',
    '**',
    ...kept.map((path) => `!${path}`),
    '',
  ].join('\n');
}
