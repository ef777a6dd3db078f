import { z } from 'zod';

/**
 * The fields existing LoopX dashboards validate in `/status.json`, exactly as their schema lists
 * them (status-contract-fields.txt of the spec; test/unit/server checks this copy against it):
 * `always` = required in every payload; `if-present` = required once its optional parent is
 * present. `DashboardStatusSchema` is generated from this list, so a payload that passes it
 * passes the dashboards.
 */
export const DASHBOARD_CONTRACT_FIELDS = `
always     ok : boolean
always     registry : string
always     runtime_root : string
always     goal_count : number
always     run_count : number
always     contract : object
always     contract.ok : boolean
always     contract.summary : object
always     contract.summary.errors : number
always     contract.summary.warnings : number
always     contract.summary.checks : number
always     contract.errors : array
always     contract.errors[] : string
always     contract.warnings : array
always     contract.warnings[] : string
if-present contract.checks[] : string
if-present global_registry.available : boolean
if-present global_registry.ok : boolean
if-present global_registry.registry : string
if-present global_registry.summary : object
if-present global_registry.findings[] : object
if-present global_registry.findings[].kind : string
if-present global_registry.findings[].severity : string
if-present global_registry.findings[].message : string
if-present global_registry.findings[].recommended_action : string
if-present global_registry.findings[].goal_ids[] : string
if-present global_registry.checks[] : string
always     attention_queue : object
always     attention_queue.available : boolean
always     attention_queue.item_count : number
always     attention_queue.needs_user_or_controller : number
always     attention_queue.needs_codex : number
always     attention_queue.watching_external_evidence : number
if-present attention_queue.autonomous_backlog_candidates.items[] : object
if-present attention_queue.autonomous_backlog_candidates.items[].goal_id : string
if-present attention_queue.autonomous_backlog_candidates.items[].text : string
always     attention_queue.items : array
always     attention_queue.items[] : object
always     attention_queue.items[].goal_id : string
always     attention_queue.items[].status : string
always     attention_queue.items[].waiting_on : string
always     attention_queue.items[].severity : string
always     attention_queue.items[].recommended_action : string
if-present attention_queue.items[].project_asset.owner : string
if-present attention_queue.items[].project_asset.gate : string
if-present attention_queue.items[].project_asset.next_action : string
if-present attention_queue.items[].project_asset.stop_condition : string
if-present attention_queue.items[].project_asset.user_todos.items[] : object
if-present attention_queue.items[].project_asset.user_todos.items[].index : number
if-present attention_queue.items[].project_asset.user_todos.items[].done : boolean
if-present attention_queue.items[].project_asset.user_todos.items[].text : string
if-present attention_queue.items[].project_asset.user_todos.items[].required_capabilities[] : string
if-present attention_queue.items[].project_asset.user_todos.items[].review_materials[] : object
if-present attention_queue.items[].project_asset.user_todos.items[].review_materials[].path : string
if-present attention_queue.items[].project_asset.agent_todos.items[] : object
if-present attention_queue.items[].project_asset.agent_todos.items[].index : number
if-present attention_queue.items[].project_asset.agent_todos.items[].done : boolean
if-present attention_queue.items[].project_asset.agent_todos.items[].text : string
if-present attention_queue.items[].project_asset.agent_todos.items[].required_capabilities[] : string
if-present attention_queue.items[].project_asset.agent_todos.items[].review_materials[] : object
if-present attention_queue.items[].project_asset.agent_todos.items[].review_materials[].path : string
if-present attention_queue.items[].project_asset.quota.must_advance[] : string
if-present attention_queue.items[].project_asset.quota.avoid[] : string
if-present attention_queue.items[].project_asset.orchestration.allowed_domains[] : string
if-present attention_queue.items[].project_asset.todo_projection_gap.missing_roles[] : string
if-present attention_queue.items[].handoff_readiness.post_handoff_recent_runs[] : object
if-present attention_queue.items[].lifecycle_flags[] : string
if-present attention_queue.items[].missing_gates[] : string
if-present attention_queue.items[].quota.must_advance[] : string
if-present attention_queue.items[].quota.avoid[] : string
if-present attention_queue.items[].user_todos.items[] : object
if-present attention_queue.items[].user_todos.items[].index : number
if-present attention_queue.items[].user_todos.items[].done : boolean
if-present attention_queue.items[].user_todos.items[].text : string
if-present attention_queue.items[].user_todos.items[].required_capabilities[] : string
if-present attention_queue.items[].user_todos.items[].review_materials[] : object
if-present attention_queue.items[].user_todos.items[].review_materials[].path : string
if-present attention_queue.items[].agent_todos.items[] : object
if-present attention_queue.items[].agent_todos.items[].index : number
if-present attention_queue.items[].agent_todos.items[].done : boolean
if-present attention_queue.items[].agent_todos.items[].text : string
if-present attention_queue.items[].agent_todos.items[].required_capabilities[] : string
if-present attention_queue.items[].agent_todos.items[].review_materials[] : object
if-present attention_queue.items[].agent_todos.items[].review_materials[].path : string
if-present attention_queue.items[].dependency_blockers.items[] : object
if-present attention_queue.items[].dependency_blockers.items[].goal_id : string
if-present attention_queue.items[].dependency_blockers.items[].text : string
if-present attention_queue.items[].goal_channel_projection.schema_version : literal(goal_channel_projection_v0)
if-present attention_queue.items[].goal_channel_projection.mode : literal(read_only)
if-present attention_queue.items[].goal_channel_projection.goal_id : string
if-present attention_queue.items[].goal_channel_projection.display_name : string
if-present attention_queue.items[].goal_channel_projection.latest_status : string
if-present attention_queue.items[].goal_channel_projection.waiting_on : string
if-present attention_queue.items[].goal_channel_projection.next_action : string
if-present attention_queue.items[].goal_channel_projection.source_refs : record
if-present attention_queue.items[].goal_channel_projection.decision_frame : object
if-present attention_queue.items[].goal_channel_projection.decision_frame.user_action_required : boolean
if-present attention_queue.items[].goal_channel_projection.decision_frame.agent_action_required : boolean
if-present attention_queue.items[].goal_channel_projection.decision_frame.quiet_noop_allowed : boolean
if-present attention_queue.items[].goal_channel_projection.quota : record
if-present attention_queue.items[].goal_channel_projection.user_todos[] : object
if-present attention_queue.items[].goal_channel_projection.user_todos[].status : string
if-present attention_queue.items[].goal_channel_projection.user_todos[].title : string
if-present attention_queue.items[].goal_channel_projection.agent_todos[] : object
if-present attention_queue.items[].goal_channel_projection.agent_todos[].status : string
if-present attention_queue.items[].goal_channel_projection.agent_todos[].title : string
if-present attention_queue.items[].goal_channel_projection.open_gates[] : object
if-present attention_queue.items[].goal_channel_projection.open_gates[].gate_id : string
if-present attention_queue.items[].goal_channel_projection.open_gates[].kind : string
if-present attention_queue.items[].goal_channel_projection.open_gates[].status : string
if-present attention_queue.items[].goal_channel_projection.open_gates[].blocks[] : string
if-present attention_queue.items[].goal_channel_projection.active_leases[] : object
if-present attention_queue.items[].goal_channel_projection.active_leases[].write_scope[] : string
if-present attention_queue.items[].goal_channel_projection.artifacts[] : record
if-present attention_queue.items[].goal_channel_projection.recent_events[] : object
if-present attention_queue.items[].goal_channel_projection.source_warnings[] : object
if-present attention_queue.items[].goal_channel_projection.truth_contract : object
if-present attention_queue.items[].goal_channel_projection.truth_contract.event_ledger_is_source_of_truth : boolean
if-present attention_queue.items[].goal_channel_projection.truth_contract.projection_is_writable : boolean
if-present attention_queue.items[].goal_channel_projection.truth_contract.recompute_rule : string
if-present attention_queue.items[].goal_channel_projection.truth_contract.write_authority : string
if-present run_history.available : boolean
if-present run_history.goals[] : object
if-present run_history.goals[].id : string
if-present run_history.goals[].lifecycle_flags[] : string
if-present run_history.goals[].quota.must_advance[] : string
if-present run_history.goals[].quota.avoid[] : string
if-present run_history.goals[].spawn_policy.allowed_domains[] : string
if-present run_history.goals[].orchestration.allowed_domains[] : string
if-present run_history.goals[].latest_runs[] : object
if-present run_history.goals[].latest_runs[].generated_at : string
if-present run_history.goals[].latest_runs[].goal_id : string
if-present run_history.goals[].latest_runs[].lifecycle_flags[] : string
if-present run_history.goals[].latest_runs[].operator_gate_resume_contract.interrupt_payload.choices[] : string
if-present run_history.goals[].latest_runs[].operator_gate_resume_contract.allowed_decisions[] : string
if-present run_history.goals[].latest_runs[].controller_readiness.missing_gates[] : string
if-present run_history.goals[].latest_runs[].controller_readiness.gates[] : object
if-present run_history.recent_runs[] : object
if-present run_history.recent_runs[].generated_at : string
if-present run_history.recent_runs[].goal_id : string
if-present run_history.recent_runs[].lifecycle_flags[] : string
if-present run_history.recent_runs[].operator_gate_resume_contract.interrupt_payload.choices[] : string
if-present run_history.recent_runs[].operator_gate_resume_contract.allowed_decisions[] : string
if-present run_history.recent_runs[].controller_readiness.missing_gates[] : string
if-present run_history.recent_runs[].controller_readiness.gates[] : object
if-present event_ledger_summary.event_classes[] : string
if-present event_ledger_summary.goals[] : object
if-present event_ledger_summary.goals[].goal_id : string
if-present decision_freshness_summary.items[] : object
if-present decision_freshness_summary.items[].goal_id : string
if-present usage_summary.goals[] : object
if-present usage_summary.goals[].goal_id : string
if-present todo_index.items[] : object
if-present todo_index.items[].index : number
if-present todo_index.items[].done : boolean
if-present todo_index.items[].text : string
if-present todo_index.items[].required_capabilities[] : string
if-present todo_index.items[].review_materials[] : object
if-present todo_index.items[].review_materials[].path : string
if-present todo_index.items[].goal_id : string
if-present todo_index.items[].event_kinds[] : string
if-present agent_management_projection.agents[] : object
if-present agent_management_projection.agents[].agent_id : string
if-present agent_management_projection.agents[].current_todo.required_write_scopes[] : string
if-present agent_management_projection.agents[].current_todo.workspace_ref.write_scope[] : string
if-present agent_management_projection.agents[].evidence_refs[] : string
if-present agent_management_projection.agents[].handoff_refs[] : string
if-present agent_management_projection.agents[].handoff_note.evidence_refs[] : string
if-present agent_management_projection.agents[].workspace_ref.write_scope[] : string
if-present agent_management_projection.agents[].blocked_on.required_write_scopes[] : string
if-present agent_management_projection.agents[].blocked_on.workspace_ref.write_scope[] : string
if-present agent_management_projection.agents[].goal_ids[] : string
if-present goal_channel_notification_projection.goals[] : object
if-present goal_channel_notification_projection.goals[].goal_id : string
if-present presentation_surfaces.schema_version : literal(extension_presentation_surfaces_v0)
if-present presentation_surfaces.count : number
if-present presentation_surfaces.ready_count : number
if-present presentation_surfaces.review_due_count : number
if-present presentation_surfaces.empty_count : number
if-present presentation_surfaces.invalid_count : number
if-present presentation_surfaces.items : array
if-present presentation_surfaces.items[] : union
`;

