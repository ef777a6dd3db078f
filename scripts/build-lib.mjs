// Builds the control plane as a Node library: out/core/index.js (one CommonJS bundle; zod stays an
// external dependency so callers share its schema classes) and out/core/index.d.ts with the
// declarations it imports (tsc -p tsconfig.lib.json). package.json `exports["."]` points at both.
// `--outdir <dir>` writes the same files elsewhere (tests build a private copy, since
// scripts/build.mjs empties out/ whenever someone rebuilds the extension).
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const outDirFlag = process.argv.indexOf('--outdir');
const outDirValue = outDirFlag === -1 ? undefined : process.argv[outDirFlag + 1];
if (outDirFlag !== -1 && (outDirValue === undefined || outDirValue.startsWith('-')))
  throw new Error('--outdir needs a folder: node scripts/build-lib.mjs --outdir <dir>');
// The folder is emptied first, so it must be a folder of its own.
const outDir = outDirValue === undefined ? join(root, 'out', 'core') : resolve(outDirValue);
const production = process.argv.includes('--production');

rmSync(outDir, { recursive: true, force: true });
await esbuild.build({
  entryPoints: ['src/core/index.ts'],
  outfile: join(outDir, 'index.js'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external: ['zod'],
  sourcemap: !production,
  minify: false,
  // Test hooks (src/core/turn/crashHook.ts) compile to nothing; minifySyntax drops the dead branch, names stay readable.
  define: { LOOPX_SHIPPED_BUILD: 'true' },
  minifySyntax: true,
  logLevel: 'warning',
  absWorkingDir: root,
});

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.lib.json'), '--outDir', outDir], {
  cwd: root,
  stdio: 'inherit',
});
// tsc declares every module the library imports; the crash test hook is internal and must not ship (even as a type).
rmSync(join(outDir, 'turn', 'crashHook.d.ts'), { force: true });
if (!existsSync(join(outDir, 'index.d.ts'))) throw new Error(`tsc did not emit ${join(outDir, 'index.d.ts')}`);
console.log(`[build-lib] ${join(outDir, 'index.js')} and index.d.ts written`);
