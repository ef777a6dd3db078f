import { z } from 'zod';
import { planPriority } from '../core/ops/createGoal';

/**
 * A goal from a sentence: the draft a language model writes (or the template offered without one),
 * the review document the user edits, and the reading of that document back. Nothing here writes;
 * "Start a Goal…" creates the goal and its todos through the operations once the user confirms.
 * No VS Code import, so the rules run under unit tests.
 */

export const DraftSchema = z.strictObject({
  goal_id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,79}$/, 'a lowercase slug: a-z, 0-9, ".", "_", "-", a letter or digit first'),
  objective: z.string().trim().min(1).max(500),
  /** Agent todos, highest priority first. */
  todos: z.array(z.string().trim().min(1).max(300)).min(1).max(12),
  /** Decisions a person makes (gates). */
  gates: z.array(z.string().trim().min(1).max(300)).max(6).default([]),
});
export type GoalDraft = z.infer<typeof DraftSchema>;

/** The priority of the n-th todo of a draft (0-based): P1, P2, P3, then P4 — the one create-goal writes. */
export const draftPriority = planPriority;

export function slugOf(sentence: string): string {
  const slug = sentence
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .split('-')
    .slice(0, 5)
    .join('-');
  return slug === '' ? 'new-goal' : slug.slice(0, 60);
}

/** What the model is asked. */
export function draftPrompt(sentence: string): string {
  return [
    'You draft a LoopX goal for an AI coding agent from one sentence.',
    'Reply with ONE JSON object in a ```json fence and nothing else:',
    '{"goal_id": "<lowercase-slug>", "objective": "<one sentence>", "todos": ["<first agent todo>", "..."], "gates": ["<a decision a person must make>"]}',
    'todos: 1 to 12 concrete agent steps, highest priority first. gates: 0 to 6 human approvals (publishing, spending, deleting).',
    '',
    `The sentence: ${sentence}`,
  ].join('\n');
}

/** The draft offered when no language model is available. */
export function templateDraft(sentence: string): GoalDraft {
  return {
    goal_id: slugOf(sentence),
    objective: sentence.trim(),
    todos: [
      'Survey what exists and write down what "done" means.',
      'Make the first change that moves the objective.',
      'Check the result with the validation command.',
    ],
    gates: ['Approve before anything is published.'],
  };
}

export type DraftReading = { ok: true; draft: GoalDraft } | { ok: false; message: string };

function problemsOf(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(draft)'}: ${i.message}`).join('; ');
}

/** The model's reply: the last JSON object in it, checked against {@link DraftSchema}. */
export function readModelDraft(reply: string): DraftReading {
  const fenced = [...reply.matchAll(/```(?:json)?\s*\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  const candidates = fenced.length > 0 ? fenced : [reply.slice(reply.indexOf('{'), reply.lastIndexOf('}') + 1)];
  const text = candidates.at(-1)?.trim() ?? '';
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return {
      ok: false,
      message:
        'the language model replied without a JSON draft ({"goal_id", "objective", "todos", "gates"}); nothing was written. Try again, or use the template.',
    };
  }
  const parsed = DraftSchema.safeParse(raw);
  if (!parsed.success)
    return {
      ok: false,
      message: `the language model's draft is malformed (${problemsOf(parsed.error)}); nothing was written. Try again, or use the template.`,
    };
  return { ok: true, draft: parsed.data };
}

const HEADINGS = {
  todos: '## Agent todos (highest priority first)',
  gates: '## Human gates',
} as const;

/** The review document: plain Markdown the user edits before anything is written. */
export function renderDraftDocument(draft: GoalDraft, source: string): string {
  return [
    `<!-- LoopX goal draft (${source}). Edit anything below, then choose "Create Goal". Nothing is written before. -->`,
    `# Goal: ${draft.goal_id}`,
    '',
    `Objective: ${draft.objective}`,
    '',
    HEADINGS.todos,
    '',
    ...draft.todos.map((t) => `- ${t}`),
    '',
    HEADINGS.gates,
    '',
    ...draft.gates.map((g) => `- ${g}`),
    '',
  ].join('\n');
}

/** Reads the edited review document back; a clear error names the line and the fix. */
export function readDraftDocument(text: string): DraftReading {
  let goalId: string | undefined;
  let objective: string | undefined;
  const lists: Record<'todos' | 'gates', string[]> = { todos: [], gates: [] };
  let section: 'todos' | 'gates' | null = null;
  const lines = text.replace(/<!--[\s\S]*?-->/g, '').split(/\r?\n/);
  for (const [index, rawLine] of lines.entries()) {
    const line = rawLine.trim();
    if (line === '') continue;
    const heading = /^#\s+Goal:\s*(.*)$/.exec(line);
    if (heading) {
      goalId = heading[1]?.trim();
      continue;
    }
    const objectiveLine = /^Objective:\s*(.*)$/.exec(line);
    if (objectiveLine) {
      objective = objectiveLine[1]?.trim();
      continue;
    }
    if (line.startsWith('## ')) {
      section = /todo/i.test(line) ? 'todos' : /gate/i.test(line) ? 'gates' : null;
      if (section === null)
        return {
          ok: false,
          message: `draft line ${index + 1}: unknown section "${line}"; use "${HEADINGS.todos}" or "${HEADINGS.gates}"`,
        };
      continue;
    }
    const item = /^[-*]\s+(.*)$/.exec(line);
    if (item && section !== null) {
      lists[section].push(item[1]?.trim() ?? '');
      continue;
    }
    return {
      ok: false,
      message: `draft line ${index + 1}: "${line.slice(0, 60)}" is not a "# Goal:", "Objective:", section heading or "- " list item under a section`,
    };
  }
  const parsed = DraftSchema.safeParse({ goal_id: goalId ?? '', objective: objective ?? '', ...lists });
  if (!parsed.success) return { ok: false, message: `the goal draft is not complete: ${problemsOf(parsed.error)}` };
  return { ok: true, draft: parsed.data };
}
