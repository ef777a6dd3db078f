import { z } from 'zod';

/**
 * The one table of LoopX commands. The CLI, the command palette (`contributes.commands`),
 * the extension's command registrations and the slash-command catalog are all derived from it
 * or checked against it (test/unit/catalog.test.ts), so they cannot drift apart.
 */
export const MutationPolicy = z.enum(['read_only', 'writes_after_preview', 'writes']);
export type MutationPolicy = z.infer<typeof MutationPolicy>;

export const CommandScope = z.enum(['project', 'goal', 'agent', 'global', 'editor']);
export type CommandScope = z.infer<typeof CommandScope>;

export const HelpGroup = z.enum([
  'Inspect',
  'Set up',
  'Goals and todos',
  'Agents',
  'Quota and turns',
  'Runtime',
  'Editor',
]);
export type HelpGroup = z.infer<typeof HelpGroup>;

/**
 * Where a command appears besides the palette. `on` names a view's title bar or a kind of tree
 * node (its `contextValue` starts with the kind and a dot); `group` is VS Code's menu group, with
 * `inline` for the row's buttons.
 */
export const MenuTarget = z.enum([
  'goalsTitle',
  'agentsTitle',
  'viewsTitle',
  'goal',
  'todo',
  'gate',
  'warning',
  'agent',
  'run',
  'reviewTitle',
  'reviewTurn',
  'reviewFile',
]);
export type MenuTarget = z.infer<typeof MenuTarget>;

export const MenuPlacement = z.object({
  on: MenuTarget,
  group: z.string().min(1),
  /** Only offered in a trusted workspace (the command itself still checks). */
  trustedOnly: z.boolean().optional(),
  /**
   * Only on nodes whose `contextValue` after `<kind>.` matches this regular expression (e.g.
   * `[^.]*\\.running$` for a goal whose loop runs); tree items encode their state there.
   */
  state: z.string().min(1).optional(),
});
export type MenuPlacement = z.infer<typeof MenuPlacement>;

export const CommandSpec = z.object({
  /** Stable key, also the suffix of the palette command id (`loopx.<key>`). */
  key: z.string().regex(/^[a-z][A-Za-z0-9]*$/),
  /** CLI words (`status`, `todo add`), or null when the command is editor-only. */
  cli: z
    .string()
    .regex(/^[a-z][a-z0-9-]*( [a-z][a-z0-9-]*)?$/)
    .nullable(),
  /** Palette title (shown as `LoopX: <title>`), or null when the command is CLI-only. */
  title: z.string().min(1).nullable(),
  /** Slash form for chat and terminal agents, or null when there is none. */
  slash: z
    .string()
    .regex(/^\/loopx/)
    .nullable(),
  /**
   * The arguments the CLI command cannot run without, with `<placeholders>` (`--goal-id <id>`): the
   * installed slash prompt has the agent fill them from what the user typed, instead of running the
   * bare command into a usage error.
   */
  slashArguments: z.string().min(1).optional(),
  scope: CommandScope,
  intent: z.string().min(1),
  mutation: MutationPolicy,
  group: HelpGroup,
  /** The `@loopx` chat participant's slash command for it (`/status`), or absent when chat has none. */
  chat: z
    .string()
    .regex(/^[a-z][a-z0-9]*$/)
    .optional(),
  /**
   * The command works only on the tree node it is invoked from (it has no picker to ask for its
   * target): hidden from the command palette, where it could only fail. Needs a menu placement.
   */
  nodeOnly: z.literal(true).optional(),
  /** Codicon for menus and tree inline actions. */
  icon: z.string().optional(),
  menus: z.array(MenuPlacement).optional(),
});
export type CommandSpec = z.infer<typeof CommandSpec>;

