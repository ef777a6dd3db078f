/**
 * The CLI bundle as scripts/build.mjs writes it (out/cli-main.js): what every start of `loopx` pays for.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { builtFile } from '../../support/builtCli';

const bundlePath = (): string => builtFile('cli-main.js');

/**
 * The development build's bundle (`npm run build`), whose esbuild helpers keep their names; `npm pack`'s prepack
 * leaves the production build in out/ (names minified), which these patterns cannot read: said, not passed.
 */
function developmentBundle(): string {
  const bundle = fs.readFileSync(bundlePath(), 'utf8');
  assert.ok(
    bundle.trimEnd().endsWith('//# sourceMappingURL=cli-main.js.map'),
    'out/ holds the production build (npm pack runs it): run `npm run build` first',
  );
  return bundle;
}

describe('the CLI bundle', () => {
  it('turns each Node built-in the sources import into a namespace object once, not once per importing module', () => {
    const bundle = developmentBundle();
    // esbuild's per-module copy of a built-in (`__toESM(require("node:fs"))`) is left only where a bundled
    // package (not src/) imports one.
    const perModule = [...bundle.matchAll(/__toESM\(require\("(node:[a-z_/]+)"\)\)/g)].map((m) => m[1]);
    assert.deepEqual(perModule, [], `per-module copies: ${perModule.join(', ')}`);
    const shared = [...bundle.matchAll(/__reExport\(\w+, ?require\("(node:[a-z_/]+)"\)\)/g)].map((m) => m[1] ?? '');
    for (const name of ['node:fs', 'node:path', 'node:os'])
      assert.equal(shared.filter((s) => s === name).length, 1, `${name} copied once`);
    assert.equal(new Set(shared).size, shared.length, `copied twice: ${shared.join(', ')}`);
  });

  it('is ASCII, so the launcher reads it as Latin-1 instead of decoding UTF-8 (regex literals escaped by the build)', () => {
    const bundle = fs.readFileSync(bundlePath());
    const at = bundle.findIndex((byte) => byte > 0x7f);
    assert.equal(at, -1, `non-ASCII at byte ${at}: ${bundle.subarray(Math.max(0, at - 60), at + 20).toString('utf8')}`);
  });
});
