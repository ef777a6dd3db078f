import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import * as l10n from '@vscode/l10n';
import { confirmRefreshDetail, turnButtons } from '../../src/commands/turnMessages';
import { goalStatusWord } from '../../src/common/words';
import { manifestNls } from '../../src/core/commands/manifest';

const root = join(__dirname, '..', '..');
const readJson = (file: string): unknown => JSON.parse(readFileSync(join(root, file), 'utf8'));
const strings = (file: string): Record<string, string> => readJson(file) as Record<string, string>;

/** What a translation must carry over untouched: `{0}`/`{name}` placeholders, command links, URLs and code spans. */
function invariants(text: string): string[] {
  const found = [
    ...text.matchAll(/\{[A-Za-z0-9_]+\}/g),
    ...text.matchAll(/\]\(([^)]+)\)/g),
    ...text.matchAll(/`[^`]+`/g),
  ].map((match) => match[1] ?? match[0]);
  return found.sort();
}

/** Every English key has a translation, no translation is left over from a removed key, and none loses an invariant. */
function assertTranslated(english: Record<string, string>, translated: Record<string, string>, file: string): void {
  const missing = Object.keys(english).filter((key) => !(key in translated));
  const stale = Object.keys(translated).filter((key) => !(key in english));
  assert.deepEqual(missing, [], `${file} lacks a translation of these keys`);
  assert.deepEqual(stale, [], `${file} translates keys the English no longer has`);
  for (const [key, message] of Object.entries(english)) {
    const translation = translated[key] ?? '';
    assert.ok(translation.trim() !== '', `${file}: "${key}" is empty`);
    assert.deepEqual(
      invariants(translation),
      invariants(message),
      `${file}: "${key}" changes a placeholder, link or code span`,
    );
  }
}

/** Every string value of package.json that is a `%key%` reference. */
function nlsReferences(value: unknown, found: string[] = []): string[] {
  if (typeof value === 'string') {
    const match = /^%([^%\s]+)%$/.exec(value);
    if (match?.[1]) found.push(match[1]);
  } else if (Array.isArray(value)) {
    for (const item of value) nlsReferences(item, found);
  } else if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) nlsReferences(item, found);
  }
  return found;
}

describe('localization: package.nls', () => {
  const english = strings('package.nls.json');

  it('defines every %key% package.json names, and no key package.json does not name', () => {
    const referenced = new Set(nlsReferences(readJson('package.json')));
    assert.deepEqual(
      [...referenced].filter((key) => !(key in english)),
      [],
      'package.json names undefined keys',
    );
    assert.deepEqual(
      Object.keys(english).filter((key) => !referenced.has(key)),
      [],
      'package.nls.json has unused keys',
    );
  });

  it('holds the catalog strings as the catalog writes them (run `npm run sync:manifest` to fix)', () => {
    for (const [key, message] of Object.entries(manifestNls())) assert.equal(english[key], message, key);
  });

  it('translates every key into Simplified Chinese, placeholders, links and code spans kept', () => {
    assertTranslated(english, strings('package.nls.zh-cn.json'), 'package.nls.zh-cn.json');
    assert.equal(strings('package.nls.zh-cn.json')['view.goals.name'], '目标');
  });
});

describe('localization: the l10n bundle', function () {
  // The export parses every source file with tree-sitter (WebAssembly): a few seconds.
  this.timeout(60_000);
  const english = strings('l10n/bundle.l10n.json');

  it('holds exactly the strings src passes to l10n.t (run `npm run l10n:export` to fix)', async () => {
    const { getL10nJson } = await import('@vscode/l10n-dev');
    const files = readdirSync(join(root, 'src'), { recursive: true })
      .map(String)
      .filter((file) => /\.tsx?$/.test(file))
      .map((file) => ({ contents: readFileSync(join(root, 'src', file), 'utf8'), extension: extname(file) }));
    const exported = await getL10nJson(files);
    assert.deepEqual(english, exported);
    assert.ok(Object.keys(exported).length > 100, 'the scan finds the l10n.t calls');
  });

  it('translates every string into Simplified Chinese, placeholders, links and code spans kept', () => {
    assertTranslated(english, strings('l10n/bundle.l10n.zh-cn.json'), 'l10n/bundle.l10n.zh-cn.json');
  });
});

describe('localization: modules without vscode (@vscode/l10n, the bundle handed over at activation)', () => {
  afterEach(() => {
    // Back to English for the other suites: an empty bundle makes l10n.t return the message.
    l10n.config({ contents: {} });
  });

  it('speak the bundle they are given, and English without one', () => {
    const none = { next_steps: [] } as unknown as Parameters<typeof turnButtons>[0];
    assert.deepEqual(turnButtons(none), ['Show Log']);
    assert.equal(goalStatusWord('paused'), 'paused');
    l10n.config({ contents: strings('l10n/bundle.l10n.zh-cn.json') });
    assert.deepEqual(turnButtons(none), ['显示日志']);
    assert.equal(goalStatusWord('paused'), '已暂停');
    assert.equal(confirmRefreshDetail('Ship it'), '下一步行动变为：Ship it');
  });
});
