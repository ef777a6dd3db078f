/**
 * The ONE heading → section-role table. Every reader and writer of the state file classifies
 * headings through `sectionRoleOf`, so status, refresh-state and todo edits can no longer disagree
 * about which section is which (the original had two tables and an exact-match third reader).
 */
export type TodoRole = 'user' | 'agent';
export type SectionRole =
  TodoRole | 'archive' | 'next_action' | 'recent_feedback' | 'progress_ledger' | 'operating_lessons' | 'other';

interface RoleRule {
  role: Exclude<SectionRole, 'other'>;
  /** 'contains': the heading contains a marker; 'equals': the heading is a marker. */
  match: 'contains' | 'equals';
  markers: readonly string[];
}

/** Checked in order: archive markers first, so "Agent Todo Archive" is an archive, not open work. */
export const SECTION_ROLE_RULES: readonly RoleRule[] = [
  {
    role: 'archive',
    match: 'contains',
    markers: ['todo archive', 'work archive', 'completed archive', 'completed work', '完成归档', '待办归档'],
  },
  { role: 'user', match: 'contains', markers: ['user todo', 'owner review reading queue', 'owner reading queue'] },
  { role: 'agent', match: 'contains', markers: ['agent todo', 'codex todo', 'project agent todo'] },
  { role: 'next_action', match: 'equals', markers: ['next action'] },
  { role: 'recent_feedback', match: 'equals', markers: ['recent user feedback'] },
  { role: 'progress_ledger', match: 'equals', markers: ['progress ledger'] },
  { role: 'operating_lessons', match: 'equals', markers: ['operating lessons'] },
];

/** Lowercased with whitespace runs collapsed: the form headings are compared in. */
export function normalizeHeadingTitle(title: string): string {
  return title.trim().replace(/\s+/g, ' ').toLowerCase();
}

export function sectionRoleOf(title: string): SectionRole {
  const normalized = normalizeHeadingTitle(title);
  for (const rule of SECTION_ROLE_RULES) {
    for (const marker of rule.markers) {
      if (rule.match === 'equals' ? normalized === marker : normalized.includes(marker)) return rule.role;
    }
  }
  return 'other';
}

/** The heading a writer creates for a role that has no section yet. */
export const DEFAULT_SECTION_TITLES: Readonly<Record<TodoRole | 'next_action', string>> = {
  // The original's headings for a section it has to create.
  user: 'User Todo / Owner Review Reading Queue',
  agent: 'Agent Todo',
  next_action: 'Next Action',
};

export interface ParsedHeading {
  level: number;
  title: string;
}

/**
 * A heading is a line that starts with two or more `#` (level 1 is the document title and does
 * not delimit sections, as in the original). An optional closing `#` run is dropped.
 */
export function parseHeading(content: string): ParsedHeading | null {
  if (content.charCodeAt(0) !== 35 || content.charCodeAt(1) !== 35) return null;
  let level = 2;
  while (content.charCodeAt(level) === 35) level++;
  let title = content.slice(level).trim();
  const closing = /\s#+$/.exec(title);
  if (closing) title = title.slice(0, closing.index).trim();
  else if (/^#+$/.test(title)) title = '';
  return { level, title };
}
