import { z } from 'zod';
import { publicSafeCompact } from './text';

/**
 * The original's `backlog_hygiene_warning` (loopx/control_plane/work_items/backlog_hygiene.py): when a goal has no
 * open agent todo but its state file's `## Next Action` or `## Operating Lessons` sections hold bullets that read as
 * durable work (any bullet of Next Action; an Operating Lessons bullet naming a priority, todo, backlog, follow-up,
 * queue, audit, regression, smoke, cadence, mirror, monitor or sub-agent), the work is hidden from the scheduler:
 * mirror it into an Agent Todo.
 */

export const BacklogHygieneWarningSchema = z.object({
  kind: z.literal('hidden_backlog_without_agent_todo'),
  requires_agent_todo: z.literal(true),
  source_sections: z.array(z.string()),
  agent_open_count: z.number().int(),
  evidence_count: z.number().int(),
  first_evidence: z.array(z.object({ section: z.string(), text: z.string() })),
  recommended_action: z.string(),
});
export type BacklogHygieneWarning = z.infer<typeof BacklogHygieneWarningSchema>;

const SECTIONS = ['Next Action', 'Operating Lessons'] as const;
const HEADING = /^##+\s+(.+?)\s*$/;
const BULLET = /^\s*(?:[-*]|\d+[.)])\s+(.+?)\s*$/;
const HINT =
  /(?:\[p[0-4]\]|todo|backlog|follow[- ]?up|queue|audit|regression|smoke|cadence|mirror|monitor|sub-?agent|待办|回归|审计|修复|检查|推进)/i;
const MAX_EVIDENCE = 3;
const TEXT_LIMIT = 220;

export function backlogHygieneWarning(stateText: string, agentOpenCount: number): BacklogHygieneWarning | null {
  if (agentOpenCount > 0) return null;
  const lines: Record<string, string[]> = Object.fromEntries(SECTIONS.map((s) => [s, []]));
  let current: string | null = null;
  for (const line of stateText.split(/\r\n|\r|\n/)) {
    const heading = HEADING.exec(line);
    if (heading !== null) {
      const name = (heading[1] ?? '').trim().toLowerCase();
      current = SECTIONS.find((s) => s.toLowerCase() === name) ?? null;
      continue;
    }
    if (current !== null) lines[current]?.push(line);
  }
  const evidence: { section: string; text: string }[] = [];
  for (const section of SECTIONS) {
    for (const line of lines[section] ?? []) {
      const bullet = BULLET.exec(line);
      if (bullet === null) continue;
      const text = publicSafeCompact(bullet[1] ?? '', TEXT_LIMIT);
      if (text === null) continue;
      if (section === 'Next Action' || HINT.test(text)) evidence.push({ section, text });
    }
  }
  if (evidence.length === 0) return null;
  return {
    kind: 'hidden_backlog_without_agent_todo',
    requires_agent_todo: true,
    source_sections: [...new Set(evidence.map((e) => e.section))].sort(),
    agent_open_count: agentOpenCount,
    evidence_count: evidence.length,
    first_evidence: evidence.slice(0, MAX_EVIDENCE),
    recommended_action:
      'mirror durable follow-up work into Agent Todo before heartbeat scheduling relies on Next Action or Operating Lessons',
  };
}
