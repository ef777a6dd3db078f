import { z } from 'zod';
import { commandByKey } from '../commands/catalog';
import { argumentFields } from '../ops/fields';
import { OPERATIONS, type OperationKey } from '../ops/index';
import type { Operation } from '../ops/operation';

/**
 * The agent tool catalog: which operations an agent may call as tools (over MCP, `loopx mcp`, or
 * VS Code's language-model tools), under which name and with which input schema, and which
 * operations are deliberately not tools and why. Generated from the operations: a tool's input
 * schema is its operation's zod schema as JSON Schema, and a call runs the operation itself, so a
 * tool keeps every guarantee of the CLI (reservations, receipts and replays by turn id, leases,
 * compare-and-swap, the mutation policy).
 *
 * Human-only actions are not tools: an agent asks for a decision by adding a user gate (`todo_add`
 * with gate fields), as the original's agents do, and a person decides it.
 */

/** What the catalog declares for one tool; the row (`AgentTool`) adds what is derived. */
interface AgentToolSpec {
  name: string;
  op: OperationKey;
  /** What the tool is for, to an agent choosing it (the catalog's intent follows). */
  purpose: string;
  /** Fields of the operation's schema the tool does not take: human-only switches. */
  withhold?: readonly string[];
}

const TOOL_SPECS = [
  { name: 'status', op: 'status', purpose: "Read the project's goals" },
  {
    name: 'should_run',
    op: 'quotaShouldRun',
    purpose:
      "Start a heartbeat turn: may this agent run now, and on which todo. With agentId and turnInstanceId it appends the turn's heartbeat receipt once (a retry with the same turn id replays it)",
  },
  { name: 'heartbeat_prompt', op: 'heartbeatPrompt', purpose: 'The task body of one bounded turn' },
  { name: 'evidence_log', op: 'evidenceLog', purpose: "Read the goal's rollout events" },
  { name: 'todo_list', op: 'todoList', purpose: "List the goal's todos" },
  { name: 'quota_status', op: 'quotaStatus', purpose: "Read the goal's quota" },
  {
    name: 'todo_add',
    op: 'todoAdd',
    purpose: 'Add a todo; to ask a person for a decision, add a user gate (role user with gate fields)',
  },
  { name: 'todo_claim', op: 'todoClaim', purpose: 'Claim an agent todo' },
  {
    name: 'todo_complete',
    op: 'todoComplete',
    purpose:
      "Complete the turn's todo with evidence and a successor or noFollowUp (with agentId and turnInstanceId: checked against the receipt; a retry writes nothing). Gates are decided by a person, not here",
    withhold: ['decisionOutcome'],
  },
  {
    name: 'refresh_state',
    op: 'refreshState',
    purpose: "Record the turn's delivery as a snapshot run of the goal's state",
  },
  {
    name: 'spend_slot',
    op: 'quotaSpendSlot',
    purpose: "Settle the turn's quota slot after its writeback, once per turn id. Previews unless execute is true",
  },
  { name: 'task_lease_acquire', op: 'taskLeaseAcquire', purpose: 'Take the hard task lease on a todo' },
  { name: 'task_lease_renew', op: 'taskLeaseRenew', purpose: 'Extend a task lease you hold' },
  { name: 'task_lease_transfer', op: 'taskLeaseTransfer', purpose: 'Hand a task lease you hold to another agent' },
  { name: 'task_lease_release', op: 'taskLeaseRelease', purpose: 'Release a task lease you hold' },
  { name: 'task_lease_inspect', op: 'taskLeaseInspect', purpose: 'Show who holds the task lease on a todo' },
] as const satisfies readonly AgentToolSpec[];

/**
 * The agent tools VS Code's language-model tools offer (`loopx_<name>`, src/lm/toolSpecs.ts): the steps of
 * a heartbeat turn an in-editor agent needs most. The same tools as over MCP (name, description, input
 * schema, call); the editor adds only its presentation (display name, icon, confirmation).
 */
export const LANGUAGE_MODEL_TOOL_NAMES = [
  'should_run',
  'heartbeat_prompt',
  'todo_complete',
  'refresh_state',
  'spend_slot',
] as const satisfies readonly (typeof TOOL_SPECS)[number]['name'][];

/** The name of an agent tool VS Code offers as a language-model tool. */
export type LanguageModelToolName = (typeof LANGUAGE_MODEL_TOOL_NAMES)[number];

/** The operations that are agent tools. */
export type AgentToolOperationKey = (typeof TOOL_SPECS)[number]['op'];

/**
 * Every operation that is not a tool, with the reason. A unit test fails when an operation is
 * neither a tool nor here, so a new operation is a deliberate choice.
 */
