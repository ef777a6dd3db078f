import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomicSync } from '../fs/atomicWrite';
import { HOST_RESULT_SCHEMA_VERSION, type HostRequest, type HostResult, type Usage } from '../protocol/contract';
import { renderTurnPrompt } from '../protocol/prompt';

/**
 * The built-in demo agent: deterministic, no network, and it REALLY edits the demo workspace
 * (examples/demo-workspace, goal `tidy-notes`). It knows the goal's agent todos:
 *
 *   related  add a "Related" section to each note, linking notes that share a tag
 *   index    write notes/index.md listing every note by tag
 *   links    fix broken relative links between notes
 *   publish  "publish to the wiki": the demo has no wiki, so it exports one Markdown file,
 *            and only once no open gate holds the todo back
 *
 * Any other todo gets a `user_action_required` result asking for a human. Every edit is
 * computed from the files as they are, so running a turn twice changes nothing the second time.
 * Usage is an estimate (characters / 4, as Cline does) and says so.
 */

export { DEMO_AGENT_BUNDLE, demoAgentArgv } from './installedDemoAgent';

interface Note {
  file: string;
  title: string;
  tags: string[];
  text: string;
}

const NOTES_DIR = 'notes';
const INDEX_FILE = 'index.md';
const EXPORT_FILE = path.join('wiki-export', 'knowledge-base.md');
/** Nominal prices for the estimate, USD per million tokens. */
const PRICE_PER_MTOK = { input: 3, output: 15 };

function readNotes(workspace: string): Note[] {
  const dir = path.join(workspace, NOTES_DIR);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((file) => file.endsWith('.md') && file !== INDEX_FILE)
    .sort()
    .map((file) => {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      const title = /^# (.+)$/m.exec(text)?.[1]?.trim() ?? file.replace(/\.md$/, '');
      const tagLine = /^Tags:\s*(.+)$/m.exec(text)?.[1] ?? '';
      const tags = tagLine
        .split(',')
        .map((t) => t.trim().toLowerCase())
        .filter((t) => t !== '');
      return { file, title, tags, text };
    });
}

/** Writes `text` when it differs; returns the project-relative path when it did. */
function writeIfChanged(workspace: string, relative: string, text: string): string | null {
  const target = path.join(workspace, relative);
  if (fs.existsSync(target) && fs.readFileSync(target, 'utf8') === text) return null;
  fs.mkdirSync(path.dirname(target), { recursive: true });
  writeFileAtomicSync(target, text);
  return relative.split(path.sep).join('/');
}

interface WorkDone {
  changed: string[];
  evidence: string;
  summary: string;
  classification: string;
}

function addRelatedSections(workspace: string): WorkDone {
  const notes = readNotes(workspace);
  const changed: string[] = [];
  let links = 0;
  for (const note of notes) {
    const related = notes.filter(
      (other) => other.file !== note.file && other.tags.some((tag) => note.tags.includes(tag)),
    );
    links += related.length;
    const body = note.text.replace(/\n*## Related\n[\s\S]*?(?=\n## |\s*$)/, '').replace(/\s*$/, '');
    const section =
      related.length === 0
        ? ['## Related', '', '- (no other note shares a tag)']
        : ['## Related', '', ...related.map((other) => `- [${other.title}](${other.file})`)];
    const file = writeIfChanged(workspace, path.join(NOTES_DIR, note.file), `${body}\n\n${section.join('\n')}\n`);
    if (file !== null) changed.push(file);
  }
  return {
    changed,
    classification: 'notes_related_linked',
    evidence: `${notes.length} notes under notes/ end with a Related section (${links} links to notes sharing a tag)`,
    summary:
      changed.length === 0
        ? `Every note already had an up-to-date Related section; nothing changed (${links} links).`
        : `Added or refreshed the Related section of ${changed.length} note(s): ${links} links between notes that share a tag.`,
  };
}

function writeIndex(workspace: string): WorkDone {
  const notes = readNotes(workspace);
  const tags = [...new Set(notes.flatMap((n) => n.tags))].sort();
  const lines = [
    '# Notes index',
    '',
    'Every note, grouped by tag. A note with several tags appears under each of them.',
  ];
  for (const tag of tags) {
    lines.push('', `## ${tag}`, '');
    for (const note of notes.filter((n) => n.tags.includes(tag)).sort((a, b) => a.title.localeCompare(b.title)))
      lines.push(`- [${note.title}](${note.file})`);
  }
  const untagged = notes.filter((n) => n.tags.length === 0);
  if (untagged.length > 0) {
    lines.push('', '## (untagged)', '');
    for (const note of untagged) lines.push(`- [${note.title}](${note.file})`);
  }
  const file = writeIfChanged(workspace, path.join(NOTES_DIR, INDEX_FILE), `${lines.join('\n')}\n`);
  return {
    changed: file === null ? [] : [file],
    classification: 'notes_index_written',
    evidence: `notes/index.md lists ${notes.length} notes under ${tags.length} tags`,
    summary:
      file === null
        ? 'notes/index.md was already up to date.'
        : `Wrote notes/index.md: ${notes.length} notes under ${tags.length} tags.`,
  };
}

const LINK = /\[([^\]]*)\]\(([^)\s]+)\)/g;

