import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { containsPrivateData, findCredentials, scrubText, type ScrubContext } from '../../../src/core/privacy/scrub';

/**
 * The secret corpus (test/fixtures/privacy/secret-corpus.json): every positive must be redacted
 * with its secret gone, every look-alike must come through unchanged. Paths count as private
 * data to withhold but not as credentials to refuse.
 */

interface Positive {
  text: string;
  secret: string;
  kind: 'credential' | 'path';
}

const corpus = JSON.parse(
  fs.readFileSync(path.join(__dirname, '../../fixtures/privacy/secret-corpus.json'), 'utf8'),
) as { positives: Positive[]; negatives: string[] };

const context: ScrubContext = {
  projectRoots: ['/work/acme-app'],
  homeDir: '/home/alice',
  runtimeRoot: '/home/alice/.codex/loopx',
};

describe('secret corpus', () => {
  it('holds at least 100 positives and 100 look-alikes, each secret inside its text', () => {
    assert.ok(corpus.positives.length >= 100, `${corpus.positives.length} positives`);
    assert.ok(corpus.negatives.length >= 100, `${corpus.negatives.length} negatives`);
    for (const positive of corpus.positives) assert.ok(positive.text.includes(positive.secret), positive.text);
  });

  it('redacts every positive and no secret survives, also when scrubbed twice', () => {
    const failures: string[] = [];
    for (const { text, secret, kind } of corpus.positives) {
      const once = scrubText(text, context);
      if (once.includes(secret)) failures.push(`${JSON.stringify(text)} → ${JSON.stringify(once)}`);
      if (scrubText(once, context) !== once) failures.push(`not idempotent: ${JSON.stringify(text)}`);
      if (!containsPrivateData(text, context)) failures.push(`containsPrivateData false: ${JSON.stringify(text)}`);
      const credentials = findCredentials(text);
      if (kind === 'credential' && credentials.length === 0)
        failures.push(`no credential found: ${JSON.stringify(text)}`);
      if (kind === 'path' && credentials.length > 0)
        failures.push(`path taken for a credential: ${JSON.stringify(text)}`);
    }
    assert.deepEqual(failures, []);
  });

  it('leaves every look-alike unchanged', () => {
    const failures: string[] = [];
    for (const text of corpus.negatives) {
      const scrubbed = scrubText(text, context);
      if (scrubbed !== text) failures.push(`${JSON.stringify(text)} → ${JSON.stringify(scrubbed)}`);
      if (findCredentials(text).length > 0) failures.push(`credential found in ${JSON.stringify(text)}`);
    }
    assert.deepEqual(failures, []);
  });
});
