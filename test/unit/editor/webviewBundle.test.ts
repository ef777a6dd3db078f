import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';

const ROOT = resolve(__dirname, '..', '..', '..');

/**
 * The webview scripts are bundled as scripts/build.mjs bundles them (browser IIFE, minified). Their
 * size is what a panel loads and parses before its first paint: the protocols validate with
 * `zod/mini`, whose functions tree-shake, not with zod's classic API (~450 KB of a bundle).
 */
describe('the webview bundles', function () {
  this.timeout(30_000);
  for (const [name, entry] of [
    ['warnings', 'src/webviews/warnings/browser/main.ts'],
    ['goalDetail', 'src/webviews/goalDetail/browser/main.ts'],
  ] as const) {
    it(`${name}: zod/mini only, and a small bundle`, async () => {
      const result = await esbuild.build({
        absWorkingDir: ROOT,
        entryPoints: [join(ROOT, entry)],
        bundle: true,
        platform: 'browser',
        target: 'es2022',
        format: 'iife',
        minify: true,
        write: false,
        metafile: true,
        logLevel: 'silent',
      });
      const inputs = Object.keys(result.metafile.inputs);
      assert.deepEqual(
        inputs.filter((file) => file.includes('node_modules/zod/') && file.includes('/classic/')),
        [],
        'no module of zod classic',
      );
      const bytes = result.outputFiles.reduce((sum, file) => sum + file.contents.length, 0);
      // uPlot (goalDetail) is ~50 KB; zod/mini with these schemas ~25 KB.
      assert.ok(bytes < 150_000, `${name}.js is ${bytes} bytes`);
    });
  }
});
