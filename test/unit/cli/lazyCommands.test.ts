import assert from 'node:assert/strict';
import { CommanderError, type Command } from 'commander';
import { fixedClock } from '../../../src/core/clock';
import { cliCommands } from '../../../src/core/commands/catalog';
import { buildProgram, commandsToLoad } from '../../../src/cli/program';
import { runLoopx } from './run';

/** The help `argv` prints from a program with every command loaded (how the CLI was before it loaded commands on demand). */
async function eagerHelp(argv: string[]): Promise<string> {
  let stdout = '';
  const program: Command = await buildProgram(
    {
      cwd: process.cwd(),
      env: {},
      clock: fixedClock('2026-01-15T10:00:00Z'),
      stdout: (t) => {
        stdout += t;
      },
      stderr: () => {},
    },
    () => {},
  );
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
  }
  return stdout;
}

const words = (cli: string | null): string[] => (cli ?? '').split(' ');

describe('the CLI loads only the commands an invocation can reach', () => {
  const specs = cliCommands();

  it('loads a command whenever all its words are arguments, whatever else is on the line', () => {
    for (const spec of specs) {
      const argv = ['--format', 'json', ...words(spec.cli), '--goal-id', 'g', '--agent-id', 'a'];
      const keys = commandsToLoad(argv, specs).map((s) => s.key);
      assert.ok(keys.includes(spec.key), `loopx ${spec.cli ?? ''} would run without its options`);
    }
  });

  it('loads one command for `quota should-run`, and nothing for `--version`', () => {
    const argv = ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'a', '--format', 'json'];
    assert.deepEqual(
      commandsToLoad(argv, specs).map((s) => s.cli),
      ['quota should-run'],
    );
    assert.deepEqual(commandsToLoad(['--version'], specs), []);
  });

  it('loads every command when help may be printed or no command matched', () => {
    for (const argv of [[], ['--help'], ['quota', '-h'], ['help', 'status'], ['quota'], ['no-such-command']])
      assert.equal(commandsToLoad(argv, specs).length, specs.length, `argv ${JSON.stringify(argv)}`);
  });

  it('prints the same help as a fully loaded program, for the program, every group and every command', async () => {
    const groups = [
      ...new Set(
        specs
          .map((s) => words(s.cli))
          .filter((w) => w.length === 2)
          .map((w) => w[0] ?? ''),
      ),
    ];
    const cases = [
      ['--help'],
      ...groups.map((g) => [g, '--help']),
      ...specs.map((s) => [...words(s.cli), '--help']),
      ...specs.map((s) => ['help', ...words(s.cli).slice(0, 1)]),
      // Help beside another command's words: the group's help lists its own commands' usage.
      ['todo', '--help', 'status'],
      ['help', 'todo', 'status'],
    ];
    for (const argv of cases) {
      const lazy = await runLoopx(argv);
      assert.equal(lazy.code, 0, `loopx ${argv.join(' ')}`);
      assert.equal(lazy.stdout, await eagerHelp(argv), `loopx ${argv.join(' ')}`);
    }
  });

  it('prints the group help, with the usage of its commands, on a missing subcommand', async () => {
    const lazy = await runLoopx(['quota']);
    assert.equal(lazy.code, 0);
    assert.match(lazy.stderr, /should-run \[options\]/);
  });
});
