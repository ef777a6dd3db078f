// Runs one command with a time limit; on timeout kills its whole process tree and fails with a message
// naming the tier. scripts/test-all.mjs runs every tier's commands through it, so a test that hangs (a child
// left holding a lock after a failed assertion, issue 34) fails the run instead of hanging it.
//
//   node scripts/time-limit.mjs <seconds> <tier name> -- <command> [args...]
//
// Exit code: the command's, or 124 on timeout (as timeout(1)). The command runs in a process group of
// its own; on timeout every descendant (found through /proc, so also those that started groups or
// sessions of their own) and the whole group get SIGKILL, collected before the first kill so that
// nothing is reparented out of reach. SIGINT/SIGTERM to this script are passed on the same way.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export const TIMED_OUT_EXIT_CODE = 124;

/** Parent pid of every process on this host (Linux /proc); empty where there is no /proc. */
function parentPids() {
  const parents = new Map();
  let entries = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return parents;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name (field 2) is in parentheses and may contain spaces: read after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // The process ended while we looked.
    }
  }
  return parents;
}

/** Every descendant of `pid` (children, their children, …), as running now. */
export function descendantsOf(pid) {
  const parents = parentPids();
  const found = [];
  let frontier = [pid];
  while (frontier.length > 0) {
    const next = [];
    for (const [child, parent] of parents) if (frontier.includes(parent)) next.push(child);
    found.push(...next);
    frontier = next;
  }
  return found;
}

/** SIGKILLs `pid`, its process group and all its descendants; returns the pids signalled. */
export function killTree(pid) {
  const tree = [pid, ...descendantsOf(pid)];
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // No such group (already gone, or not a group leader).
  }
  for (const member of tree) {
    try {
      process.kill(member, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  return tree;
}

/**
 * Runs `command args` with inherited stdio; resolves with { code, timedOut, killed } once it has ended
 * (or, on timeout, once its tree has been killed).
 */
export function runWithTimeLimit(command, args, { seconds, name, cwd, env, log = (line) => console.error(line) }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: 'inherit', detached: process.platform !== 'win32' });
    let settled = false;
    const finish = (result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const timer = setTimeout(() => {
      const killed = killTree(child.pid);
      log(
        `\n[test-all] TIMEOUT: tier "${name}" ran longer than its limit of ${seconds} s; killed its process tree ` +
          `(${killed.length} processes). The tier fails. (A test waiting on a child that never ends? See docs/reliability.md.)`,
      );
      finish({ code: TIMED_OUT_EXIT_CODE, timedOut: true, killed });
    }, seconds * 1000);
    const forward = (signal) => {
      killTree(child.pid);
      finish({ code: 128 + (signal === 'SIGINT' ? 2 : 15), timedOut: false, killed: [] });
    };
    process.once('SIGINT', forward);
    process.once('SIGTERM', forward);
    child.on('error', (error) => {
      log(`[test-all] tier "${name}": cannot start ${command}: ${error.message}`);
      finish({ code: 127, timedOut: false, killed: [] });
    });
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      // Whatever the command left running in its group (orphans) ends with it.
      try {
        if (process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Nothing left.
      }
      finish({ code: code ?? (signal ? 128 : 1), timedOut: false, killed: [] });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [secondsText, name, separator, command, ...args] = process.argv.slice(2);
  const seconds = Number(secondsText);
  if (!(seconds > 0) || !name || separator !== '--' || !command) {
    console.error('usage: node scripts/time-limit.mjs <seconds> <tier name> -- <command> [args...]');
    process.exit(2);
  }
  const result = await runWithTimeLimit(command, args, { seconds, name, cwd: process.cwd(), env: process.env });
  process.exit(result.code);
}