const catalog = [
  {
    key: 'showCommands',
    cli: 'commands',
    title: 'Show All Commands',
    slash: '/loopx-commands',
    scope: 'global',
    intent: 'list every LoopX command with its CLI, palette and slash forms',
    mutation: 'read_only',
    group: 'Inspect',
  },
  {
    key: 'version',
    cli: 'version',
    title: null,
    slash: null,
    scope: 'global',
    intent: 'print the installed LoopX version (the same line as loopx --version; --format json for loopx_version_v0)',
    mutation: 'read_only',
    group: 'Inspect',
  },
  {
    key: 'refresh',
    cli: null,
    title: 'Refresh',
    slash: null,
    scope: 'editor',
    intent: 'reload goals and agents from disk',
    mutation: 'read_only',
    group: 'Editor',
    icon: 'refresh',
    menus: [{ on: 'viewsTitle', group: 'navigation@9' }],
  },
  {
    key: 'showLog',
    cli: null,
    title: 'Show Log',
    slash: null,
    scope: 'editor',
    intent: 'open the LoopX output channel',
    mutation: 'read_only',
    group: 'Editor',
    icon: 'output',
    menus: [
      { on: 'viewsTitle', group: '9_log' },
      { on: 'agent', group: '0_agent@4' },
    ],
  },
  {
    key: 'validateRegistry',
    cli: 'registry',
    title: 'Validate Registry',
    slash: null,
    scope: 'project',
    intent: 'validate the registry file and list its goals with their repo, state file and quota',
    mutation: 'read_only',
    group: 'Inspect',
    icon: 'checklist',
    menus: [{ on: 'goalsTitle', group: '2_inspect' }],
  },
  {
    key: 'registryPrivacy',
    cli: 'registry-privacy',
    title: null,
    slash: null,
    scope: 'project',
    intent: 'classify the registry for publication: private markers, git status and risks, without recording its path',
    mutation: 'read_only',
    group: 'Inspect',
  },
  {
    key: 'syncGlobal',
    cli: 'sync-global',
    title: null,
    slash: null,
    scope: 'global',
    intent: 'project goals of this registry into the global registry under the runtime root',
    mutation: 'writes',
    group: 'Set up',
  },
  {
    key: 'slashCommands',
    cli: 'slash-commands',
    title: null,
    slash: null,
    scope: 'project',
    intent:
      'list the /loopx slash commands; --install writes their prompt files for Claude Code, Codex and opencode into the project (--dry-run first), --uninstall removes only those',
    mutation: 'writes_after_preview',
    group: 'Set up',
  },
  {
    key: 'mcpInstall',
    cli: 'mcp install',
    title: 'Connect an Agent over MCP…',
    slash: null,
    scope: 'project',
    intent:
      "write LoopX's MCP server into an agent's config (Claude Code .mcp.json, Codex config.toml, opencode.json, .vscode/mcp.json); preview the diff, --execute to write",
    mutation: 'writes_after_preview',
    group: 'Set up',
  },
  {
    key: 'createGoal',
    cli: 'bootstrap',
    title: 'Create Goal…',
    slash: '/loopx-bootstrap',
    slashArguments: "--goal-id <id> --objective '<goal text>'",
    scope: 'project',
    intent: 'create or connect a project goal: registry entry plus its ACTIVE_GOAL_STATE.md',
    mutation: 'writes',
    group: 'Set up',
    icon: 'add',
    menus: [{ on: 'goalsTitle', group: 'navigation@1' }],
  },
  {
    key: 'startGoal',
    cli: null,
    title: 'Start a Goal…',
    slash: null,
    scope: 'editor',
    intent:
      'a goal from a sentence: a language model (or a template) drafts the objective, first todos and gates; you edit the draft, then the goal and exactly those todos are created',
    chat: 'goal',
    mutation: 'writes',
    group: 'Set up',
    icon: 'sparkle',
  },
  {
    key: 'agentOnboard',
    cli: 'agent-onboard',
    title: 'Onboard an Agent…',
    slash: null,
    scope: 'project',
    intent:
      'show an agent how the project is connected, which identity it may use and the exact next commands (writes nothing)',
    mutation: 'read_only',
    group: 'Agents',
    icon: 'person-add',
  },
  {
    key: 'registerAgent',
    cli: 'register-agent',
    title: 'Register Agent…',
    slash: null,
    scope: 'goal',
    intent: "add an agent id to a goal's registered agents: preview, then --execute to write and verify",
    mutation: 'writes_after_preview',
    group: 'Agents',
    icon: 'person-add',
    menus: [
      { on: 'agentsTitle', group: 'navigation@1' },
      { on: 'goal', group: '1_agents' },
    ],
  },
  {
    key: 'configureAgent',
    cli: 'agent configure',
    title: 'Configure Agent…',
    slash: null,
    scope: 'agent',
    intent:
      'connect an agent to a goal in one step: preset (claude-code, codex, opencode, command, vscode-lm, demo), command, model, permission mode, timeout, variables to pass, resume; preview, then --execute',
    mutation: 'writes_after_preview',
    group: 'Agents',
    icon: 'plug',
    menus: [
      { on: 'agentsTitle', group: 'navigation@0' },
      { on: 'agent', group: 'inline@0' },
      { on: 'agent', group: '0_agent@1' },
      { on: 'goal', group: '1_agents@0' },
    ],
  },
  {
    key: 'showAgentLastRun',
    cli: null,
    title: 'Show Last Run',
    slash: null,
    scope: 'editor',
    intent: "open the Markdown record of the agent's newest run",
    mutation: 'read_only',
    group: 'Agents',
    nodeOnly: true,
    icon: 'history',
    menus: [{ on: 'agent', group: '0_agent@3' }],
  },
  {
    key: 'removeAgent',
    cli: 'agent remove',
    title: 'Remove Agent…',
    slash: null,
    scope: 'agent',
    intent: 'take an agent off a goal (its registered id, its profile and executor): preview, then --execute',
    mutation: 'writes_after_preview',
    group: 'Agents',
    icon: 'trash',
    menus: [{ on: 'agent', group: '9_remove' }],
  },
  {
    key: 'laneList',
    cli: 'lane list',
    title: 'Show Lanes',
    slash: null,
    scope: 'goal',
    intent:
      "show a goal's worktree lanes: branch, commits ahead/behind main, last turn, pending merge, the files each changes and where lanes (or a lease's write scope) overlap",
    mutation: 'read_only',
    group: 'Agents',
    icon: 'git-branch',
    menus: [{ on: 'goal', group: '1_agents@2' }],
  },
  {
    key: 'laneMerge',
    cli: 'lane merge',
    title: 'Merge Lane…',
    slash: null,
    scope: 'agent',
    intent:
      "approve a lane's merge gate: merge its branch into main (fast-forward or a merge commit); a conflict is aborted and reported, or handed to the lane's agent (--hand-to-agent); a person's decision, refused inside an agent's turn: preview, then --execute",
    mutation: 'writes_after_preview',
    group: 'Agents',
    icon: 'git-merge',
    menus: [
      { on: 'agent', group: '0_agent@5' },
      { on: 'gate', group: 'inline@0', state: '.*\\.merge$' },
      { on: 'gate', group: '0_decide@0', state: '.*\\.merge$' },
    ],
  },
  {
    key: 'laneReject',
    cli: 'lane reject',
    title: 'Send Lane Back…',
    slash: null,
    scope: 'agent',
    intent:
      "reject a lane's merge gate with the reviewer's note, which becomes a todo for the lane's agent; the branch stays; a person's decision, refused inside an agent's turn",
    mutation: 'writes',
    group: 'Agents',
    icon: 'reply',
    menus: [
      { on: 'agent', group: '0_agent@6' },
      { on: 'gate', group: '0_decide@3', state: '.*\\.merge$' },
    ],
  },
  {
    key: 'laneRemove',
    cli: 'lane remove',
    title: 'Remove Lane…',
    slash: null,
    scope: 'agent',
    intent:
      "prune a lane's git worktree; its branch is kept, or deleted by choice (refused while it has commits main lacks, unless --force): preview, then --execute",
    mutation: 'writes_after_preview',
    group: 'Agents',
    icon: 'trash',
    menus: [{ on: 'agent', group: '9_remove@1' }],
  },
  {
    key: 'doctor',
    cli: 'doctor',
    title: 'Doctor',
    slash: null,
    scope: 'project',
    intent:
      "check the setup: Node, registry and state files, runtime root, stale locks, each agent's CLI, version and flags, provider variables (names only), Codex sandbox, status server port; each finding names its fix",
    mutation: 'read_only',
    group: 'Inspect',
    icon: 'pulse',
    menus: [{ on: 'agentsTitle', group: 'navigation@2' }],
  },
  {
    key: 'configureGoal',
    cli: 'configure-goal',
    title: 'Configure Goal…',
    slash: null,
    scope: 'goal',
    intent: "change a goal's quota, registered agents, write scope and spawn policy: preview, then --execute to write",
    mutation: 'writes_after_preview',
    group: 'Goals and todos',
    icon: 'settings-gear',
    menus: [
      { on: 'goal', group: 'inline@2' },
      { on: 'goal', group: '2_configure' },
    ],
  },
  {
    key: 'archiveRuntime',
    cli: 'archive-runtime',
    title: 'Archive Runtime…',
    slash: null,
    scope: 'goal',
    intent:
      "move a goal's runtime folder (runs, journals) to archived-goals: dry run, then --execute; refuses registered goals",
    mutation: 'writes_after_preview',
    group: 'Runtime',
    icon: 'archive',
    menus: [{ on: 'goal', group: '3_lifecycle@3' }],
  },
  {
    key: 'todoAdd',
    cli: 'todo add',
    title: 'Add Todo…',
    slash: null,
    scope: 'goal',
    intent: "add a user or agent todo (or a user gate) to a goal's state file, with an explicit todo_id",
    mutation: 'writes',
    group: 'Goals and todos',
    icon: 'add',
    menus: [
      { on: 'goal', group: 'inline@1' },
      { on: 'goal', group: '0_todos@1' },
    ],
  },
  {
    key: 'todoList',
    cli: 'todo list',
    title: 'List Todos',
    slash: null,
    scope: 'goal',
    intent: "list a goal's todos with priority, status, claims, open gates and what each gate blocks",
    mutation: 'read_only',
    group: 'Goals and todos',
    icon: 'checklist',
    menus: [{ on: 'goal', group: '0_todos@2' }],
  },
  {
    key: 'todoClaim',
    cli: 'todo claim',
    title: 'Claim Todo for Agent…',
    slash: null,
    scope: 'goal',
    intent: 'claim an agent todo for a registered agent (soft claim)',
    mutation: 'writes',
    group: 'Goals and todos',
    icon: 'person',
    menus: [{ on: 'todo', group: '0_todo@2', state: '[^.]*\\.agent(\\.leased)?$' }],
  },
  {
    key: 'todoUpdate',
    cli: 'todo update',
    title: 'Change Todo Priority…',
    slash: null,
    scope: 'goal',
    intent: "change a todo's text, priority, status, class, claim, note or gate relations",
    mutation: 'writes',
    group: 'Goals and todos',
    icon: 'list-ordered',
    menus: [{ on: 'todo', group: '1_change@3' }],
  },
  {
    key: 'todoComplete',
    cli: 'todo complete',
    title: 'Complete Todo…',
    slash: null,
    scope: 'goal',
    intent:
      'mark a todo done with evidence and a successor or --no-follow-up; resolve a gate with approve, reject or cancel',
    mutation: 'writes',
    group: 'Goals and todos',
    icon: 'pass',
    menus: [
      { on: 'todo', group: 'inline@1' },
      { on: 'todo', group: '0_todo@1' },
    ],
  },
  {
    key: 'todoSupersede',
    cli: 'todo supersede',
    title: 'Supersede Todo…',
    slash: null,
    scope: 'goal',
    intent: 'close a todo as replaced by a new or an existing todo',
    mutation: 'writes',
    group: 'Goals and todos',
    icon: 'replace',
    menus: [{ on: 'todo', group: '1_change@2' }],
  },
  {
    key: 'todoDefer',
    cli: 'todo defer',
    title: 'Defer Todo…',
    slash: null,
    scope: 'goal',
    intent: 'set a todo aside with a reason and an optional resume condition',
    mutation: 'writes',
    group: 'Goals and todos',
    icon: 'clock',
    menus: [{ on: 'todo', group: '1_change@1' }],
  },
  {
    key: 'handoffModeShow',
    cli: 'handoff-mode show',
    title: null,
    slash: null,
    scope: 'goal',
    intent: "show the goal's handoff mode (legacy, soft_claim or hard_lease) and where it is set",
    mutation: 'read_only',
    group: 'Goals and todos',
  },
  {
    key: 'handoffModeSet',
    cli: 'handoff-mode set',
    title: null,
    slash: null,
    scope: 'goal',
    intent:
      "set the goal's handoff mode in its state file (--execute; default preview); refused while a todo is claimed or leased",
    mutation: 'writes_after_preview',
    group: 'Goals and todos',
  },
  {
    key: 'taskLeaseAcquire',
    cli: 'task-lease acquire',
    title: null,
    slash: null,
    scope: 'goal',
    intent:
      'take the hard task lease on a todo: owner, idempotency key, TTL and write scopes (refused when another agent holds it or its scopes overlap)',
    mutation: 'writes',
    group: 'Goals and todos',
  },
  {
    key: 'taskLeaseRenew',
    cli: 'task-lease renew',
    title: 'Renew Lease…',
    slash: null,
    scope: 'goal',
    intent: 'extend a held task lease (owner, key and expected version must match)',
    mutation: 'writes',
    group: 'Goals and todos',
    icon: 'history',
    menus: [{ on: 'todo', group: '2_lease@1', state: '.*\\.leased$' }],
  },
  {
    key: 'taskLeaseTransfer',
    cli: 'task-lease transfer',
    title: 'Transfer Lease…',
    slash: null,
    scope: 'goal',
    intent: 'hand a held task lease to another registered agent under a new key (compare-and-swap on the version)',
    mutation: 'writes',
    group: 'Goals and todos',
    icon: 'arrow-swap',
    menus: [{ on: 'todo', group: '2_lease@2', state: '.*\\.leased$' }],
  },
  {
    key: 'taskLeaseRelease',
    cli: 'task-lease release',
    title: 'Release Lease…',
    slash: null,
    scope: 'goal',
    intent: 'release a held task lease (owner, key and expected version must match)',
    mutation: 'writes',
    group: 'Goals and todos',
    icon: 'unlock',
    menus: [{ on: 'todo', group: '2_lease@3', state: '.*\\.leased$' }],
  },
  {
    key: 'taskLeaseInspect',
    cli: 'task-lease inspect',
    title: null,
    slash: null,
    scope: 'goal',
    intent: 'show who holds the task lease on a todo, until when, its version and epoch',
    mutation: 'read_only',
    group: 'Goals and todos',
  },
  {
    key: 'gateApprove',
    cli: null,
    title: 'Approve Gate…',
    slash: null,
    scope: 'goal',
    intent:
      'approve a user gate with a decision note (todo complete --decision-outcome approve): the todos it holds become runnable',
    mutation: 'writes',
    group: 'Goals and todos',
    icon: 'check',
    menus: [
      { on: 'gate', group: 'inline@1', state: '[^.]*$' },
      { on: 'gate', group: '0_decide@1', state: '[^.]*$' },
    ],
  },
  {
    key: 'gateReject',
    cli: null,
    title: 'Reject Gate…',
    slash: null,
    scope: 'goal',
    intent:
      'reject a user gate with a decision note (todo complete --decision-outcome reject): the todos it holds stay blocked',
    mutation: 'writes',
    group: 'Goals and todos',
    icon: 'close',
    menus: [
      { on: 'gate', group: 'inline@2', state: '[^.]*$' },
      { on: 'gate', group: '0_decide@2', state: '[^.]*$' },
    ],
  },
  {
    key: 'gateSetDue',
    cli: 'gate set-due',
    title: 'Set Gate Due Time…',
    slash: null,
    scope: 'goal',
    intent:
      'set or clear when a user gate should be decided (--due-at or --due-in; metadata next_due_at); past it the editor escalates the gate',
    mutation: 'writes',
    group: 'Goals and todos',
    icon: 'calendar',
    menus: [{ on: 'gate', group: '0_decide@4' }],
  },
  {
    key: 'gateInbox',
    cli: 'gate inbox',
    title: 'Gate Inbox…',
    slash: null,
    scope: 'project',
    intent:
      'every open gate of every goal in one list, longest blocked first, with its due time and the agent time it holds back',
    mutation: 'read_only',
    group: 'Goals and todos',
    icon: 'inbox',
  },
  {
    key: 'openInStateFile',
    cli: null,
    title: 'Open in State File',
    slash: null,
    scope: 'editor',
    intent: "open the goal's ACTIVE_GOAL_STATE.md at the line of a todo or gate",
    mutation: 'read_only',
    group: 'Editor',
    icon: 'go-to-file',
    menus: [
      { on: 'todo', group: 'inline@9' },
      { on: 'todo', group: '2_open' },
      { on: 'gate', group: '2_open' },
    ],
  },
  {
    key: 'pauseGoal',
    cli: 'goal pause',
    title: 'Pause Goal',
    slash: null,
    scope: 'goal',
    intent:
      "set the owner's stop flag (registry status paused): should-run answers paused and no turn starts until goal resume",
    mutation: 'writes_after_preview',
    group: 'Goals and todos',
    icon: 'debug-pause',
    menus: [{ on: 'goal', group: '3_lifecycle@1', state: '(?!paused|stopped)' }],
  },
  {
    key: 'resumeGoal',
    cli: 'goal resume',
    title: 'Resume Goal',
    slash: null,
    scope: 'goal',
    intent: "clear the owner's stop flag (registry status back to active), so turns may run again",
    mutation: 'writes_after_preview',
    group: 'Goals and todos',
    icon: 'debug-continue',
    menus: [{ on: 'goal', group: '3_lifecycle@2', state: '(paused|stopped)' }],
  },
  {
    key: 'goalLifecycle',
    cli: 'goal-lifecycle',
    title: null,
    slash: null,
    scope: 'goal',
    intent:
      "the original's spelling of goal pause / goal resume: --operation stop|resume sets or clears the owner's stop flag (preview, then --execute)",
    mutation: 'writes_after_preview',
    group: 'Goals and todos',
  },
  {
    key: 'status',
    cli: 'status',
    title: 'Show Status',
    slash: '/loopx-status',
    scope: 'project',
    intent:
      'per goal: the Next Action, what the latest run recommends, drift warnings with the fix, todo counts, open gates and latest runs',
    chat: 'status',
    mutation: 'read_only',
    group: 'Inspect',
    icon: 'pulse',
    menus: [{ on: 'goalsTitle', group: 'navigation@2' }],
  },
  {
    key: 'globalSummary',
    cli: 'global-summary',
    title: 'Global Summary',
    slash: '/loopx-global-summary',
    scope: 'global',
    intent: 'progress digest across goals: who each goal waits on, open todos and gates, runs in the time range, quota',
    chat: 'summary',
    mutation: 'read_only',
    group: 'Inspect',
  },
  {
    key: 'globalGates',
    cli: 'global-gates',
    title: 'Global Gates',
    slash: '/loopx-global-gates',
    scope: 'global',
    intent:
      'open user gates across goals and what each one blocks, plus rejected or cancelled gates that still hold work',
    chat: 'gates',
    mutation: 'read_only',
    group: 'Inspect',
  },
  {
    key: 'globalTodos',
    cli: 'global-todos',
    title: 'Global Todos',
    slash: '/loopx-global-todos',
    scope: 'global',
    intent: 'todos across goals: runnable, blocked, deferred and ready to resume, and waiting for your review',
    chat: 'todos',
    mutation: 'read_only',
    group: 'Inspect',
  },
  {
    key: 'globalRisks',
    cli: 'global-risks',
    title: 'Global Risks',
    slash: '/loopx-global-risks',
    scope: 'global',
    intent:
      'risks across goals: stale runs, projection warnings, failing validations, quota near or over its limit, locks held by dead processes',
    chat: 'risks',
    mutation: 'read_only',
    group: 'Inspect',
  },
  {
    key: 'serveStatus',
    cli: 'serve-status',
    title: null,
    slash: null,
    scope: 'project',
    intent:
      'serve the status read model over HTTP on 127.0.0.1 for dashboards: read-only, token-protected, drop-in /status.json',
    mutation: 'read_only',
    group: 'Inspect',
  },
  {
    key: 'mcpServe',
    cli: 'mcp',
    title: null,
    slash: null,
    scope: 'project',
    intent:
      "serve the project's agent tools over MCP on stdio (should_run, todos, refresh_state, spend_slot, leases; no human-only actions) until the client disconnects",
    mutation: 'writes',
    group: 'Agents',
  },
  {
    key: 'showProjectionWarnings',
    cli: null,
    title: 'Show Projection Warnings',
    slash: null,
    scope: 'editor',
    intent: 'every drift warning across goals, with the compared texts side by side and the actions that resolve each',
    mutation: 'read_only',
    group: 'Editor',
    icon: 'warning',
    menus: [
      { on: 'warning', group: 'inline@0' },
      { on: 'warning', group: '0_resolve@0' },
    ],
  },
  {
    key: 'showGoalDetail',
    cli: null,
    title: 'Show Goal Detail',
    slash: null,
    scope: 'editor',
    intent: "a goal's spend over the quota window as a chart, its todo frontier and its latest runs",
    mutation: 'read_only',
    group: 'Editor',
    icon: 'graph-line',
    menus: [{ on: 'goal', group: '1_state@3' }],
  },
  {
    key: 'quotaOverview',
    cli: null,
    title: 'Show Quota of All Goals',
    slash: null,
    scope: 'editor',
    intent: 'pick a goal from the quota of all goals, then pause, resume or configure it',
    mutation: 'read_only',
    group: 'Editor',
    icon: 'dashboard',
  },
  {
    key: 'copyStatusServerUrl',
    cli: null,
    title: 'Copy Status Server URL',
    slash: null,
    scope: 'editor',
    intent: "put the status server's URL, with its token, on the clipboard",
    mutation: 'read_only',
    group: 'Editor',
  },
  {
    key: 'refreshState',
    cli: 'refresh-state',
    title: 'Refresh Goal State…',
    slash: null,
    scope: 'goal',
    intent:
      "record a snapshot run of a goal's state (digest, updated_at, recommended action); --next-action rewrites the durable route first",
    mutation: 'writes',
    group: 'Goals and todos',
    icon: 'sync',
    menus: [{ on: 'goal', group: '1_state@1' }],
  },
  {
    key: 'heartbeatPrompt',
    cli: 'heartbeat-prompt',
    title: null,
    slash: '/loopx-heartbeat',
    slashArguments: '--goal-id <id> --agent-id <agent>',
    scope: 'agent',
    intent:
      'print the task body of one bounded turn for an agent: objective, its todo, open gates, recent evidence, budget left and the result contract',
    mutation: 'read_only',
    group: 'Quota and turns',
  },
  {
    key: 'quotaStatus',
    cli: 'quota status',
    title: 'Show Quota',
    slash: null,
    scope: 'goal',
    intent: "show a goal's quota: slots spent and reserved in the rolling window, budgets, warn and limit state",
    mutation: 'read_only',
    group: 'Quota and turns',
    icon: 'dashboard',
    menus: [{ on: 'goal', group: '1_state@2' }],
  },
  {
    key: 'quotaHistory',
    cli: 'quota history',
    title: null,
    slash: null,
    scope: 'goal',
    intent: "list a goal's counted spends in the rolling quota window (slots, tokens, cost) with its limits",
    mutation: 'read_only',
    group: 'Quota and turns',
  },
  {
    key: 'quotaPlan',
    cli: 'quota plan',
    title: null,
    slash: null,
    scope: 'global',
    intent:
      "every registered goal's quota state, grouped blocked_health → paused, and the goal an outer scheduler would run next",
    mutation: 'read_only',
    group: 'Quota and turns',
  },
  {
    key: 'evidenceLog',
    cli: 'evidence-log',
    title: null,
    slash: null,
    scope: 'goal',
    intent:
      "read a goal's rollout event log (heartbeat receipts, writebacks, spends, todo events), filtered by turn, agent, todo or kind",
    mutation: 'read_only',
    group: 'Quota and turns',
  },
  {
    key: 'quotaShouldRun',
    cli: 'quota should-run',
    title: null,
    slash: null,
    scope: 'goal',
    intent:
      "decide whether an agent may run a turn now and on which todo (read-only; with --turn-instance-id it appends the turn's heartbeat receipt once)",
    chat: 'next',
    mutation: 'read_only',
    group: 'Quota and turns',
  },
  {
    key: 'quotaSpendSlot',
    cli: 'quota spend-slot',
    title: null,
    slash: null,
    scope: 'goal',
    intent: "settle a turn's quota slot after its writeback, once per settlement identity: preview, then --execute",
    mutation: 'writes_after_preview',
    group: 'Quota and turns',
  },
  {
    key: 'quotaVoidSlot',
    cli: 'quota void-slot',
    title: null,
    slash: null,
    scope: 'goal',
    intent: "release a turn's reservation or cancel a spend with a compensating record: preview, then --execute",
    mutation: 'writes_after_preview',
    group: 'Quota and turns',
  },
  {
    key: 'turnPlan',
    cli: 'turn plan',
    title: null,
    slash: null,
    scope: 'goal',
    intent:
      'plan one turn (read-only): the decision, the selected todo, the route, the host request that would be sent and the settlement identity goal:agent:todo:turn',
    mutation: 'read_only',
    group: 'Quota and turns',
  },
  {
    key: 'turnRunOnce',
    cli: 'turn run-once',
    title: 'Run One Turn…',
    slash: null,
    scope: 'goal',
    intent:
      'run one journaled turn: reserve the slot, run the agent, validate, write back, spend once: preview, then --execute (resume or retry a turn with --resume-turn-key)',
    chat: 'run',
    mutation: 'writes_after_preview',
    group: 'Quota and turns',
    icon: 'debug-step-over',
    menus: [
      { on: 'goal', group: '0_run@1' },
      { on: 'agent', group: '0_agent@2' },
    ],
  },
  {
    key: 'turnLoop',
    cli: 'turn loop',
    title: 'Run Loop…',
    slash: null,
    scope: 'goal',
    intent:
      'run turns back to back until the goal waits, needs a person, runs out of budget, is done or fails; Ctrl+C stops after the current phase',
    mutation: 'writes',
    group: 'Quota and turns',
    icon: 'play',
    menus: [
      { on: 'goal', group: 'inline@0', trustedOnly: true },
      { on: 'goal', group: '0_run@2' },
    ],
  },
  {
    key: 'stopLoop',
    cli: null,
    title: 'Stop Loop',
    slash: null,
    scope: 'editor',
    intent: "stop the goal's loop running in this window after its current phase (the turn in flight ends cleanly)",
    mutation: 'read_only',
    group: 'Quota and turns',
    icon: 'debug-stop',
    menus: [
      { on: 'goal', group: 'inline@0', state: '[^.]*\\.running$' },
      { on: 'goal', group: '0_run@3', state: '[^.]*\\.running$' },
    ],
  },
  {
    key: 'reviewList',
    cli: 'review list',
    title: 'Show Review Queue',
    slash: null,
    scope: 'project',
    intent:
      'list the recorded turns with a working-tree snapshot (base and head), newest first, across goals and agents: goal, agent, todo, classification, validation, cost, changed files',
    mutation: 'read_only',
    group: 'Inspect',
    icon: 'checklist',
  },
  {
    key: 'reviewRevert',
    cli: 'review revert',
    title: 'Revert This Turn…',
    slash: null,
    scope: 'goal',
    intent:
      "put a turn's files (all, or one) back to its base; refuses, writing nothing, when a file changed after the turn: preview, then --execute",
    mutation: 'writes_after_preview',
    group: 'Quota and turns',
    icon: 'discard',
    menus: [
      { on: 'reviewTurn', group: '1_revert@1', trustedOnly: true },
      { on: 'reviewFile', group: 'inline@2', trustedOnly: true },
    ],
  },
  {
    key: 'reviewMarkReviewed',
    cli: null,
    title: 'Mark Reviewed',
    slash: null,
    scope: 'editor',
    intent: 'mark a turn of the Review view as reviewed (kept per user in the editor, never in the shared files)',
    mutation: 'read_only',
    group: 'Editor',
    nodeOnly: true,
    icon: 'check',
    menus: [
      { on: 'reviewTurn', group: 'inline@1' },
      { on: 'reviewTurn', group: '0_review@1' },
    ],
  },
  {
    key: 'reviewMarkAllReviewed',
    cli: null,
    title: 'Mark Reviewed up to Here',
    slash: null,
    scope: 'editor',
    intent: 'mark this turn and every older turn of the Review view as reviewed',
    mutation: 'read_only',
    group: 'Editor',
    nodeOnly: true,
    icon: 'check-all',
    menus: [{ on: 'reviewTurn', group: '0_review@2' }],
  },
  {
    key: 'reviewOpenDiff',
    cli: null,
    title: 'Open Turn Diff',
    slash: null,
    scope: 'editor',
    intent: "open a file's diff in VS Code's diff editor: the turn's base on the left, its head on the right",
    mutation: 'read_only',
    group: 'Editor',
    nodeOnly: true,
    icon: 'diff',
    menus: [{ on: 'reviewFile', group: 'inline@1' }],
  },
  {
    key: 'reviewOpenEvidence',
    cli: null,
    title: 'Open Turn Evidence',
    slash: null,
    scope: 'editor',
    intent: "open a reviewed turn's run record (its Markdown evidence)",
    mutation: 'read_only',
    group: 'Editor',
    nodeOnly: true,
    icon: 'markdown',
    menus: [{ on: 'reviewTurn', group: '0_review@3' }],
  },
  {
    key: 'openRunEvidence',
    cli: null,
    title: 'Open Run Evidence',
    slash: null,
    scope: 'editor',
    intent: "open a run's Markdown record (its evidence) from the goal's Recent runs",
    mutation: 'read_only',
    group: 'Editor',
    nodeOnly: true,
    icon: 'markdown',
    menus: [{ on: 'run', group: 'inline@1', state: 'evidence' }],
  },
  {
    key: 'turnInspectJournal',
    cli: 'turn inspect-journal',
    title: null,
    slash: null,
    scope: 'goal',
    intent: "list a goal's turn journals (status, phases, settlement identity), or show one turn's journal in full",
    mutation: 'read_only',
    group: 'Quota and turns',
  },
] as const satisfies readonly CommandSpec[];

