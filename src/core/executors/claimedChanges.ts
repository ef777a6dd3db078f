import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Whether the files an agent claims it changed (`changed_files`) really changed in the working tree
 * during its turn, and whether its CLI refused any of those writes (Claude Code's
 * `permission_denials`). A turn with a problem here is not validated (docs/executors.md#claimed-changes).
 *
 * "Changed during the turn": the file's status-change time (ctime, which no tool can set back) is at
 * or after the turn started, less `slackMs` for file systems with coarse or skewed clocks. A claimed
 * file that does not exist is a change only if git tracked it (the turn deleted it).
 */

export const DEFAULT_CHANGE_SLACK_MS = 1000;

/** A write the agent's CLI refused (Claude Code's `permission_denials`), by tool and path. */
export interface PermissionDenial {
  tool: string;
  /** The path the tool was denied, relative to the project when inside it; null when it named none. */
  path: string | null;
}

export interface ClaimedChangesCheck {
  /** One sentence per problem, naming the file; empty when every claim holds. */
  problems: string[];
  /** Every denial the CLI reported, claimed or not (recorded as evidence). */
  denials: PermissionDenial[];
}

function relativeInside(root: string, file: string): string | null {
  const relative = path.relative(root, path.resolve(root, file));
  return relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? null : relative;
}

function trackedByGit(root: string, file: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['ls-files', '--error-unmatch', '--', file],
      { cwd: root, timeout: 10_000, windowsHide: true, env: { PATH: process.env['PATH'] ?? '' } },
      (error) => resolve(error === null),
    );
  });
}

export async function checkClaimedChanges(input: {
  root: string;
  changedFiles: readonly string[];
  denials: readonly PermissionDenial[];
  /** When the agent was started (ms since the epoch). */
  startedAtMs: number;
  slackMs?: number;
}): Promise<ClaimedChangesCheck> {
  const slack = input.slackMs ?? DEFAULT_CHANGE_SLACK_MS;
  const problems: string[] = [];
  const denied = new Map<string, string>();
  for (const denial of input.denials) {
    const relative = denial.path === null ? null : relativeInside(input.root, denial.path);
    if (relative !== null) denied.set(relative, denial.tool);
  }
  for (const claimed of input.changedFiles) {
    const relative = relativeInside(input.root, claimed);
    if (relative === null) {
      problems.push(`${claimed}: claimed as changed but it is outside the project`);
      continue;
    }
    const tool = denied.get(relative);
    if (tool !== undefined) {
      problems.push(`${claimed}: claimed as changed but the agent's ${tool} of it was denied (permission_denials)`);
      continue;
    }
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(path.join(input.root, relative));
    } catch {
      if (!(await trackedByGit(input.root, relative)))
        problems.push(`${claimed}: claimed as changed but it does not exist in the working tree`);
      continue;
    }
    if (Math.max(stat.ctimeMs, stat.mtimeMs) < input.startedAtMs - slack)
      problems.push(`${claimed}: claimed as changed but it was not modified during the turn`);
  }
  return { problems, denials: [...input.denials] };
}
