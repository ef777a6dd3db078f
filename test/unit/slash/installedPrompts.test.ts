import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LOOPX_CLI_COMMAND } from '../../../src/core/protocol/cliInvocation';
import { plannedSlashFiles, SLASH_SURFACES } from '../../../src/core/slash/install';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import { runLoopx } from '../cli/run';

/**
 * The prompts `loopx slash-commands --install` writes for Claude Code, opencode and Codex drive our CLI:
 * every `loopx …` command line in them, its placeholders filled from the demo workspace, runs without a
 * usage error (exit 2), and with `--format json` prints one JSON object.
 */

/**
 * The `loopx …` commands of a prompt, in order: backtick spans starting with `"${LOOPX_CLI:-loopx}" `
 * (what the prompts run: `loopx` where LOOPX_CLI is unset), split at `&&`, each as `loopx …`.
 */
export function promptCommands(content: string): string[] {
  const spans = [...content.matchAll(/`("\$\{LOOPX_CLI:-loopx\}" [^`]*)`/g)].map((match) =>
    (match[1] ?? '').split(LOOPX_CLI_COMMAND).join('loopx'),
  );
  return spans.flatMap((span) =>
    span
      .replace(/\s*\([^)]*\)\s*$/, '') // a trailing "(one per planned todo, …)" note is prose, not an argument
      .split('&&')
      .map((part) => part.trim())
      .filter((part) => part.startsWith('loopx ')),
  );
}

/** Splits a command line the way a POSIX shell does for the quoting the prompts use ('…' and "…"). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const match of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) words.push(match[1] ?? match[2] ?? match[3] ?? '');
  return words;
}

const PLACEHOLDERS: Record<string, string> = {
  '<id>': 'slash-goal',
  '<goal text>': 'Keep the notes index current',
  '<P>': 'P1',
  '<todo>': 'Write the tag index',
  $ARGUMENTS: '',
  // The /loopx-heartbeat steps (src/core/protocol/heartbeat.ts).
  '<agent>': 'demo',
  '<todo_id>': 'todo_plan_first_steps', // the todo the receipt of should-run binds
  '<evidence>': 'the index lists every tag',
  '<next todo>': 'Link the tag index',
  '<classification>': 'validated_progress',
  '<scale>': 'single_surface',
  '<outcome>': 'outcome_progress',
  '<cost_usd>': '0.002',
  '<tokens>': '1500',
  '<turn_id>': '2026-12-01T06:00:00Z',
};

function fill(command: string): string {
  let filled = command;
  for (const [placeholder, value] of Object.entries(PLACEHOLDERS)) filled = filled.split(placeholder).join(value);
  assert.doesNotMatch(filled, /<[a-z][^>]*>|\$[A-Z]/, `an unfilled placeholder in ${command}`);
  return filled.replace(/\s+/g, ' ').trim();
}

describe('installed /loopx prompts against our CLI', () => {
  const files = plannedSlashFiles(SLASH_SURFACES);
  const commands = [...new Set(files.flatMap((file) => promptCommands(file.content)).map(fill))];

  it('the prompts name loopx commands (the extraction finds them)', () => {
    for (const expected of ['loopx status', 'loopx global-summary']) {
      assert.ok(commands.includes(expected), `${expected} in ${JSON.stringify(commands)}`);
    }
    // Each surface onboards as its own agent type (agent-onboard without one is a usage error).
    for (const type of ['codex-cli', 'claude-code', 'opencode'])
      assert.ok(commands.includes(`loopx agent-onboard --agent-type ${type}`), type);
    assert.ok(commands.some((c) => c.startsWith('loopx bootstrap --goal-id slash-goal')));
    assert.ok(commands.some((c) => c.startsWith('loopx todo add --goal-id slash-goal --priority P1')));
    // The heartbeat loop: its brief, then guard → record → settle with one turn id written into each command.
    for (const prefix of [
      'loopx heartbeat-prompt --goal-id slash-goal --agent-id demo',
      'loopx quota should-run --goal-id slash-goal --agent-id demo --turn-instance-id 2026-12-01T06:00:00Z',
      'loopx quota spend-slot --goal-id slash-goal --slots 1 --source heartbeat --execute',
    ])
      assert.ok(
        commands.some((c) => c.startsWith(prefix)),
        `${prefix} in ${JSON.stringify(commands)}`,
      );
    // Every installed file with a CLI reference contributes at least one command, and runs each through
    // LOOPX_CLI: no command span (nor a chained `&& loopx`) names a bare `loopx …`, which in VS Code's
    // terminals may be the Python LoopX.
    for (const file of files) {
      assert.ok(promptCommands(file.content).length > 0, file.relativePath);
      assert.doesNotMatch(file.content, /`loopx |&& loopx /, file.relativePath);
    }
  });

  it('each command runs on the demo workspace without a usage error, and prints JSON with --format json', async () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-slash-prompts-')));
    const workspace = materializeDemoWorkspace(path.join(root, 'workspace'));
    const env = { HOME: path.join(root, 'home') };
    const failures: string[] = [];
    let registered = false;
    for (const command of commands) {
      const argv = shellWords(command).slice(1);
      if (command.startsWith('loopx heartbeat-prompt') && !registered) {
        // The heartbeat loop's precondition (heartbeat-prompt names it when missing): the agent is registered.
        const setup = await runLoopx(
          ['configure-goal', '--goal-id', 'slash-goal', '--registered-agent', 'demo', '--execute'],
          { cwd: workspace, env },
        );
        assert.equal(setup.code, 0, setup.stderr);
        registered = true;
      }
      // As the prompt has the agent type it (Markdown by default), then as a script reads it.
      for (const format of [[], ['--format', 'json']]) {
        const run = await runLoopx([...format, ...argv], { cwd: workspace, env });
        const label = `${format.length > 0 ? '--format json ' : ''}${command} → exit ${run.code}: ${run.stderr.slice(0, 300)}`;
        if (run.code === 2) failures.push(`usage error: ${label}`);
        if (format.length > 0) {
          let parsed: unknown = null;
          try {
            parsed = JSON.parse(run.stdout);
          } catch {
            parsed = null;
          }
          if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
            failures.push(`not one JSON object: ${label} ${run.stdout.slice(0, 200)}`);
        } else if (run.stdout.trim() === '') failures.push(`no output: ${label}`);
      }
    }
    assert.deepEqual(failures, []);
  });
});
