import * as vscode from 'vscode';
import { runOperation } from '../core/ops/run';
import { taskLeaseInspect, taskLeaseRelease, taskLeaseRenew, taskLeaseTransfer } from '../core/ops/taskLease';
import type { GoalSummary } from '../core/ops/goalRows';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { editorEnvironment } from './operationRunner';
import { argumentField, Cancelled, confirm, isTrue, pickGoal } from './pickers';

/**
 * Renew / Release / Transfer of a hard task lease from the Goals tree (docs/leases.md). The editor
 * acts for the holder as the CLI does: it reads the lease (`taskLeaseInspect`) for the holder's
 * owner, key and version, shows what it will do, and passes that version as `expectedVersion`, so a
 * lease the agent renewed or handed over in the meantime is refused (`version_mismatch`), not clobbered.
 * From code or a test, `{ goalId, todoId, confirmed: true, newOwner, ttlSeconds }` answers the questions.
 */

const isString = (value: unknown): value is string => typeof value === 'string';
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);

interface HeldLease {
  goal: GoalSummary;
  todoId: string;
  title: string;
  owner: string;
  key: string;
  version: number;
  expiresAt: string;
}

/** The leased todo of a tree node, `{ goalId, todoId }` or the user's pick, with its lease as it is now. */
async function heldLease(
  model: WorkspaceModel,
  arg: unknown,
  verb: 'renew' | 'release' | 'transfer',
): Promise<HeldLease> {
  const node = arg as { kind?: unknown; goal?: GoalSummary; todo?: { todo_id: string; title: string } } | undefined;
  let goal: GoalSummary;
  let todoId: string;
  let title: string;
  if (node?.kind === 'todo' && node.goal && node.todo) {
    goal = node.goal;
    todoId = node.todo.todo_id;
    title = node.todo.title;
  } else {
    goal = await pickGoal(
      model,
      arg,
      verb === 'renew'
        ? vscode.l10n.t("Renew the lease of which goal's todo?")
        : verb === 'release'
          ? vscode.l10n.t("Release the lease of which goal's todo?")
          : vscode.l10n.t("Transfer the lease of which goal's todo?"),
    );
    const leased = [...model.leasesOf(goal)];
    const given = argumentField(arg, 'todoId', isString);
    if (given !== undefined) todoId = given;
    else {
      if (leased.length === 0) throw new Error(vscode.l10n.t('No todo of goal "{0}" is under a lease.', goal.goalId));
      const picked = await vscode.window.showQuickPick(
        leased.map(([id, lease]) => ({
          label: id,
          description: vscode.l10n.t('leased to {0} until {1}', lease.owner, lease.expires_at),
        })),
        {
          title:
            verb === 'renew'
              ? vscode.l10n.t('Renew which lease?')
              : verb === 'release'
                ? vscode.l10n.t('Release which lease?')
                : vscode.l10n.t('Transfer which lease?'),
        },
      );
      if (!picked) throw new Cancelled();
      todoId = picked.label;
    }
    title = todoId;
  }
  const inspected = await runOperation(
    taskLeaseInspect,
    { goalId: goal.goalId, todoId },
    editorEnvironment(goal.registryPath),
  );
  const lease = inspected.lease;
  const text = (field: string): string | null => {
    const value = lease?.[field];
    return typeof value === 'string' && value !== '' ? value : null;
  };
  const owner = text('owner');
  const key = text('idempotency_key');
  const version = lease?.['version'];
  if (lease === null || owner === null || key === null || !isNumber(version) || text('status') !== 'active')
    throw new Error(vscode.l10n.t('"{0}" ({1}) of goal "{2}" holds no active lease.', title, todoId, goal.goalId));
  return {
    goal,
    todoId,
    title,
    owner,
    key,
    version,
    expiresAt: text('expires_at') ?? vscode.l10n.t('an unknown time'),
  };
}

async function settle(model: WorkspaceModel, message: string): Promise<void> {
  void vscode.window.showInformationMessage(`LoopX: ${message}`);
  await model.reload();
}

