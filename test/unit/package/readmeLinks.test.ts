/**
 * The README (the marketplace page) and the CHANGELOG (its Changelog tab) link only to files that exist in the
 * repository, and to headings that exist in them: on GitHub the links are relative, and vsce rewrites them to
 * the repository package.json names. The packaged README itself is checked by test/e2e/installedWebviews.test.ts.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/demoWorkspace';
import { brokenLinks, fencedLines, headingAnchors, markdownLinks, REPOSITORY_URL } from '../../support/markdownLinks';

const README = join(REPO_ROOT, 'README.md');

describe('README and CHANGELOG links', () => {
  it('reads the links of a Markdown text, not those in code', () => {
    const links = markdownLinks(
      'See [a](docs/a.md#x) and ![b](img/b.png "t").\n`[c](not-a-link)`\n```\n[d](no)\n```\n[e](https://x.test)',
    );
    assert.deepEqual(
      links.map((l) => [l.target, l.image]),
      [
        ['docs/a.md#x', false],
        ['img/b.png', true],
        ['https://x.test', false],
      ],
    );
    assert.deepEqual(
      [...headingAnchors('# Two commands\n## Watching a turn, reviewing what it changed\n# Two commands')],
      ['two-commands', 'watching-a-turn-reviewing-what-it-changed', 'two-commands-1'],
    );
  });

  it('reads fences as CommonMark does: a longer fence holds a shorter one, and headings after it count', () => {
    const text = ['# A', '````md', '```', '# not a heading', '```', '````', '# B', '~~~', '```', '~~~', '# C'].join(
      '\n',
    );
    assert.deepEqual(fencedLines(text.split('\n')), [
      false,
      true,
      true,
      true,
      true,
      true,
      false,
      true,
      true,
      true,
      false,
    ]);
    assert.deepEqual([...headingAnchors(text)], ['a', 'b', 'c']);
  });

  it('reports a missing file, a missing heading and a plain-http image', () => {
    const problems = brokenLinks(
      REPO_ROOT,
      README,
      [
        '[gone](docs/no-such-file.md)',
        '[anchor](docs/executors.md#no-such-heading)',
        `[repo](${REPOSITORY_URL}/blob/HEAD/docs/missing.md)`,
        '![img](http://example.test/a.png)',
        '[ok](docs/executors.md#watching-a-turn-reviewing-what-it-changed)',
        `![ok](${REPOSITORY_URL}/raw/HEAD/docs/images/sidebar.png)`,
      ].join('\n'),
    );
    assert.equal(problems.length, 4, problems.join('\n'));
  });

  it('README.md links only to files and headings that exist in the repository', () => {
    assert.ok(markdownLinks(readFileSync(README, 'utf8')).length > 10, 'the README has its links');
    assert.deepEqual(brokenLinks(REPO_ROOT, README), []);
  });

  it('CHANGELOG.md links only to files and headings that exist in the repository', () => {
    assert.deepEqual(brokenLinks(REPO_ROOT, join(REPO_ROOT, 'CHANGELOG.md')), []);
  });

  it('every docs/*.md links only to files and headings that exist in the repository', () => {
    const docs = readdirSync(join(REPO_ROOT, 'docs')).filter((name) => name.endsWith('.md'));
    assert.ok(docs.length > 10, `docs/ has its pages (${docs.length})`);
    assert.deepEqual(
      docs.flatMap((name) => brokenLinks(REPO_ROOT, join(REPO_ROOT, 'docs', name))),
      [],
    );
  });

  it('package.json names the repository vsce rewrites the links to', () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      repository?: { url?: string };
      homepage?: string;
      bugs?: { url?: string };
    };
    assert.equal(manifest.repository?.url, `${REPOSITORY_URL}.git`);
    assert.equal(manifest.homepage, `${REPOSITORY_URL}#readme`);
    assert.equal(manifest.bugs?.url, `${REPOSITORY_URL}/issues`);
  });
});
