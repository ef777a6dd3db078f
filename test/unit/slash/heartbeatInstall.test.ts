import assert from 'node:assert/strict';
import { LOOPX_CLI_COMMAND } from '../../../src/core/protocol/cliInvocation';
import { plannedSlashFiles } from '../../../src/core/slash/install';
import { cli, ONE_TODO } from '../evidence/helpers';
import { makeWorkspace } from '../quota/helpers';

/**
 * `/loopx-heartbeat`, as `slash-commands --install` writes it for Claude Code, opencode and Codex, carries
 * the `## Heartbeat` section `loopx heartbeat-prompt` prints: one source, so the installed loop and the
 * CLI's brief never drift apart. Compared against the real CLI output with the goal, the agent and the
 * selected todo put back as the prompt's placeholders.
 */

/** The lines of a Markdown section from its heading to the next heading of the same or a higher level. */
function section(text: string, heading: string): string[] {
  const lines = text.split('\n');
  const start = lines.indexOf(heading);
  assert.ok(start >= 0, `${heading} in:\n${text}`);
  const level = heading.indexOf(' ');
  const end = lines.findIndex((line, i) => i > start && (/^(#+) /.exec(line)?.[1]?.length ?? Infinity) <= level);
  const body = lines.slice(start + 1, end < 0 ? undefined : end);
  while (body.at(-1) === '') body.pop();
  return body;
}

describe('/loopx-heartbeat prompt files', () => {
  it('carry the heartbeat section heartbeat-prompt prints, with <id>, <agent> and <todo_id> placeholders', async () => {
    const ws = makeWorkspace({}, ONE_TODO);
    const run = await cli(ws, ['heartbeat-prompt', '--goal-id', 'g', '--agent-id', 'agent-a']);
    assert.equal(run.code, 0, run.stderr);
    const printed = section(String(run.json()['prompt']), '## Heartbeat').map((line) =>
      line
        .replace(/--goal-id g\b/g, '--goal-id <id>')
        .replace(/--agent-id agent-a\b/g, '--agent-id <agent>')
        .replace(/--todo-id todo_parser\b/g, '--todo-id <todo_id>'),
    );
    assert.ok(
      printed.some((line) => line.includes(`${LOOPX_CLI_COMMAND} quota spend-slot`)),
      printed.join('\n'),
    );
    const files = plannedSlashFiles(['claude-code', 'opencode', 'codex']);
    for (const relativePath of ['.claude/commands/loopx-heartbeat.md', '.opencode/commands/loopx-heartbeat.md']) {
      const file = files.find((f) => f.relativePath === relativePath);
      assert.ok(file, relativePath);
      assert.deepEqual(section(file.content, '## Heartbeat'), printed, relativePath);
      assert.ok(
        file.content.includes(`\`${LOOPX_CLI_COMMAND} heartbeat-prompt --goal-id <id> --agent-id <agent>\``),
        relativePath,
      );
    }
    const skill = files.find((f) => f.surface === 'codex');
    assert.ok(skill);
    assert.deepEqual(section(skill.content, '### Heartbeat'), printed);
    assert.ok(skill.commands.includes('/loopx-heartbeat'));
  });
});