function fixLinks(workspace: string): WorkDone {
  const dir = path.join(workspace, NOTES_DIR);
  const files = fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.md'))
        .sort()
    : [];
  const byLowerName = new Map(files.map((f) => [f.toLowerCase(), f]));
  const changed: string[] = [];
  let fixed = 0;
  let unresolved = 0;
  let checked = 0;
  for (const file of files) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    const next = text.replace(LINK, (whole: string, label: string, target: string) => {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) return whole;
      checked++;
      const [targetPath = '', anchor] = target.split('#', 2);
      if (fs.existsSync(path.join(dir, targetPath))) return whole;
      // A broken link to another note: match its file name, ignoring case, folders and a missing ".md".
      const base = path.posix.basename(targetPath).toLowerCase();
      const candidate = byLowerName.get(base) ?? byLowerName.get(`${base}.md`);
      if (candidate === undefined) {
        unresolved++;
        return whole;
      }
      fixed++;
      return `[${label}](${candidate}${anchor === undefined ? '' : `#${anchor}`})`;
    });
    const written = writeIfChanged(workspace, path.join(NOTES_DIR, file), next);
    if (written !== null) changed.push(written);
  }
  return {
    changed,
    classification: 'notes_links_fixed',
    evidence: `${checked} relative links checked in notes/: ${fixed} fixed, ${unresolved} without a matching note`,
    summary:
      fixed === 0
        ? `All ${checked - unresolved} resolvable relative links already worked; nothing changed.`
        : `Fixed ${fixed} broken relative link(s) in ${changed.length} note(s).`,
  };
}