/** "Renew Lease…": the holder's lease extended to now + TTL (default 45 min). */
export async function renewLeaseCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const lease = await heldLease(model, arg, 'renew');
  const ttlSeconds = argumentField(arg, 'ttlSeconds', isNumber);
  if (!argumentField(arg, 'confirmed', isTrue))
    await confirm(
      vscode.l10n.t('Renew {0}\'s lease on "{1}"?', lease.owner, lease.title),
      vscode.l10n.t(
        "It runs until {0} (version {1}). Renewed for {2} from now, on {3}'s behalf; refused if the lease changed since.",
        lease.expiresAt,
        lease.version,
        ttlSeconds === undefined ? vscode.l10n.t('45 minutes') : vscode.l10n.t('{0} s', ttlSeconds),
        lease.owner,
      ),
      vscode.l10n.t('Renew'),
    );
  const result = await runOperation(
    taskLeaseRenew,
    {
      goalId: lease.goal.goalId,
      todoId: lease.todoId,
      owner: lease.owner,
      idempotencyKey: lease.key,
      expectedVersion: lease.version,
      ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
    },
    editorEnvironment(lease.goal.registryPath),
  );
  await settle(
    model,
    vscode.l10n.t(
      'renewed {0}\'s lease on "{1}" until {2}.',
      lease.owner,
      lease.title,
      String(result.lease?.['expires_at']),
    ),
  );
}

/** "Release Lease…": the todo is free again (any registered agent may take it). */
export async function releaseLeaseCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const lease = await heldLease(model, arg, 'release');
  if (!argumentField(arg, 'confirmed', isTrue))
    await confirm(
      vscode.l10n.t('Release {0}\'s lease on "{1}"?', lease.owner, lease.title),
      vscode.l10n.t(
        '{0} holds it until {1} (version {2}). A turn it runs now on this todo will fail its writeback; the todo stays open.',
        lease.owner,
        lease.expiresAt,
        lease.version,
      ),
      vscode.l10n.t('Release'),
    );
  await runOperation(
    taskLeaseRelease,
    {
      goalId: lease.goal.goalId,
      todoId: lease.todoId,
      owner: lease.owner,
      idempotencyKey: lease.key,
      expectedVersion: lease.version,
    },
    editorEnvironment(lease.goal.registryPath),
  );
  await settle(model, vscode.l10n.t('released {0}\'s lease on "{1}".', lease.owner, lease.title));
}

/** "Transfer Lease…": handed to another registered agent under a new key (a new lease epoch). */
export async function transferLeaseCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const lease = await heldLease(model, arg, 'transfer');
  let newOwner = argumentField(arg, 'newOwner', isString);
  if (newOwner === undefined) {
    const others = lease.goal.agents.filter((a) => a !== lease.owner);
    if (others.length === 0)
      throw new Error(vscode.l10n.t('Goal "{0}" registers no other agent to hand it to.', lease.goal.goalId));
    const picked = await vscode.window.showQuickPick(others, {
      title: vscode.l10n.t('Hand {0}\'s lease on "{1}" to which agent?', lease.owner, lease.title),
    });
    if (picked === undefined) throw new Cancelled();
    newOwner = picked;
  }
  // A fresh public-safe key for the new holder (it reads it back with `loopx task-lease inspect`).
  const newIdempotencyKey = `editor-transfer:${newOwner}:${Date.now().toString(36)}`;
  if (!argumentField(arg, 'confirmed', isTrue))
    await confirm(
      vscode.l10n.t('Transfer the lease on "{0}" from {1} to {2}?', lease.title, lease.owner, newOwner),
      vscode.l10n.t(
        '{0} holds it until {1} (version {2}). {3} gets a new lease under the key {4}; {0} can no longer complete the todo.',
        lease.owner,
        lease.expiresAt,
        lease.version,
        newOwner,
        newIdempotencyKey,
      ),
      vscode.l10n.t('Transfer'),
    );
  await runOperation(
    taskLeaseTransfer,
    {
      goalId: lease.goal.goalId,
      todoId: lease.todoId,
      owner: lease.owner,
      idempotencyKey: lease.key,
      expectedVersion: lease.version,
      newOwner,
      newIdempotencyKey,
    },
    editorEnvironment(lease.goal.registryPath),
  );
  await settle(model, vscode.l10n.t('the lease on "{0}" is {1}\'s now.', lease.title, newOwner));
}