/** The catalog as written (what a bundle uses as COMMANDS); for the test that the parse changes nothing. */
export const CATALOG_LITERAL: readonly CommandSpec[] = catalog;

export type CommandKey = (typeof catalog)[number]['key'];
/** Keys of the commands that have a CLI form. */
export type CliCommandKey = Extract<(typeof catalog)[number], { cli: string }>['key'];
/** Keys of the commands that appear in the command palette. */
export type PaletteCommandKey = Extract<(typeof catalog)[number], { title: string }>['key'];

/** Defined (true) by every bundle (scripts/build.mjs, scripts/build-lib.mjs); absent under tsx. */
declare const LOOPX_SHIPPED_BUILD: boolean;

/**
 * The catalog, checked against `CommandSpec` wherever it can be edited: tests and source runs
 * (tsx) parse it, so `npm test` fails on a bad entry. A bundle takes the literal as it is (it has no
 * defaults or transforms, and `satisfies` holds its shape): the parse cost every CLI start ~5 ms.
 */
export const COMMANDS: readonly CommandSpec[] =
  typeof LOOPX_SHIPPED_BUILD === 'boolean' && LOOPX_SHIPPED_BUILD ? catalog : z.array(CommandSpec).parse(catalog);

export const PALETTE_PREFIX = 'loopx.';

export function paletteCommandId(spec: Pick<CommandSpec, 'key'>): string {
  return `${PALETTE_PREFIX}${spec.key}`;
}

export function commandByKey(key: CommandKey): CommandSpec {
  const spec = COMMANDS.find((c) => c.key === key);
  if (!spec) throw new Error(`unknown command key ${key}`);
  return spec;
}

export function cliCommands(): CommandSpec[] {
  return COMMANDS.filter((c) => c.cli !== null);
}

/** The catalog entries the `@loopx` chat participant offers as slash commands, in catalog order. */
export function chatCommands(): (CommandSpec & { chat: string })[] {
  return COMMANDS.filter((c): c is CommandSpec & { chat: string } => c.chat !== undefined);
}

export function paletteCommands(): CommandSpec[] {
  return COMMANDS.filter((c) => c.title !== null);
}
