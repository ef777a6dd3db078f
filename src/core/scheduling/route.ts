import { z } from 'zod';

/** The plan route of a decision (docs/turns.md): what the host does with it, from the decision's channels. */
export const ROUTES = [
  'contract_error',
  'blocked',
  'replan_required',
  'repair_required',
  'ready_for_host',
  'user_action_required',
  'wait',
] as const;
export const RouteSchema = z.enum(ROUTES);
export type Route = z.infer<typeof RouteSchema>;

export const REPLAN_ACTIONS: ReadonlySet<string> = new Set([
  'autonomous_replan',
  'autonomous_replan_required',
  'successor_replan_required',
]);
export const REPAIR_ACTIONS: ReadonlySet<string> = new Set([
  'capability_repair',
  'projection_repair',
  'self_repair',
  'state_projection_repair',
  'workspace_repair',
]);

export interface RouteInput {
  should_run: boolean;
  delivery_allowed: boolean;
  must_attempt: boolean;
  effective_action: string;
  user_action_required: boolean;
  quiet_noop_allowed: boolean;
  /** Problems found by the caller (envelope, signature, scheduler context, session binding): any → contract_error. */
  contract_problems?: readonly string[];
}

/** The plan route (docs/turns.md), evaluated in the table's order. */
export function planRoute(input: RouteInput): Route {
  if ((input.contract_problems ?? []).length > 0) return 'contract_error';
  if (input.should_run) {
    if (!input.delivery_allowed || !input.must_attempt) return 'blocked';
    if (REPLAN_ACTIONS.has(input.effective_action)) return 'replan_required';
    const action = input.effective_action;
    if (REPAIR_ACTIONS.has(action) || action.endsWith('_repair') || action.endsWith('_repair_required'))
      return 'repair_required';
    // A visible user action does not stop a run that is allowed (safe bypass).
    return 'ready_for_host';
  }
  if (input.user_action_required) return 'user_action_required';
  if (input.quiet_noop_allowed) return 'wait';
  return 'blocked';
}
