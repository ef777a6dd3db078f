import assert from 'node:assert/strict';
import type { Command } from 'commander';
import { fixedClock } from '../../../src/core/clock';
import type { CommandSpec } from '../../../src/core/commands/catalog';
import type { CliHandler } from '../../../src/cli/commands/index';
import { buildProgram } from '../../../src/cli/program';

/**
 * A one-word command may share its word with a group of two-word commands (`loopx mcp` runs the MCP
 * server, `loopx mcp install` writes an agent's config): the word is one command that runs its own action
 * with its own options, and dispatches to its sub-commands.
 */

function spec(key: string, cli: string): CommandSpec {
  return {
    key,
    cli,
    title: null,
    slash: null,
    scope: 'project',
    intent: `${key} intent`,
    mutation: 'read_only',
    group: 'Set up',
  };
}

function handler(name: string, option: string, ran: string[]): CliHandler {
  return {
    configure: (command) => command.option(`--${option} <value>`, option),
    run: ({ options }) => {
      ran.push(`${name}:${JSON.stringify(options)}`);
      return { ok: true, json: {}, markdown: '' };
    },
  };
}

async function program(
  ran: string[],
  out: string[],
  argv: string[],
  order: 'group-first' | 'word-first',
): Promise<Command> {
  const specs = [spec('serve', 'mcp'), spec('install', 'mcp install'), spec('other', 'other')];
  return buildProgram(
    {
      cwd: process.cwd(),
      env: {},
      clock: fixedClock('2026-01-15T10:00:00Z'),
      stdout: (text) => out.push(text),
      stderr: (text) => out.push(text),
    },
    () => {},
    argv,
    {
      specs:
        order === 'word-first' ? specs : [specs[1] as CommandSpec, specs[0] as CommandSpec, specs[2] as CommandSpec],
      handlers: {
        serve: () => Promise.resolve(handler('serve', 'project-root', ran)),
        install: () => Promise.resolve(handler('install', 'target', ran)),
        other: () => Promise.resolve(handler('other', 'x', ran)),
      },
    },
  );
}

describe('a command that is also a group', () => {
  for (const order of ['word-first', 'group-first'] as const)
    it(`runs its own action, and its sub-commands (${order} in the catalog)`, async () => {
      const ran: string[] = [];
      const out: string[] = [];
      const serve = ['mcp', '--project-root', '/p'];
      await (await program(ran, out, serve, order)).parseAsync(serve, { from: 'user' });
      const install = ['mcp', 'install', '--target', 'codex'];
      await (await program(ran, out, install, order)).parseAsync(install, { from: 'user' });
      assert.deepEqual(ran, ['serve:{"projectRoot":"/p"}', 'install:{"target":"codex"}']);
      const help = (await program(ran, out, [], order)).helpInformation();
      assert.match(help, /mcp \[options\]\s+serve intent; also install \(see loopx mcp --help\)/);
    });
});
