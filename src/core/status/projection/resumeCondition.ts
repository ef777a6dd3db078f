import { z } from 'zod';
import { firstSectionOf, type StateDocument } from '../../state/document';
import { normalizedClaim } from './claimedCounts';
import { todoTaskClass } from './todoTaskClass';

/**
 * A todo's resume condition as the original's status summaries carry it on each todo with a `resume_when`
 * (loopx/control_plane/todos/todo_summary.py `apply_resume_conditions`): `resume_when` (whitespace-collapsed,
 * lowercased, of the original's grammar), `resume_condition` and `resume_ready` (the condition holds).
 * - `todo_done:<id>`: the target todo looked up by id among the user, agent and archived todos; its status,
 *   archive state, section, task class and claim; it holds when the target is done.
 * - `capacity_available:<capability>`: the runtime's capability provider, never satisfied in a status.
 * - `pr_merged:[owner/repo]#<n>`: not satisfied (ours reads no rollout event log); the original's PR fields
 *   (`pr_number`, `pr_repo`, `source`, …) are not carried.
 * - any other kind: `unsupported: true`.
 */

export const ResumeFieldsSchema = z.object({
  resume_when: z.string().optional(),
  resume_condition: z.record(z.string(), z.unknown()).optional(),
  resume_ready: z.boolean().optional(),
});
export type ResumeFields = z.infer<typeof ResumeFieldsSchema>;

const RESUME_WHEN = /^[a-z][a-z0-9_-]{0,31}(?::[a-z0-9_.:@-]{1,96})?$/u;
const PR_MERGED = /^pr_merged:(?:(?:[a-z0-9_.-]{1,80})\/(?:[a-z0-9_.-]{1,100}))?#[1-9][0-9]{0,8}$/u;

/** contract.py `normalize_todo_resume_when`, or null when the value is not of the grammar. */
export function normalizeResumeWhen(value: string | undefined): string | null {
  const candidate = (value ?? '').trim().split(/\s+/u).join(' ').toLowerCase();
  if (candidate === '') return null;
  return PR_MERGED.test(candidate) || RESUME_WHEN.test(candidate) ? candidate : null;
}

/** The resume fields of one todo of `doc` (empty when it has no valid `resume_when`). */
export function resumeFields(resumeWhenRaw: string | undefined, doc: StateDocument): ResumeFields {
  const resumeWhen = normalizeResumeWhen(resumeWhenRaw);
  if (resumeWhen === null) return {};
  const condition: Record<string, unknown> = {
    schema_version: 'todo_resume_condition_v0',
    resume_when: resumeWhen,
    satisfied: false,
  };
  const colon = resumeWhen.indexOf(':');
  const kind = colon < 0 ? resumeWhen : resumeWhen.slice(0, colon);
  const target = colon < 0 ? '' : resumeWhen.slice(colon + 1);
  condition['kind'] = kind;
  if (colon >= 0) condition['target'] = target;
  if (kind === 'todo_done' && target !== '') {
    const found = doc.todos.find((todo) => todo.todoId === target);
    condition['target_todo_id'] = target;
    condition['target_status'] = found?.status ?? null;
    if (found !== undefined) {
      const archived = found.role === 'archive';
      condition['target_archive_state'] = archived ? 'archived' : 'active';
      condition['target_source_section'] = archived
        ? found.section.title
        : (firstSectionOf(doc, found.role)?.title ?? found.section.title);
      condition['target_task_class'] = todoTaskClass({
        task_class: found.meta['task_class'] ?? null,
        action_kind: found.meta['action_kind'],
        text: found.text,
      });
      const claim = normalizedClaim(found.meta['claimed_by'] ?? null);
      if (claim !== null) condition['target_claimed_by'] = claim;
    }
    condition['satisfied'] = condition['target_status'] === 'done';
  } else if (kind === 'capacity_available' && target !== '') {
    Object.assign(condition, {
      provider: 'runtime_available_capabilities',
      provider_required: true,
      capability: target,
    });
  } else if (kind !== 'pr_merged' || target === '') {
    condition['unsupported'] = true;
  }
  return { resume_when: resumeWhen, resume_condition: condition, resume_ready: condition['satisfied'] === true };
}
