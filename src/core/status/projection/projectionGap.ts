import type { RoleOpenCounts, StateProjectionGapInput } from './inputs';
import { stateProjectionGapInputSchema } from './inputs';
import type { ComparedValue, GapEvidence, ResolutionAction, StateProjectionGap, TodoRole } from './schemas';
import { STATE_PROJECTION_GAP_RECOMMENDED_ACTION } from './schemas';
import { goalIdField, parseProjectionInput, projectionWarningId } from './warningIdentity';

const KIND = 'state_projection_gap';
const ENTRIES_READ = 3;
const EVIDENCE_SHOWN = 3;

/** Verbs of executable work (LoopX's vocabulary, English and Chinese). */
const EXECUTABLE_VERB = new RegExp(
  '\\b(?:run|repair|fix|implement|add|update|write|record|validate|rerun|debug|inspect|analy[sz]e|sync|refresh|' +
    'test|benchmark|trace|replan|expand|split|todo)\\b|' +
    '(?:推进|修复|实现|更新|写入|记录|验证|重跑|调试|检查|分析|审计|扩展|拆分|补全|规划|待办)',
  'iu',
);

/** A wait on a person (LoopX's vocabulary): waiting for / needs … an owner, approval or decision; an owner gate; 等待…确认. */
const USER_WAIT: readonly RegExp[] = [
  /\b(?:wait(?:ing)? for|await(?:ing)?|blocked by|gated by|need(?:s|ed)?|requires?|request(?:s|ed)?|ask(?:ing)? for|pending)\b.{0,120}\b(?:owner|user|operator|controller|human|approval|approve|decision|permission|choice)\b/iu,
  /\b(?:owner|user|operator|controller|human)\s+(?:gate|todo|action|decision|approval|permission|choice)\b/iu,
  /\b(?:approval|permission)\s+(?:required|needed|pending)\b/iu,
  /(?:等待|需要|受阻于|被.{0,20}阻塞).{0,80}(?:用户|人工|决策|审批|批准|确认|owner)/iu,
  /需(?:用户|人工|owner).{0,40}(?:决策|审批|批准|确认)/iu,
  /需(?:决策|审批|批准|确认)/u,
  /请(?:用户|人工|owner).{0,40}(?:决策|审批|批准|确认)/iu,
  /请(?:确认|审批|批准)/u,
  /待(?:用户|人工|owner)?(?:决策|审批|批准|确认)/iu,
];

function isExecutable(entry: string): boolean {
  return EXECUTABLE_VERB.test(entry);
}

function waitsOnUser(entry: string): boolean {
  return USER_WAIT.some((pattern) => pattern.test(entry));
}

/** An integer count from a summary value (a number or an integer string); anything else is 0. */
function countValue(value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.max(0, Math.trunc(value));
  if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/u.test(value)) return Math.max(0, Number.parseInt(value, 10));
  return 0;
}

/**
 * Open count for a role: the summary's `open_count`, else its `open`. When the summary has neither
 * (or there is no summary), the Markdown checkbox count is used. The original trusted an empty
 * summary `{}` as zero open todos; we fall back to the Markdown instead (docs/compatibility.md#goal-state).
 */
function openCount(counts: RoleOpenCounts): number {
  const summary = counts.summary;
  if (summary?.open_count !== undefined && summary.open_count !== null) return countValue(summary.open_count);
  if (summary?.open !== undefined && summary.open !== null) return countValue(summary.open);
  return counts.markdownOpenCount;
}

function resolutionActions(evidence: readonly GapEvidence[]): ResolutionAction[] {
  const seen = new Set<string>();
  const actions: ResolutionAction[] = [];
  for (const item of evidence) {
    const key = `${item.target_role}\u0000${item.text}`;
    if (seen.has(key)) continue;
    seen.add(key);
    actions.push({ kind: 'add_todo', role: item.target_role, text: item.text });
  }
  actions.push({ kind: 'dismiss' });
  return actions;
}

/**
 * `state_projection_gap`: the Next Action prose promises work that no open todo backs — an
 * executable step with no open agent todo, or a wait on the owner with no open user todo. Null
 * when no entry gives such evidence.
 */
export function stateProjectionGap(input: StateProjectionGapInput): StateProjectionGap | null {
  const { goalId, nextActionEntries, agentTodos, userTodos } = parseProjectionInput(
    stateProjectionGapInputSchema,
    input,
    'stateProjectionGap',
  );
  const agentOpen = openCount(agentTodos);
  const userOpen = openCount(userTodos);

  const evidence: GapEvidence[] = [];
  for (const entry of nextActionEntries.slice(0, ENTRIES_READ)) {
    const text = entry.trim();
    if (text === '') continue;
    if (agentOpen === 0 && isExecutable(text)) {
      evidence.push({
        kind: 'next_action_executable_without_agent_todo',
        target_role: 'agent',
        section: 'Next Action',
        text,
      });
    }
    if (userOpen === 0 && waitsOnUser(text)) {
      evidence.push({ kind: 'next_action_waits_without_user_todo', target_role: 'user', section: 'Next Action', text });
    }
  }
  if (evidence.length === 0) return null;

  const targetRoles = [...new Set<TodoRole>(evidence.map((item) => item.target_role))].sort();
  const firstEvidence = evidence.slice(0, EVIDENCE_SHOWN);
  const compared: ComparedValue[] = [...new Set(evidence.map((item) => item.text))].map((text) => ({
    field: 'next_action',
    value: text,
  }));
  return {
    schema_version: 'state_projection_gap_v0',
    kind: KIND,
    severity: 'warning',
    requires_todo_expansion: true,
    agent_open_count: agentOpen,
    user_open_count: userOpen,
    target_roles: targetRoles,
    evidence_count: evidence.length,
    first_evidence: firstEvidence,
    recommended_action: STATE_PROJECTION_GAP_RECOMMENDED_ACTION,
    message: gapMessage(targetRoles),
    id: projectionWarningId(KIND, goalId, compared),
    ...goalIdField(goalId),
    compared,
    actions: resolutionActions(firstEvidence),
  };
}

function gapMessage(roles: readonly TodoRole[]): string {
  const parts: string[] = [];
  if (roles.includes('agent')) parts.push('asks for agent work but there is no open Agent Todo');
  if (roles.includes('user')) parts.push('waits on the owner but there is no open User Todo');
  return `The Next Action ${parts.join(' and ')}. Add the missing todo, or rewrite the Next Action.`;
}
