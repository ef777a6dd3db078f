import { LoopxError } from '../errors';
import { compactText, firstSectionOf, parseStateDocument, sectionEntries, type StateDocument } from './document';
import { applyEdits } from './edits';
import type { LineSplice } from './lines';
import { DEFAULT_SECTION_TITLES, type SectionRole } from './sections';

/**
 * Writers for the durable route and the front matter. The Next Action section is found through
 * the same heading table the readers use, so `### next action` is rewritten where it is instead
 * of getting a second `## Next Action` that status would never read.
 */
export interface TextEdit {
  text: string;
  changed: boolean;
}

/** The durable route: the first entry of the first Next Action section, or null. */
export function readNextAction(doc: StateDocument): string | null {
  const section = firstSectionOf(doc, 'next_action');
  if (section === null) return null;
  return sectionEntries(doc, section, { limit: 1 })[0] ?? null;
}

/** Sections a new Next Action section is placed before (the original's anchors), in order of preference. */
const NEXT_ACTION_ANCHORS: readonly SectionRole[] = [
  'recent_feedback',
  'progress_ledger',
  'operating_lessons',
  'archive',
];

/**
 * Replaces the body of the first Next Action section with a blank line, `- <text>` and a blank
 * line, keeping its heading line as written. Without such a section, one is inserted before the
 * first anchor section, or appended. Only blank lines differing counts as no change.
 */
export function writeNextAction(text: string, nextAction: string): TextEdit {
  const route = compactText(nextAction);
  if (route === '')
    throw new LoopxError(
      'next_action_empty',
      'the next action text is empty; give the durable route as one line of text',
    );
  const doc = parseStateDocument(text);
  const section = firstSectionOf(doc, 'next_action');
  const bullet = `- ${route}`;
  let splice: LineSplice;
  if (section !== null) {
    const current = doc.lines
      .slice(section.bodyStart, section.end)
      .map((l) => l.content)
      .filter((c) => c.trim() !== '');
    if (current.length === 1 && current[0] === bullet) return { text, changed: false };
    const body = section.end < doc.lines.length ? ['', bullet, ''] : ['', bullet];
    splice = { from: section.bodyStart, to: section.end, lines: body };
  } else {
    const block = [`## ${DEFAULT_SECTION_TITLES.next_action}`, '', bullet, ''];
    const anchor = NEXT_ACTION_ANCHORS.map((role) => firstSectionOf(doc, role)).find((s) => s !== null);
    if (anchor) {
      splice = { from: anchor.headingLine, to: anchor.headingLine, lines: block };
    } else {
      const last = doc.lines[doc.lines.length - 1];
      const spacer = last !== undefined && last.content.trim() !== '' ? [''] : [];
      splice = { from: doc.lines.length, to: doc.lines.length, lines: [...spacer, ...block.slice(0, -1)] };
    }
  }
  const newText = applyEdits(doc, [splice]);
  return { text: newText, changed: newText !== text };
}

/**
 * Sets one front-matter field (`key: value`), rewriting only its line; a missing key is added
 * before the closing `---`, and a file without front matter gets one.
 */
export function setFrontMatterField(text: string, key: string, value: string): TextEdit {
  if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(key))
    throw new LoopxError(
      'invalid_frontmatter_key',
      `front matter key ${JSON.stringify(key)} is not a plain key such as updated_at`,
      { key },
    );
  if (/[\r\n]/.test(value))
    throw new LoopxError('invalid_frontmatter_value', `front matter ${key} must be a single line`, { key });
  const doc = parseStateDocument(text);
  const fm = doc.frontMatter;
  let splice: LineSplice;
  if (fm === null) {
    splice = { from: 0, to: 0, lines: ['---', `${key}: ${value}`, '---'] };
  } else {
    const line = fm.fieldLines[key];
    if (line !== undefined) {
      if (fm.fields[key] === value) return { text, changed: false };
      const content = doc.lines[line]?.content ?? '';
      splice = { from: line, to: line + 1, lines: [`${content.slice(0, content.indexOf(':'))}: ${value}`] };
    } else {
      splice = { from: fm.closeLine, to: fm.closeLine, lines: [`${key}: ${value}`] };
    }
  }
  const newText = applyEdits(doc, [splice]);
  return { text: newText, changed: newText !== text };
}
