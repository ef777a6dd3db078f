import { z } from 'zod';
import { stateDigest16 } from '../state/digest';
import { firstSectionOf, sectionEntries, type StateDocument } from '../state/document';
import type { SourceLine } from '../state/lines';
import type { SectionRole } from '../state/sections';

/**
 * The snapshot of ACTIVE_GOAL_STATE.md a run records (`state` in the run record): its digest and
 * `updated_at`, which stale-run detection compares against the file later, plus the route,
 * feedback and progress as they were when the run was recorded.
 */

export const StateSnapshotSchema = z.object({
  path: z.string(),
  sha256_16: z.string().regex(/^[0-9a-f]{16}$/u),
  /** `status` and `updated_at` of the front matter, when present. */
  frontmatter: z.record(z.string(), z.string()),
  /** Up to 8 Next Action entries, not truncated. */
  next_action: z.array(z.string()),
  /** The first 5 non-empty lines of Recent User Feedback, markers kept. */
  recent_feedback: z.array(z.string()),
  /** The first 5 non-empty lines of Progress Ledger, markers kept. */
  progress: z.array(z.string()),
});
export type StateSnapshot = z.infer<typeof StateSnapshotSchema>;

/** The compact form the index row carries: only what staleness detection reads. */
export const IndexStateSchema = z.object({
  sha256_16: z.string(),
  frontmatter: z.object({ updated_at: z.string().nullable() }),
});
export type IndexState = z.infer<typeof IndexStateSchema>;

const SNAPSHOT_FRONTMATTER_KEYS = ['status', 'updated_at'] as const;
const NEXT_ACTION_ENTRIES_RECORDED = 8;
const SECTION_LINES_RECORDED = 5;

export function snapshotState(statePath: string, doc: StateDocument): StateSnapshot {
  const fields = doc.frontMatter?.fields ?? {};
  const frontmatter: Record<string, string> = {};
  for (const key of SNAPSHOT_FRONTMATTER_KEYS) {
    const value = fields[key];
    if (value !== undefined) frontmatter[key] = value;
  }
  const nextSection = firstSectionOf(doc, 'next_action');
  return {
    path: statePath,
    sha256_16: stateDigest16(doc.text),
    frontmatter,
    next_action: nextSection
      ? sectionEntries(doc, nextSection, { limit: NEXT_ACTION_ENTRIES_RECORDED, maxLength: Number.POSITIVE_INFINITY })
      : [],
    recent_feedback: firstLinesOf(doc, 'recent_feedback'),
    progress: firstLinesOf(doc, 'progress_ledger'),
  };
}

export function indexState(snapshot: StateSnapshot): IndexState {
  return { sha256_16: snapshot.sha256_16, frontmatter: { updated_at: snapshot.frontmatter['updated_at'] ?? null } };
}

function firstLinesOf(doc: StateDocument, role: SectionRole): string[] {
  const section = firstSectionOf(doc, role);
  if (section === null) return [];
  const lines: string[] = [];
  for (let i = section.bodyStart; i < section.end && lines.length < SECTION_LINES_RECORDED; i++) {
    const trimmed = (doc.lines[i] as SourceLine).content.trim();
    if (trimmed !== '') lines.push(trimmed);
  }
  return lines;
}
