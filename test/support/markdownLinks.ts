/**
 * Checks the links of a Markdown file the way its readers follow them: on GitHub (relative to the file) and on
 * the marketplace page (vsce rewrites relative links to the repository's `blob/HEAD/…`, images to `raw/HEAD/…`).
 * A link into the repository must name a file that exists, and an anchor a heading that exists in it.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const REPOSITORY_URL = 'https://github.com/loopx-dev/loopx-vscode';

export interface MarkdownLink {
  target: string;
  image: boolean;
  line: number;
}

/**
 * For each line, whether it is inside a fenced code block, as CommonMark reads fences: a fence opens with three or
 * more backticks or tildes and closes only with the same character at least as many times (so a ```` fence can
 * hold a ``` line, as in docs/executors.md).
 */
export function fencedLines(lines: readonly string[]): boolean[] {
  let open: { char: string; length: number } | null = null;
  return lines.map((text) => {
    const fence = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(text);
    if (open === null) {
      if (fence && !(fence[1]!.startsWith('`') && fence[2]!.includes('`'))) {
        open = { char: fence[1]![0]!, length: fence[1]!.length };
      }
      return open !== null;
    }
    if (fence && fence[1]![0] === open.char && fence[1]!.length >= open.length && fence[2]!.trim() === '') open = null;
    return true;
  });
}

/** Inline links and images outside code blocks and code spans: `[text](target)`, `![alt](target "title")`. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  const lines = markdown.split('\n');
  const fenced = fencedLines(lines);
  lines.forEach((text, index) => {
    if (fenced[index]) return;
    const outsideCode = text.replace(/`[^`]*`/g, '');
    for (const match of outsideCode.matchAll(/(!?)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target: match[2] ?? '', image: match[1] === '!', line: index + 1 });
    }
  });
  return links;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2… */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const lines = markdown.split('\n');
  const fenced = fencedLines(lines);
  for (const [index, text] of lines.entries()) {
    const heading = fenced[index] ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const slug = (heading[1] ?? '')
      .toLowerCase()
      .replace(/<[^>]*>/g, '')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/**
 * What is wrong with each link of `file` (a path in `repoRoot`, or a packaged copy read as if it were there):
 * a relative link or a link into the repository whose file is missing, or whose anchor names no heading.
 * `markdown` defaults to the file's text. Links elsewhere on the web are not followed (no network).
 */
export function brokenLinks(repoRoot: string, file: string, markdown = readFileSync(file, 'utf8')): string[] {
  const problems: string[] = [];
  const where = (link: MarkdownLink): string => `${relative(repoRoot, file)}:${link.line} ${link.target}`;
  for (const link of markdownLinks(markdown)) {
    let path: string;
    const [location = '', anchor] = link.target.split('#', 2);
    const repoPrefix = new RegExp(
      `^${REPOSITORY_URL.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(blob|raw|tree)/(HEAD|main)/`,
    );
    if (location === '') {
      path = file;
    } else if (repoPrefix.test(location)) {
      path = join(repoRoot, decodeURIComponent(location.replace(repoPrefix, '')));
    } else if (/^[a-z][a-z0-9+.-]*:/i.test(location)) {
      if (link.image && !location.startsWith('https:')) problems.push(`${where(link)}: an image must be https`);
      continue;
    } else {
      path = resolve(dirname(file), decodeURIComponent(location));
      if (relative(repoRoot, path).startsWith('..')) {
        problems.push(`${where(link)}: points outside the repository`);
        continue;
      }
    }
    if (!existsSync(path)) {
      problems.push(`${where(link)}: ${relative(repoRoot, path)} does not exist in the repository`);
      continue;
    }
    if (anchor !== undefined && anchor !== '' && statSync(path).isFile() && path.endsWith('.md')) {
      const text = path === file ? markdown : readFileSync(path, 'utf8');
      if (!headingAnchors(text).has(anchor.toLowerCase())) {
        problems.push(`${where(link)}: no heading "#${anchor}" in ${relative(repoRoot, path)}`);
      }
    }
  }
  return problems;
}
