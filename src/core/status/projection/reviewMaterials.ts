import * as path from 'node:path';

/**
 * A todo's `review_materials` as the original lists them (loopx/materials.py `extract_review_materials`, called by
 * its todo parser on each task line's text): the markdown files the text links, `[label](path.md#anchor)` links
 * first, then `` `path.md` `` in backticks, each once (by path and anchor), each with whether it exists. The rules:
 * - a reference is percent-decoded, `<`/`>` stripped, split at its first `#` (the anchor, when not empty);
 * - only a local path (no URL scheme but `file:`) whose name ends in `.md`/`.markdown` (any case) is listed;
 * - the label: the link's text, else (and for a backtick reference) the file's name;
 * - `exists`: a relative path is looked up under the goal's repo, then the state file's folder (a root it would leave
 *   by `..` is skipped), true when one has it; an absolute path (`~` expanded) exists when it lies under one of them
 *   and is there; a path leaving every root does not exist;
 * - the item: `label`, `path` (the reference as written), `exists`, and `anchor` when there is one (the original's
 *   `resolved_path` is redacted out of status).
 * The look-ups are the caller's (`exists`), so the status caches can key the item on the files looked at.
 */
export interface ReviewMaterial {
  label: string;
  path: string;
  exists: boolean;
  anchor?: string;
}

const MARKDOWN_LINK = /\[([^\]]+)\]\(([^)]+?\.(?:md|markdown)(?:#[^)]+)?)\)/giu;
const BACKTICK_MARKDOWN = /`([^`]+?\.(?:md|markdown)(?:#[^`]*)?)`/giu;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/u;

/** Python's `unquote`: each valid %XX run decoded as UTF-8, anything else kept. */
function unquote(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/gu, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** `split_material_reference`: the decoded path and its anchor (null when none or empty). */
function splitReference(raw: string): [string, string | null] {
  const text = unquote(raw.trim().replace(/^[<>]+|[<>]+$/gu, ''));
  const hash = text.indexOf('#');
  if (hash < 0) return [text, null];
  const anchor = text.slice(hash + 1);
  return [text.slice(0, hash), anchor === '' ? null : anchor];
}

/** urlparse's scheme (lowercased, '' when none) and, for `file:`, its path. */
function parsedPath(raw: string): { scheme: string; path: string } {
  const match = SCHEME.exec(raw);
  if (match === null) return { scheme: '', path: raw };
  const scheme = (match[1] ?? '').toLowerCase();
  let rest = raw.slice(match[0].length);
  if (rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    rest = slash < 0 ? '' : rest.slice(slash);
  }
  return { scheme, path: rest.replace(/[?#].*$/u, '') };
}

/** pathlib's `name` and `suffix`. */
function baseName(file: string): string {
  const parts = file.split('/').filter((part) => part !== '' && part !== '.');
  return parts[parts.length - 1] ?? '';
}
function suffix(file: string): string {
  const name = baseName(file);
  const dot = name.lastIndexOf('.');
  return dot > 0 && dot < name.length - 1 ? name.slice(dot) : '';
}

/** `is_markdown_path`. */
function isMarkdownPath(raw: string): boolean {
  const parsed = parsedPath(raw);
  if (parsed.scheme !== '' && parsed.scheme !== 'file') return false;
  const [file] = splitReference(parsed.scheme === 'file' ? parsed.path : raw);
  const ext = suffix(file).toLowerCase();
  return ext === '.md' || ext === '.markdown';
}

const isUnder = (file: string, root: string): boolean => {
  const relative = path.relative(root, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
};

/**
 * The files `resolve_review_material_path` would look at for a reference, in its order (`roots`: the goal's, absolute
 * and deduplicated): an empty list when the reference resolves under no root.
 */
export function materialCandidates(rawPath: string, roots: readonly string[], homeDir: string): string[] {
  const parsed = parsedPath(rawPath);
  if (parsed.scheme !== '' && parsed.scheme !== 'file') return [];
  const [text] = splitReference(parsed.scheme === 'file' ? parsed.path : rawPath);
  if (!isMarkdownPath(text) || roots.length === 0) return [];
  const expanded = text === '~' || text.startsWith('~/') ? homeDir + text.slice(1) : text;
  if (path.isAbsolute(expanded)) {
    const candidate = path.resolve(expanded);
    return roots.some((root) => isUnder(candidate, root)) ? [candidate] : [];
  }
  return roots
    .map((root) => [root, path.resolve(root, expanded)] as const)
    .flatMap(([root, c]) => (isUnder(c, root) ? [c] : []));
}

/** `material_roots` without a runtime root: the goal's repo (`~` expanded), then its state file's folder. */
export function materialRoots(repo: string | null | undefined, stateFile: string | null, homeDir: string): string[] {
  const roots: string[] = [];
  const trimmed = (repo ?? '').trim();
  if (trimmed !== '')
    roots.push(path.resolve(trimmed === '~' || trimmed.startsWith('~/') ? homeDir + trimmed.slice(1) : trimmed));
  if (stateFile !== null) roots.push(path.dirname(path.resolve(stateFile)));
  return [...new Set(roots)];
}

/** `extract_review_materials` over a task line's text; `exists` answers whether one file is there. */
export function reviewMaterials(
  text: string,
  roots: readonly string[],
  homeDir: string,
  exists: (file: string) => boolean,
): ReviewMaterial[] {
  const matches: [string, string][] = [];
  for (const match of text.matchAll(MARKDOWN_LINK)) {
    const reference = match[2] ?? '';
    matches.push([(match[1] ?? '').trim() || baseName(reference), reference.trim()]);
  }
  for (const match of text.matchAll(BACKTICK_MARKDOWN)) {
    const reference = (match[1] ?? '').trim();
    matches.push([baseName(splitReference(reference)[0]), reference]);
  }
  const materials: ReviewMaterial[] = [];
  const seen = new Set<string>();
  for (const [label, rawPath] of matches) {
    const [file, anchor] = splitReference(rawPath);
    if (!isMarkdownPath(file)) continue;
    const key = `${file}#${anchor ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const found = materialCandidates(rawPath, roots, homeDir).some((candidate) => exists(candidate));
    materials.push({
      label: label || baseName(file),
      path: rawPath,
      exists: found,
      ...(anchor !== null ? { anchor } : {}),
    });
  }
  return materials;
}
