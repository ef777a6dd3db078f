/**
 * The package's file list (scripts/runtime-files.mjs, which the build builds and scripts/package.mjs ships) holds
 * every file the extension loads by path, and nothing that only development needs. The paths are read from the
 * code itself: the webview shells' scripts and stylesheets, `joinPath(extensionUri, …)`, the CLI the terminals
 * get, the bundles the CLI launcher and the demo executor start, and every file package.json points at.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/demoWorkspace';

/** scripts/runtime-files.mjs is an ES module; this test file is CommonJS, so it loads it with import(). */
const loadRuntimeFiles = () => import('../../../scripts/runtime-files.mjs');

const SRC = join(REPO_ROOT, 'src');

function sources(): { file: string; text: string }[] {
  return readdirSync(SRC, { recursive: true })
    .map(String)
    .filter((file) => file.endsWith('.ts'))
    .map((file) => ({ file: `src/${file.split('\\').join('/')}`, text: readFileSync(join(SRC, file), 'utf8') }));
}

const quoted = (list: string): string[] => [...list.matchAll(/'([^']*)'/g)].map((m) => m[1] ?? '');

/** Every path under the extension's folder that the code loads by name (files, or folders ending in `/`). */
function pathsTheCodeLoads(): Map<string, string> {
  const found = new Map<string, string>();
  const add = (path: string, where: string): void => {
    found.set(path.replace(/^\.\//, ''), where);
  };
  for (const { file, text } of sources()) {
    // The webview shells (src/webviews/shared/html.ts): `script` is under out/webviews/, `styles` are repo paths.
    for (const m of text.matchAll(/\bscript:\s*'([^']+)'/g)) add(`out/webviews/${m[1]}`, file);
    for (const m of text.matchAll(/\bstyles:\s*\[([^\]]*)\]/g)) for (const s of quoted(m[1] ?? '')) add(s, file);
    // vscode.Uri.joinPath(extensionUri, 'a', 'b') and join(context.extensionUri.fsPath, 'a', 'b').
    for (const m of text.matchAll(/joinPath\(\s*(?:this\.)?extensionUri,\s*((?:'[^']*'\s*,?\s*)+)\)/g)) {
      add(quoted(m[1] ?? '').join('/'), file);
    }
    for (const m of text.matchAll(/join\(\s*[\w.]*extensionUri\.fsPath,\s*((?:'[^']*'\s*,?\s*)+)\)/g)) {
      add(quoted(m[1] ?? '').join('/'), file);
    }
    // Bundles found beside the running bundle (out/): the launcher's cli-main.js, the demo agent's bundle.
    if (file === 'src/cli/launcher.ts') {
      for (const m of text.matchAll(/join\(__dirname,\s*'([^']+)'\)/g)) add(`out/${m[1]}`, file);
    }
    for (const m of text.matchAll(/export const DEMO_AGENT_BUNDLE = '([^']+)'/g)) add(`out/${m[1]}`, file);
  }
  // package.json: the entry point, the icon and every file its contributions name.
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
  add(String(manifest['main']), 'package.json main');
  add(String(manifest['icon']), 'package.json icon');
  const walk = (value: unknown, where: string): void => {
    if (typeof value === 'string') {
      if (/^(\.\/)?(media|out)\/[\w./-]+\.\w+$/.test(value)) add(value, where);
    } else if (Array.isArray(value)) value.forEach((item, index) => walk(item, `${where}[${index}]`));
    else if (value && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) walk(item, `${where}.${key}`);
    }
  };
  walk(manifest['contributes'], 'package.json contributes');
  // Localized manifest strings (`%key%`) come from package.nls.json; `l10n` names the folder of bundles.
  if (/"%[\w.-]+%"/.test(JSON.stringify(manifest))) add('package.nls.json', 'package.json %key% strings');
  if (typeof manifest['l10n'] === 'string') add(manifest['l10n'].replace(/\/$/, ''), 'package.json l10n');
  return found;
}

describe('the package file list (scripts/runtime-files.mjs)', () => {
  let runtime: Awaited<ReturnType<typeof loadRuntimeFiles>>;
  let shipped: string[];

  before(async () => {
    runtime = await loadRuntimeFiles();
    shipped = runtime.runtimeFiles(REPO_ROOT);
  });

  it('finds the paths the code loads (the scan itself works)', () => {
    const loaded = [...pathsTheCodeLoads().keys()];
    for (const known of [
      'out/extension.js',
      'out/cli.js',
      'out/cli-main.js',
      'out/demoAgent.js',
      'out/webviews/warnings.js',
      'out/webviews/goalDetail.js',
      'out/webviews/uPlot.min.css',
      'media/webview.css',
      'media/loopx.svg',
      'media/icon.png',
      'media/walkthrough/createGoal.md',
      'out/webviews',
      'media',
    ]) {
      assert.ok(loaded.includes(known), `the scan missed ${known}; it found ${loaded.join(', ')}`);
    }
  });

  it('ships every file the code loads by path, and something in every folder it loads from', () => {
    const missing = [...pathsTheCodeLoads()]
      .filter(([path]) => !shipped.includes(path) && !shipped.some((file) => file.startsWith(`${path}/`)))
      .map(([path, where]) => `${path} (loaded by ${where})`);
    assert.deepEqual(missing, [], `not in scripts/runtime-files.mjs, so not in the .vsix`);
  });

  it('ships every bundle the build writes: each shipped build and webview entry is in the list', () => {
    for (const bundle of runtime.SHIPPED_BUNDLES) assert.ok(shipped.includes(bundle.outfile), bundle.outfile);
    for (const name of Object.keys(runtime.WEBVIEW_SCRIPTS)) {
      assert.ok(shipped.includes(`${runtime.WEBVIEW_OUTDIR}/${name}.js`), name);
    }
    for (const copied of Object.keys(runtime.COPIED_FILES)) assert.ok(shipped.includes(copied), copied);
  });

  it('ships nothing that only development needs', () => {
    const devOnly = shipped.filter(
      (file) =>
        /\.(map|ts|tsx|mts|cts)$/.test(file) ||
        /^(src|test|docs|bench|examples|scripts|node_modules|\.vscode-test|test-results|out\/test|out\/core)\//.test(
          file,
        ) ||
        /(^|\/)\./.test(file),
    );
    assert.deepEqual(devOnly, []);
  });

  it('keeps the repository .vscodeignore equal to the one generated from the list (by scripts/build.mjs)', () => {
    const committed = readFileSync(join(REPO_ROOT, '.vscodeignore'), 'utf8');
    assert.equal(committed, runtime.vscodeignoreFor(REPO_ROOT));
    const kept = committed.split('\n').filter((line) => line.startsWith('!'));
    assert.ok(committed.split('\n').includes('**'), 'everything not kept is ignored');
    assert.ok(kept.includes('!out/webviews/warnings.js') && kept.includes('!media/**'), kept.join(' '));
  });

  it('has a PNG marketplace icon of at least 128×128 pixels', () => {
    const png = readFileSync(join(REPO_ROOT, 'media', 'icon.png'));
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
    const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
    assert.ok(width >= 128 && height >= 128, `${width}×${height}`);
  });
});
