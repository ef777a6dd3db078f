/**
 * Every `code` a `LoopxError` can carry: callers branch on these, so they are part of the public
 * contract (docs/api.md, "Error codes", lists them with the meanings below, and a unit test keeps
 * the two equal). `LoopxError` and `isLoopxError` take a `LoopxErrorCode`, so a misspelt code fails
 * to compile. Keep the list alphabetical, one code per line, each with its meaning as a trailing
 * comment.
 */
export const LOOPX_ERROR_CODES = [
  'agent_id_invalid', // an agent id is not a public-safe token
  'agent_not_registered', // the agent is not in the goal's coordination.registered_agents
  'agent_registry_roster_missing', // the goal has no coordination.registered_agents list to check an agent against
  'archive_cross_device', // the archive root is on another filesystem (LoopX moves, never copies)
  'archive_root_inside_source', // the archive root lies inside the runtime folder being archived
  'corrupt_lease', // a task lease file does not parse as task_lease_v0; it is left untouched
  'credential_refused', // a field to be written holds a credential
  'demo_agent_unavailable', // the built-in demo agent is not in this build
  'executor_config_invalid', // an agent profile's executor settings are invalid
  'executor_missing', // the agent has no executor to run a turn with
  'executor_unavailable_here', // the agent's executor (vscode-lm) runs only inside VS Code, not in this process
  'file_not_found', // a file the operation needs does not exist
  'file_not_regular', // a path to read is a directory, device, FIFO or socket, not a regular file
  'file_system_error', // a file or folder could not be used (a symlink loop, a file or folder in the way, no permission); names the path and the fix
  'file_too_large', // a file is over the size LoopX reads
  'file_unreadable', // a file exists but could not be read
  'gate_cannot_be_deferred', // user gates are resolved or superseded, not deferred
  'gate_decision_outcome_not_a_gate', // a decision outcome was given for a todo that is not a user gate
  'gate_decision_outcome_required', // completing a user gate needs a decision outcome
  'gate_scope_conflict', // a user gate sets both blocks_agent and global_gate
  'gate_scope_required', // a user gate on a goal with several agents needs blocks_agent or global_gate
  'gate_target_not_agent_todo', // a gate's unblocks_todo_id names a user todo
  'git_unavailable', // git is not installed or not on PATH (lanes need it)
  'global_registry_not_found', // register-agent: the global registry that names the goal's source registry does not exist
  'global_route_collision', // two goals would share a route in the global registry
  'goal_exists', // bootstrap: the goal id is already in the registry (no --force)
  'goal_not_found', // no goal with that id in the registry
  'goal_plan_state_file_exists', // bootstrap with a plan: the goal's state file already exists, so the plan would not be written (no --force)
  'goal_registered', // archive: the goal is still in the registry (no --allow-registered)
  'handoff_mode_forbids_lease', // the goal's handoff_mode is soft_claim, which forbids task lease acquire, renew and transfer
  'handoff_mode_not_quiescent', // handoff-mode set: an open todo is claimed or a task lease is time-active, so the mode cannot change
  'handoff_mode_requires_lease', // hard_lease mode: the change needs the acting agent to hold the todo's active task lease
  'heartbeat_receipt_binding_mismatch', // a turn-scoped step names another todo or replan obligation than its heartbeat receipt binds
  'idempotency_key_reuse', // a task lease idempotency key was reused with other parameters or for a new lease generation
  'invalid_argument', // a library function got an unknown, missing or malformed argument
  'invalid_clock', // LOOPX_NOW (or another pinned clock) is not an ISO-8601 instant
  'invalid_decision_scope', // a gate's decision_scope is malformed
  'invalid_frontmatter_key', // a state-file front matter key is not a plain key
  'invalid_frontmatter_value', // a state-file front matter value spans lines
  'invalid_goal_config', // configure-goal: a setting's value breaks its rule (a failed operation, exit 1)
  'invalid_goal_id', // a goal id is empty or not a public-safe token
  'invalid_handoff_mode', // a goal's handoff_mode is not legacy, soft_claim or hard_lease
  'invalid_idempotency_key', // a task lease idempotency key is not a public-safe token
  'invalid_json', // a JSON file does not parse
  'invalid_port', // a port is not a whole number from 0 to 65535
  'invalid_projection_input', // a projection-check function got a malformed input
  'invalid_resume_condition', // a deferred todo's resume condition has an unknown form
  'invalid_run_record', // a run record cannot be written or indexed as given
  'invalid_task_class', // a todo's task_class is not a known class
  'invalid_time_range', // a time range is not a number followed by m, h or d
  'invalid_todo_field', // a todo metadata value is not a lowercase token
  'invalid_ttl', // a task lease TTL is not a whole number of seconds from 1 to 86400
  'json_too_deep', // a JSON document nests deeper than LoopX reads
  'lane_git_failed', // a git command of a lane (worktree, commit, merge, reset) failed; names the command and folder
  'lane_human_only', // merging or rejecting a lane is a person's decision: refused inside an agent's turn
  'lane_not_found', // the goal has no lane (worktree isolation) for that agent
  'lane_not_git_repository', // an agent with isolation worktree works on a goal whose repo is not a git repository with a commit
  'lane_state_invalid', // a lane's worktree or branch is not what LoopX made it (another branch checked out, a folder in the way); names the fix
  'lane_unmerged_commits', // archiving a goal or removing an agent would remove a lane with commits main lacks (--force)
  'lease_cas_mismatch', // the task lease is held by another owner or idempotency key; nothing was written
  'lease_fence_required', // the todo is leased: completing or superseding it needs the lease key and expected version
  'lease_not_active', // no task lease is in force on the todo (missing, released or expired)
  'listen_failed', // the status server could not listen (other than port in use)
  'lock_acquire_timeout', // a file lock stayed held by another process past the wait
  'lock_not_reentrant', // an operation asked again for a lock it already holds
  'mcp_config_unparseable', // mcp install: an agent's config file does not parse, or cannot take LoopX's entry without changing others; it is left untouched
  'merge_gate_needs_lane_merge', // a merge-lane gate is approved by merging its lane (loopx lane merge), not by todo complete
  'next_action_credential', // refresh-state: the next action holds a credential
  'next_action_empty', // refresh-state: the next action is empty
  'not_loopback', // the status server was asked to bind a non-loopback host
  'owner_conflicts_with_claim', // the task lease owner differs from the todo's claimed_by
  'owner_excluded_from_todo', // the task lease owner is in the todo's excluded_agents
  'path_outside_root', // a path (or a symlink on it) leads outside the folders LoopX may touch
  'port_in_use', // the status server's port is taken
  'project_not_found', // bootstrap: the project folder does not exist
  'quota_agent_id_invalid', // quota: an agent id is not a public-safe token
  'quota_agent_not_registered', // quota: the agent is not registered for the goal
  'quota_agent_registry_roster_missing', // quota: the goal has no registered_agents list
  'quota_replan_obligation_id_invalid', // quota: a replan obligation id is malformed
  'quota_reservations_invalid', // quota: the reservations file does not match its schema
  'quota_settlement_agent_required', // quota: a turn-scoped settlement needs an agent id
  'quota_settlement_binding_conflict', // quota: a settlement binds both a todo and a replan obligation
  'quota_slots_invalid', // quota: slots is not a whole number of at least 1
  'quota_ttl_invalid', // quota: a reservation TTL is not a positive number of minutes
  'quota_turn_instance_id_invalid', // quota: a turn instance id is malformed
  'quota_window_out_of_range', // quota: window_hours is longer than LoopX accounts for
  'read_only_file_system', // a write failed with EROFS: the folder is read-only here (e.g. inside Codex's workspace-write sandbox)
  'recommended_action_credential', // refresh-state: the recommended action holds a credential
  'refresh_agent_id_invalid', // refresh-state: the agent id is not a public-safe token
  'refresh_agent_id_required', // refresh-state: an agent-lane refresh needs --agent-id
  'refresh_agent_lane_cannot_write_next_action', // refresh-state: an agent lane may not change the Next Action
  'refresh_agent_not_registered', // refresh-state: the agent is not registered for the goal
  'refresh_agent_registry_roster_missing', // refresh-state: the goal has no registered_agents list
  'refresh_invalid_classification', // refresh-state: the classification is not a public-safe token
  'refresh_invalid_field', // refresh-state: a field's value breaks its rule
  'refresh_multi_agent_requires_agent_id', // refresh-state: a goal with several agents needs --agent-id
  'registry_goals_not_list', // the registry's `goals` is not a JSON array
  'registry_invalid_json', // the registry does not parse as JSON
  'registry_missing', // the CLI found no registry file to use
  'registry_not_found', // the registry file named does not exist
  'registry_not_object', // the registry's root is not a JSON object
  'registry_unreadable', // the registry could not be read
  'review_revert_conflict', // review revert: a file changed after the turn (a person or a later turn edited it); nothing was reverted
  'review_revert_refused', // review revert: a path leads out of the project or through a symbolic link; nothing was reverted
  'review_turn_not_found', // review: no recorded turn with a snapshot matches the goal and turn named
  'rollout_event_not_public_safe', // a rollout event field holds a private path or credential-like text
  'runtime_goal_missing', // archive: the runtime goal folder does not exist
  'runtime_goal_not_directory', // archive: the runtime goal path is not a folder
  'runtime_goal_outside_goals_root', // archive: the runtime goal folder resolves outside the goals root
  'selected_todo_not_open', // a turn's selected todo is not an open agent todo
  'source_registry_missing', // register-agent: the goal's global registry entry names no source_registry
  'state_changed_concurrently', // the state file changed between read and write; nothing was written
  'state_file_missing', // the goal's state file does not exist
  'state_file_not_utf8', // the state file is not valid UTF-8
  'state_file_unreadable', // the state file could not be read
  'state_file_unresolved', // the goal names no state file LoopX can locate
  'state_frontmatter_missing', // handoff-mode set: the state file has no YAML front matter to hold handoff_mode
  'symlink_loop', // too many symlinks while resolving a path
  'sync_source_is_global', // sync-global was given a global registry as its source
  'task_class_role_mismatch', // a todo's task_class belongs to the other role
  'todo_agent_excluded', // the agent is in the todo's excluded_agents
  'todo_archived', // the todo is in an archive section and cannot be edited
  'todo_binding_conflict', // a user todo's bound_agent, goal_bound and gate scope disagree
  'todo_binding_required', // a user todo on a goal with several agents needs bound_agent or goal_bound
  'todo_binding_user_only', // bound_agent and goal_bound are only for user todos
  'todo_bound_to_other_agent', // a multi-agent completion by an agent other than the user todo's bound_agent
  'todo_claim_actor_mismatch', // --agent-id differs from --claimed-by
  'todo_claim_actor_required', // a multi-agent claim needs --agent-id
  'todo_claim_agent_only', // only agent todos can be claimed
  'todo_claimed_by_other_agent', // the todo is claimed by another agent (no --takeover)
  'todo_completion_continuation_conflict', // completing a todo: both a successor and --no-follow-up
  'todo_completion_continuation_required', // completing an agent todo needs a successor or --no-follow-up
  'todo_defer_reason_required', // deferring a todo needs a reason
  'todo_defer_resume_when_required', // deferring a todo (CLI, as in the original) needs a resume condition
  'todo_evidence_required', // completing a todo needs evidence
  'todo_gate_fields_need_user_gate', // gate fields were given for a todo that is not a user gate
  'todo_id_ambiguous', // the todo id appears more than once in the state file
  'todo_lease_conflict', // the todo already has an active task lease held by someone else
  'todo_lifecycle_actor_required', // a multi-agent completion needs --agent-id
  'todo_monitor_unbounded', // a continuous_monitor todo needs expires_at, resume_when or watch_only
  'todo_not_found', // no todo with that id in the state file
  'todo_not_open', // a task lease needs an open todo
  'todo_priority_conflict', // the todo text's priority and the given priority disagree
  'todo_supersede_role_mismatch', // a todo is superseded by a todo of the other role
  'todo_supersede_self', // a todo cannot supersede itself
  'todo_supersede_target_required', // superseding needs exactly one replacement
  'todo_terminal', // the todo is done or superseded and cannot be edited
  'todo_text_required', // a todo needs non-empty text
  'turn_budget_invalid', // a bounded turn budget is inconsistent
  'turn_disposition_stale_input', // a turn receipt does not belong to the turn being decided
  'turn_journal_invalid', // a turn journal does not match its schema
  'turn_journal_not_found', // no journal for that turn
  'unknown_slash_surface', // slash-command install: an unknown surface was named
  'usage', // CLI: the command line is wrong (exit code 2)
  'validation_command_invalid', // a goal's validation_command is not a non-empty argv array
  'version_mismatch', // the task lease version is not the expected one (compare-and-swap); nothing was written
  'version_required', // the task lease action needs --expected-version
  'write_scope_conflict', // the write scopes overlap another active task lease
] as const;

/** A code of `LoopxError`. */
export type LoopxErrorCode = (typeof LOOPX_ERROR_CODES)[number];