export type ContractPresence = 'always' | 'if-present';

export interface ContractField {
  presence: ContractPresence;
  /** Dotted path; `name[]` steps into the elements of an array. */
  path: string;
  /** `boolean`, `string`, `number`, `object`, `array`, `record`, `union` or `literal(<value>)`. */
  type: string;
}

/** Parses lines of the form `<presence> <path> : <type>`; comments (`#`) and blank lines are skipped. */
export function parseContractFields(text: string): ContractField[] {
  const fields: ContractField[] = [];
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = /^(always|if-present)\s+(\S+)\s*:\s*(\S+)$/.exec(line);
    if (!match)
      throw new Error(`contract field line ${index + 1} is not "<always|if-present> <path> : <type>": ${line}`);
    fields.push({ presence: match[1] as ContractPresence, path: match[2] as string, type: match[3] as string });
  }
  return fields;
}

interface ContractNode {
  type?: string;
  required: boolean;
  children: Map<string, ContractNode>;
  /** The element node when the node is an array (`name[]`). */
  element?: ContractNode;
}

const newNode = (): ContractNode => ({ required: false, children: new Map() });

function buildTree(fields: readonly ContractField[]): ContractNode {
  const root = newNode();
  root.required = true;
  root.type = 'object';
  for (const field of fields) {
    const segments = field.path.split('.');
    let node = root;
    segments.forEach((segment, position) => {
      const isElement = segment.endsWith('[]');
      const name = isElement ? segment.slice(0, -2) : segment;
      let child = node.children.get(name);
      if (child === undefined) {
        child = newNode();
        node.children.set(name, child);
      }
      const last = position === segments.length - 1;
      if (isElement) {
        child.element ??= newNode();
        child.element.required = true;
        if (last) child.element.type = field.type;
        node = child.element;
      } else {
        // A listed field is required within its parent; parents that are not listed are optional.
        if (last) {
          child.type = field.type;
          child.required = true;
        }
        node = child;
      }
    });
  }
  return root;
}

