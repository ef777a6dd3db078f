import type {
  GateRow,
  GlobalGatesResponse,
  GlobalResponse,
  GlobalRisksResponse,
  GlobalSummaryResponse,
  GlobalTodosResponse,
  GlobalUnavailableResponse,
  RiskRow,
  TodoRow,
} from './globalSchemas';

/** The global read models for people: a heading, the counts, one table per group. */

function cell(text: string | number | null | undefined): string {
  return String(text ?? '')
    .replace(/\|/g, '\\|')
    .replace(/\r?\n/g, ' ');
}

function table(headers: readonly string[], rows: readonly (readonly (string | number | null | undefined)[])[]): string {
  return [
    `| ${headers.join(' | ')} |`,
    `| ${headers.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ].join('\n');
}

function section(title: string, rows: readonly unknown[], render: () => string, total: number): string[] {
  const shown = rows.length < total ? ` (first ${rows.length} of ${total})` : '';
  return [`## ${title}${shown}`, '', rows.length === 0 ? '_None._' : render(), ''];
}

function scope(response: GlobalResponse): string {
  const { request, boundary } = response;
  const who = request.agent_id === null ? 'all agents' : `agent \`${request.agent_id}\``;
  return `${boundary.goal_count} goal(s) of ${boundary.registry}, as seen by ${who}; runs of the last ${request.time_range}.`;
}

const FOOTER = '_Read-only: nothing was written and no quota was spent._';

function summaryMarkdown(response: GlobalSummaryResponse): string[] {
  const s = response.summary;
  return [
    `${s.goal_count} goal(s): ${s.active_goal_count} active, ${s.stopped_goal_count} stopped; ${s.waiting_on_user} waiting on you, ${s.waiting_on_agents} on agents.`,
    `${s.open_agent_todos} open agent todo(s), ${s.open_user_todos} open user todo(s), ${s.open_gates} open gate(s); ${s.runs_in_range} run(s) in range, ${s.progress_runs_in_range} of them progress.`,
    '',
    ...section(
      'Goals',
      response.groups.goals,
      () =>
        table(
          ['Goal', 'Severity', 'Waiting on', 'Status', 'Agent todos', 'User todos', 'Gates', 'Runs', 'Quota', 'Next'],
          response.groups.goals.map((row) => [
            `${row.display_name} (\`${row.goal_id}\`)`,
            row.severity,
            row.waiting_on,
            row.status,
            row.open_agent_todos,
            row.open_user_todos,
            row.open_gates,
            `${row.runs_in_range} (${row.progress_runs_in_range} progress)`,
            row.quota_state === null ? '' : `${row.quota_state} ${row.spent_slots ?? '?'}/${row.allowed_slots ?? '?'}`,
            row.recommended_action,
          ]),
        ),
      s.goal_count,
    ),
  ];
}

function gateTable(rows: readonly GateRow[]): string {
  return table(
    ['Goal', 'Gate', 'Priority', 'State', 'Blocks', 'Decision scope'],
    rows.map((row) => [
      row.goal_id,
      `${row.title} (\`${row.todo_id}\`)`,
      row.priority,
      row.gate_state,
      [
        ...row.blocked_todo_ids,
        ...(row.blocks_agent !== null ? [`agent ${row.blocks_agent}`] : []),
        ...(row.global_gate ? ['every agent todo'] : []),
      ].join(', ') || (row.unscoped ? 'nothing named (unscoped)' : ''),
      row.decision_scope,
    ]),
  );
}

function gatesMarkdown(response: GlobalGatesResponse): string[] {
  const s = response.summary;
  return [
    `${s.open_gate_count} open gate(s) in ${s.goals_with_open_gates} goal(s), holding back ${s.blocked_todo_count} todo(s); ${s.holding_gate_count} resolved gate(s) still hold work.`,
    '',
    ...section('Open gates', response.groups.open, () => gateTable(response.groups.open), s.open_gate_count),
    ...section(
      'Rejected or cancelled, still holding work',
      response.groups.holding,
      () => gateTable(response.groups.holding),
      s.holding_gate_count,
    ),
  ];
}

function todoTable(rows: readonly TodoRow[]): string {
  return table(
    ['Goal', 'Todo', 'Priority', 'Status', 'Claimed by', 'Why'],
    rows.map((row) => [
      row.goal_id,
      `${row.title} (\`${row.todo_id}\`)`,
      row.priority,
      row.status,
      row.claimed_by,
      row.reasons.join(', '),
    ]),
  );
}

function todosMarkdown(response: GlobalTodosResponse): string[] {
  const s = response.summary;
  const lines = [
    `${s.runnable_count} runnable, ${s.deferred_ready_count} deferred and ready to resume, ${s.blocked_count} blocked, ${s.review_count} for you to review.`,
    ...(s.not_listed_without_delivery_authority > 0
      ? [
          `${s.not_listed_without_delivery_authority} open agent todo(s) are not listed: their goal is stopped, paused or has no agent that may deliver.`,
        ]
      : []),
    '',
    ...section('Runnable', response.groups.runnable, () => todoTable(response.groups.runnable), s.runnable_count),
    ...section(
      'Deferred, ready to resume',
      response.groups.deferred_ready,
      () => todoTable(response.groups.deferred_ready),
      s.deferred_ready_count,
    ),
    ...section('Blocked', response.groups.blocked, () => todoTable(response.groups.blocked), s.blocked_count),
    ...section('For you to review', response.groups.review, () => todoTable(response.groups.review), s.review_count),
  ];
  if (response.warnings.length > 0)
    lines.push('## Warnings', '', ...response.warnings.map((w) => `- ${w.kind}: ${w.message}`), '');
  return lines;
}

function riskTable(rows: readonly RiskRow[]): string {
  return table(
    ['Severity', 'Goal', 'Risk', 'Do'],
    rows.map((row) => [row.severity, row.goal_id, row.message, row.recommended_action]),
  );
}

const RISK_TITLES: Record<keyof GlobalRisksResponse['groups'], string> = {
  state_errors: 'State files',
  failing_validations: 'Failing validations',
  stale_runs: 'Stale runs',
  projection_warnings: 'Projection warnings',
  quota: 'Quota',
  dead_locks: 'Locks held by dead processes',
};

function risksMarkdown(response: GlobalRisksResponse): string[] {
  const s = response.summary;
  const lines = [`${s.risk_count} risk(s): ${s.high} high, ${s.action} to act on, ${s.info} for information.`, ''];
  for (const key of Object.keys(RISK_TITLES) as (keyof typeof RISK_TITLES)[]) {
    lines.push(...section(RISK_TITLES[key], response.groups[key], () => riskTable(response.groups[key]), s[key]));
  }
  return lines;
}

const TITLES: Record<GlobalResponse['command'], string> = {
  'global-summary': 'LoopX global summary',
  'global-gates': 'LoopX global gates',
  'global-todos': 'LoopX global todos',
  'global-risks': 'LoopX global risks',
};

export function globalMarkdown(response: GlobalResponse | GlobalUnavailableResponse): string {
  if (!response.ok) return [`# ${TITLES[response.command]}`, '', `${response.error} ${response.reason}`, ''].join('\n');
  const body =
    response.command === 'global-summary'
      ? summaryMarkdown(response)
      : response.command === 'global-gates'
        ? gatesMarkdown(response)
        : response.command === 'global-todos'
          ? todosMarkdown(response)
          : risksMarkdown(response);
  return [`# ${TITLES[response.command]}`, '', scope(response), '', ...body, FOOTER, ''].join('\n');
}
