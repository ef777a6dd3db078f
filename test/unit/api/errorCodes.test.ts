import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LOOPX_ERROR_CODES } from '../../../src/core/errorCodes';
import { REPO_ROOT } from '../../support/demoWorkspace';

/**
 * src/core/errorCodes.ts is the one list of `LoopxError` codes. The compiler already refuses a
 * code that is not in it (`LoopxError` and `isLoopxError` take `LoopxErrorCode`); these tests
 * document that, keep the list tidy for merges, and keep docs/api.md's table equal to it.
 */
const SRC = path.join(REPO_ROOT, 'src');
const CODES_FILE = path.join(SRC, 'core', 'errorCodes.ts');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && full !== CODES_FILE ? [full] : [];
  });
}

const sources = sourceFiles(SRC).map((file) => ({
  file: path.relative(REPO_ROOT, file),
  text: fs.readFileSync(file, 'utf8'),
}));

/** Codes written as literals where an error is made or tested: `new LoopxError('…'`, `isLoopxError(x, '…')`. */
function literalCodesInSrc(): Map<string, string> {
  const found = new Map<string, string>();
  const patterns = [/new LoopxError\(\s*'([^']*)'/g, /isLoopxError\([^,()]+,\s*'([^']*)'\)/g];
  for (const { file, text } of sources) {
    for (const pattern of patterns) {
      for (const match of text.matchAll(pattern)) {
        if (!found.has(match[1] as string)) found.set(match[1] as string, file);
      }
    }
  }
  return found;
}

/** `code | meaning` pairs from the trailing comments of errorCodes.ts, in order. */
function documentedInSource(): [string, string][] {
  const text = fs.readFileSync(CODES_FILE, 'utf8');
  return [...text.matchAll(/^ {2}'([a-z0-9_]+)', \/\/ (.+)$/gm)].map((m) => [m[1] as string, m[2] as string]);
}

describe('error codes (src/core/errorCodes.ts)', () => {
  it('lists each code once, in alphabetical order, each with a meaning', () => {
    const duplicates = LOOPX_ERROR_CODES.filter((code, index) => LOOPX_ERROR_CODES.indexOf(code) !== index);
    assert.deepEqual(duplicates, []);
    assert.deepEqual([...LOOPX_ERROR_CODES], [...LOOPX_ERROR_CODES].sort());
    for (const code of LOOPX_ERROR_CODES) assert.match(code, /^[a-z][a-z0-9_]*$/, code);
    assert.deepEqual(
      documentedInSource().map(([code]) => code),
      [...LOOPX_ERROR_CODES],
      'every code needs a one-line meaning as a trailing comment',
    );
  });

  it('contains every code written in src', () => {
    const literals = literalCodesInSrc();
    assert.ok(literals.size > 50, `the scan found only ${literals.size} codes; is the pattern still right?`);
    const known = new Set<string>(LOOPX_ERROR_CODES);
    const missing = [...literals].filter(([code]) => !known.has(code)).map(([code, file]) => `${code} (${file})`);
    assert.deepEqual(missing, []);
  });

  it('lists no code that src never makes', () => {
    const all = sources.map((source) => source.text).join('\n');
    const unused = LOOPX_ERROR_CODES.filter((code) => {
      if (all.includes(`'${code}'`)) return false;
      // Prefixed codes from requireRegisteredAgent's codePrefix (`quota_`, `refresh_`): `${prefix}agent_…`.
      const suffix = /^(?:quota_|refresh_)?(agent_[a-z_]+)$/.exec(code)?.[1];
      return suffix === undefined || !all.includes(`\${prefix}${suffix}\``);
    });
    assert.deepEqual(unused, []);
  });

  it('docs/api.md has the same codes and meanings in its "Error codes" table', () => {
    const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'api.md'), 'utf8');
    const section = /^## Error codes\n([\s\S]*?)(?=^## )/m.exec(doc)?.[1];
    assert.ok(section !== undefined, 'docs/api.md has no "## Error codes" section');
    const rows = [...section.matchAll(/^\| `([^`]+)` \| (.+) \|$/gm)].map((m) => [m[1] as string, m[2] as string]);
    assert.deepEqual(rows, documentedInSource());
  });
});