function leafSchema(type: string | undefined): z.ZodType | null {
  if (type === undefined) return null;
  const literal = /^literal\((.*)\)$/.exec(type);
  if (literal) return z.literal(literal[1] as string);
  switch (type) {
    case 'boolean':
      return z.boolean();
    case 'string':
      return z.string();
    case 'number':
      return z.number();
    case 'record':
      return z.record(z.string(), z.unknown());
    case 'union':
      return z.unknown();
    case 'object':
    case 'array':
      return null;
    default:
      throw new Error(`unknown contract field type ${type}`);
  }
}

function nodeSchema(node: ContractNode): z.ZodType {
  let schema: z.ZodType;
  const leaf = leafSchema(node.type);
  if (leaf !== null) {
    schema = leaf;
  } else if (node.element !== undefined || node.type === 'array') {
    schema = z.array(node.element === undefined ? z.unknown() : nodeSchema(node.element));
  } else {
    schema = z.looseObject(Object.fromEntries([...node.children].map(([name, child]) => [name, nodeSchema(child)])));
  }
  return node.required ? schema : schema.optional();
}

/** The zod schema of a field list: loose objects (other fields pass), every listed field typed. */
export function contractSchema(fields: readonly ContractField[]): z.ZodType {
  return nodeSchema(buildTree(fields));
}

export const DASHBOARD_FIELDS: readonly ContractField[] = parseContractFields(DASHBOARD_CONTRACT_FIELDS);

/** What LoopX dashboards accept as `/status.json`. */
export const DashboardStatusSchema = contractSchema(DASHBOARD_FIELDS);