function exportToWiki(workspace: string): WorkDone {
  const notes = readNotes(workspace);
  const parts = [
    '# Knowledge base',
    '',
    '_Exported by the LoopX demo agent: the demo has no real wiki, so this file stands in for it._',
  ];
  for (const note of notes) parts.push('', note.text.replace(/^# /m, '## ').trim());
  const file = writeIfChanged(workspace, EXPORT_FILE, `${parts.join('\n')}\n`);
  return {
    changed: file === null ? [] : [file],
    classification: 'knowledge_base_exported',
    evidence: `${EXPORT_FILE.split(path.sep).join('/')} holds all ${notes.length} notes`,
    summary: `Exported ${notes.length} notes to ${EXPORT_FILE.split(path.sep).join('/')} (the demo's stand-in for the team wiki).`,
  };
}

type DemoTask = 'related' | 'index' | 'links' | 'publish';

const TASKS_BY_ID: Readonly<Record<string, DemoTask>> = {
  todo_related: 'related',
  todo_index: 'index',
  todo_links: 'links',
  todo_publish: 'publish',
};
const TASK_PATTERNS: readonly [RegExp, DemoTask][] = [
  [/\brelated\b/i, 'related'],
  [/\bindex(\.md)?\b/i, 'index'],
  [/\bbroken\b.*\blinks?\b|\blinks?\b.*\bbroken\b/i, 'links'],
  [/\bpublish/i, 'publish'],
];

function taskOf(todo: { todo_id: string; title: string }): DemoTask | null {
  return TASKS_BY_ID[todo.todo_id] ?? TASK_PATTERNS.find(([pattern]) => pattern.test(todo.title))?.[1] ?? null;
}

function estimateUsage(request: HostRequest, outputChars: number): Usage {
  const inputTokens = Math.ceil(renderTurnPrompt(request, { size: 'full', mode: 'executor' }).length / 4);
  const outputTokens = Math.ceil(outputChars / 4);
  const cost = (inputTokens * PRICE_PER_MTOK.input + outputTokens * PRICE_PER_MTOK.output) / 1_000_000;
  return {
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    cost_usd: Math.round(cost * 1e6) / 1e6,
    estimated: true,
  };
}

function base(request: HostRequest): Pick<HostResult, 'schema_version' | 'turn_key'> {
  return { schema_version: HOST_RESULT_SCHEMA_VERSION, turn_key: request.turn_key };
}

/** One turn of the demo agent against the workspace folder; edits the files and returns the result. */
export function performDemoTurn(workspaceDir: string, request: HostRequest): HostResult {
  const todo = request.selected_todo;
  // The recorded next action is usually this very todo; once it is done, point past it.
  const recorded = request.next_action;
  const nextAction =
    recorded === null || (todo !== null && recorded.trim() === todo.title.trim())
      ? 'Run the next turn on the next open todo of the goal.'
      : recorded;
  if (todo === null) {
    return {
      ...base(request),
      result_kind: 'wait',
      summary: 'No todo was selected for the demo agent, so it did nothing.',
      next_action: nextAction,
      evidence: [],
      changed_files: [],
      usage: estimateUsage(request, 80),
    };
  }
  const task = taskOf(todo);
  const gate = request.open_gates.find((g) => g.global_gate || g.blocked_todo_ids.includes(todo.todo_id));
  if (task === null || gate !== undefined) {
    const question =
      gate !== undefined
        ? `Todo ${todo.todo_id} waits for the decision "${gate.title}" (${gate.todo_id}). Please resolve that gate first.`
        : `The demo agent only knows the demo goal's notes tasks and cannot do "${todo.title}". Please do it yourself or give it to a real agent.`;
    return {
      ...base(request),
      result_kind: 'user_action_required',
      summary:
        gate !== undefined
          ? `Stopped: ${todo.todo_id} is held back by the gate ${gate.todo_id}.`
          : `Stopped: ${todo.todo_id} is not a task the demo agent knows.`,
      next_action: `Resolve ${gate?.todo_id ?? todo.todo_id}, then run the next turn.`,
      evidence: [],
      todo: { todo_id: todo.todo_id, disposition: gate !== undefined ? 'needs_user' : 'blocked', question },
      changed_files: [],
      usage: estimateUsage(request, question.length),
    };
  }
  const work = { related: addRelatedSections, index: writeIndex, links: fixLinks, publish: exportToWiki }[task](
    workspaceDir,
  );
  const outputChars = work.changed.reduce(
    (sum, file) => sum + fs.readFileSync(path.join(workspaceDir, file), 'utf8').length,
    work.summary.length,
  );
  return {
    ...base(request),
    result_kind: 'validated_completion',
    summary: work.summary,
    classification: work.classification,
    recommended_action: nextAction,
    next_action: nextAction,
    delivery_batch_scale: work.changed.length > 1 ? 'multi_surface' : 'single_surface',
    delivery_outcome: work.changed.length > 0 ? 'outcome_progress' : 'surface_only',
    evidence: [work.evidence],
    todo: { todo_id: todo.todo_id, disposition: 'done', evidence: work.evidence, no_follow_up: true },
    changed_files: work.changed,
    usage: estimateUsage(request, outputChars),
  };
}