export const EXCLUDED_OPERATIONS: Readonly<Record<Exclude<OperationKey, AgentToolOperationKey>, string>> = {
  showCommands: 'lists CLI, palette and slash forms for people; an agent gets its tool list from tools/list',
  version: 'the server reports its version in the MCP handshake',
  validateRegistry: 'registry set-up diagnostics for the person who configures LoopX',
  registryPrivacy: 'privacy audit of the registry for the person who configures LoopX',
  todoUpdate:
    "human-only: rewrites any todo's text, priority, status or gate relations; an agent adds, claims and completes",
  todoSupersede: 'human-only: closes a todo as replaced, a re-planning decision for a person',
  todoDefer: 'human-only: sets work aside, a prioritisation decision for a person',
  handoffModeShow: 'set-up detail; task_lease_inspect and should_run report what an agent needs',
  handoffModeSet: 'human-only: changes how the goal hands work between agents',
  globalSummary: 'cross-project view for people (status covers the project an agent works in)',
  globalGates: 'cross-project view for people (status covers the project an agent works in)',
  globalTodos: 'cross-project view for people (status covers the project an agent works in)',
  globalRisks: 'cross-project view for people (status covers the project an agent works in)',
  quotaVoidSlot: 'human-only: cancels a spend or releases a reservation, a quota correction',
  quotaHistory: 'spend accounting for people; quota_status gives an agent its budget',
  quotaPlan: "an outer scheduler's choice across goals, not one agent's",
  turnPlan: 'plans a turn LoopX runs itself; an agent in a heartbeat uses should_run',
  turnInspectJournal: "LoopX's own turn journals, for people diagnosing a turn",
  turnRunOnce: 'runs an agent process: a person starts turns, an agent is the turn',
  turnLoop: 'runs agent processes back to back: a person starts loops',
  createGoal: 'human-only: creates a goal and its budget',
  registerAgent: 'human-only: changes which agents a goal admits',
  configureGoal: "human-only: changes a goal's quota and settings",
  configureAgent: "human-only: changes an agent's executor",
  removeAgent: 'human-only: removes an agent from a goal',
  doctor: 'probes agent CLIs and files for the person who sets LoopX up',
  agentOnboard: 'human-only: installs prompts and registers agents',
  syncGlobal: 'human-only: writes the global registry',
  slashCommands: 'human-only: installs slash-command prompts into agent folders',
  mcpInstall: "human-only: writes an agent's MCP configuration",
  archiveRuntime: 'human-only: archives a goal runtime',
  pauseGoal: 'human-only: stops a goal',
  resumeGoal: 'human-only: resumes a goal a person paused',
  goalLifecycle: "human-only: changes a goal's lifecycle (done, paused, active)",
  reviewList: "the human's review queue of agent turns; an agent's own evidence is in evidence_log",
  reviewRevert: "human-only: undoes an agent turn's changes after review",
};

/** A JSON Schema object (draft 2020-12), as tools/list and `vscode.lm` take it. */
export type JsonSchemaObject = { type: 'object'; properties?: Record<string, unknown>; [key: string]: unknown };

export interface AgentTool {
  /** The tool name (`should_run`; Claude Code shows it as `mcp__loopx__should_run`). */
  readonly name: string;
  /** The operation's catalog key. */
  readonly op: AgentToolOperationKey;
  /** True when the operation is read-only in the catalog (should_run's receipt is an append-only log line). */
  readonly readOnly: boolean;
  readonly description: string;
  /** The operation's arguments as JSON Schema (camelCase keys, as the library takes them). */
  readonly inputSchema: JsonSchemaObject;
}

/** The arguments a tool accepts: its operation's schema without the withheld fields and the hidden aliases. */
export function toolArgumentSchema(name: string): z.ZodObject {
  const spec = specOf(name);
  const operation = OPERATIONS[spec.op] as unknown as Operation;
  const dropped = new Set(spec.withhold ?? []);
  // Fields kept only as the original's CLI names (`--next-agent-todo` for `--successor-text`): one name per meaning.
  for (const field of argumentFields(operation.args)) if (field.hidden) dropped.add(field.key);
  if (dropped.size === 0) return operation.args;
  const mask = Object.fromEntries([...dropped].map((key) => [key, true] as const));
  return operation.args.omit(mask as never) as z.ZodObject;
}

/** The `.meta()` keys that are the CLI's (flag names, help placeholders), not JSON Schema. */
const CLI_META_KEYS = ['flag', 'split', 'hidden', 'placeholder'];

function inputSchemaOf(schema: z.ZodObject): JsonSchemaObject {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: (context) => {
      for (const key of CLI_META_KEYS) delete (context.jsonSchema as Record<string, unknown>)[key];
    },
  }) as Record<string, unknown>;
  // The draft is the MCP default; leaving `$schema` out keeps clients that pin an older draft working.
  delete json['$schema'];
  return json as JsonSchemaObject;
}

function specOf(name: string): AgentToolSpec {
  const spec = (TOOL_SPECS as readonly AgentToolSpec[]).find((candidate) => candidate.name === name);
  if (spec === undefined) throw new Error(`unknown agent tool ${name}`);
  return spec;
}

function buildTools(): AgentTool[] {
  return (TOOL_SPECS as readonly AgentToolSpec[]).map((spec) => {
    const command = commandByKey(spec.op);
    const mutation = command.mutation;
    const apply = mutation === 'writes_after_preview' ? ' (preview unless execute is true)' : '';
    return {
      name: spec.name,
      op: spec.op as AgentToolOperationKey,
      readOnly: mutation === 'read_only',
      description: `${spec.purpose}. LoopX \`${command.cli ?? spec.op}\`: ${command.intent}${apply}.`,
      inputSchema: inputSchemaOf(toolArgumentSchema(spec.name)),
    };
  });
}

/** The agent tools, in the order tools/list gives them (built when this module loads: only tool hosts load it). */
export const AGENT_TOOLS: readonly AgentTool[] = Object.freeze(buildTools());

/** The agent tool of a name, or undefined. */
export function agentToolByName(name: string): AgentTool | undefined {
  return AGENT_TOOLS.find((tool) => tool.name === name);
}
