import {
  taskLeaseAcquire,
  taskLeaseInspect,
  taskLeaseRelease,
  taskLeaseRenew,
  taskLeaseTransfer,
  type LeaseOutput,
} from '../../core/ops/taskLease';
import { operationCommand } from '../operationHandler';

/** `loopx task-lease acquire|renew|transfer|release|inspect`: hard task leases, rendered for people. */

function outcome(result: LeaseOutput): string {
  if (result.action === 'inspect') return result.active === true ? 'In force.' : 'Not in force.';
  if (result.missing === true) return 'There was no lease; nothing was written.';
  if (result.idempotent === true) return 'Already done by this key; nothing was written.';
  return 'Written.';
}

function leaseMarkdown(result: LeaseOutput): string {
  const lines = [`# task-lease ${result.action}: \`${result.todo_id}\``, '', outcome(result), ''];
  const lease = result.lease;
  if (lease === null) lines.push('No lease record.');
  else {
    lines.push(`- Owner: ${lease.owner ?? '?'} (status ${lease.status ?? '?'})`);
    lines.push(`- Expires: ${lease.expires_at ?? '?'}`);
    lines.push(`- Version ${lease.version ?? 0}, epoch ${lease.lease_epoch ?? 1}`);
    const scopes = lease.write_scopes ?? [];
    if (scopes.length > 0) lines.push(`- Write scopes: ${scopes.map((s) => `\`${s}\``).join(', ')}`);
  }
  if (result.executor_constraint !== undefined)
    lines.push('', `The lease no longer counts: ${result.executor_constraint.detail}.`);
  lines.push('', `Handoff mode: ${result.handoff_mode}. Lease file: \`${result.lease_path}\``);
  return lines.join('\n');
}

export const taskLeaseAcquireCommand = operationCommand(taskLeaseAcquire, leaseMarkdown);
export const taskLeaseRenewCommand = operationCommand(taskLeaseRenew, leaseMarkdown);
export const taskLeaseTransferCommand = operationCommand(taskLeaseTransfer, leaseMarkdown);
export const taskLeaseReleaseCommand = operationCommand(taskLeaseRelease, leaseMarkdown);
export const taskLeaseInspectCommand = operationCommand(taskLeaseInspect, leaseMarkdown);
