import assert from 'node:assert/strict';
import { Command } from 'commander';
import { z } from 'zod';
import { addOperationOptions, operationInput, usageFromInvalidArgument } from '../../../src/cli/operationOptions';
import { fixedClock } from '../../../src/core/clock';
import { isLoopxError, type LoopxError } from '../../../src/core/errors';
import { argumentFields } from '../../../src/core/ops/fields';
import { defineOperation, type OperationEnvironment } from '../../../src/core/ops/operation';
import { runOperation } from '../../../src/core/ops/run';

/** A stand-in operation whose `run` echoes what it was given, to see what each surface passes. */
const echo = defineOperation({
  key: 'configureGoal',
  args: z.strictObject({
    goalId: z.string().min(1).describe('the goal'),
    // Described before `.optional()`: the description must survive the wrapper.
    slots: z.number().int().min(1).max(16).describe('a whole number from 1 to 16').optional(),
    share: z.number().min(0).max(1).default(1).describe('a share from 0 to 1'),
    agent: z.array(z.string()).optional().meta({ split: true, placeholder: 'agent' }).describe('an agent'),
    note: z.array(z.string()).optional().describe('a note'),
    mode: z.enum(['fast', 'slow']).optional().describe('fast or slow'),
    noFollowUp: z.boolean().default(false).describe('no follow-up work'),
    execute: z.boolean().default(false).describe('write (default: preview only)'),
    legacy: z.string().optional().meta({ hidden: true, flag: '--old-name' }).describe('the old spelling'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args) => ({ ok: true, args }),
});

const env: OperationEnvironment = { cwd: '/', env: {}, clock: fixedClock('2026-01-01T00:00:00Z'), homeDir: '/home/x' };

/** Parses argv as the CLI does for `echo`, and returns the operation's input. */
function cliInput(argv: string[]): Record<string, unknown> {
  const command = new Command('echo').exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  addOperationOptions(command, echo as never);
  command.parse(argv, { from: 'user' });
  return operationInput(echo as never, command.opts());
}

describe('the operations framework', () => {
  it('reads each argument off the schema: flag, kind, required, choices, lists, hidden and the description through wrappers', () => {
    const fields = new Map(argumentFields(echo.args).map((field) => [field.key, field]));
    assert.deepEqual(
      [...fields.values()].map((f) => [f.key, f.flag, f.kind, f.required]),
      [
        ['goalId', '--goal-id', 'string', true],
        ['slots', '--slots', 'number', false],
        ['share', '--share', 'number', false],
        ['agent', '--agent', 'list', false],
        ['note', '--note', 'list', false],
        ['mode', '--mode', 'enum', false],
        ['noFollowUp', '--no-follow-up', 'boolean', false],
        ['execute', '--execute', 'boolean', false],
        ['legacy', '--old-name', 'string', false],
      ],
    );
    assert.equal(fields.get('slots')?.integer, true);
    assert.equal(fields.get('share')?.integer, false);
    assert.deepEqual(fields.get('mode')?.choices, ['fast', 'slow']);
    assert.equal(fields.get('agent')?.split, true);
    assert.equal(fields.get('note')?.split, false);
    assert.equal(fields.get('legacy')?.hidden, true);
    assert.equal(fields.get('slots')?.description, 'a whole number from 1 to 16');
  });

  it('turns CLI text into typed arguments: strict numbers, split lists, negated flags', () => {
    assert.deepEqual(
      cliInput([
        '--goal-id',
        'g',
        '--slots',
        '3',
        '--share',
        '0.5',
        '--agent',
        'a,b',
        '--agent',
        'c',
        '--note',
        'x, y',
        '--no-follow-up',
        '--old-name',
        'o',
      ]),
      {
        goalId: 'g',
        slots: 3,
        share: 0.5,
        agent: ['a', 'b', 'c'],
        note: ['x, y'],
        noFollowUp: true,
        legacy: 'o',
      },
    );
    assert.deepEqual(cliInput(['--goal-id', 'g']), { goalId: 'g', noFollowUp: false });
  });

  it('refuses numbers that Number() would take: hex, exponent, -0, blanks, fractions for whole numbers', () => {
    for (const bad of ['0x10', '1e3', '-0', ' 2', '', '010', '2.5']) {
      assert.throws(
        () => cliInput(['--goal-id', 'g', '--slots', bad]),
        (error: unknown) => isLoopxError(error, 'usage') && error.message.startsWith('--slots must be'),
        `--slots ${JSON.stringify(bad)}`,
      );
    }
  });

  it('checks arguments against the schema before running, and a CLI usage error names the option', async () => {
    const error = await runOperation(echo, { goalId: 'g', slots: 17 }, env).then(
      () => assert.fail('expected a refusal'),
      (caught: unknown) => caught,
    );
    assert.ok(isLoopxError(error, 'invalid_argument'));
    assert.match(error.message, /options\.slots must be a whole number from 1 to 16; got 17/);
    const usage = usageFromInvalidArgument(echo as never, error as LoopxError);
    assert.equal(usage.code, 'usage');
    assert.equal(usage.message, '--slots must be a whole number from 1 to 16; got 17');
    await assert.rejects(
      runOperation(echo, { goalId: 'g', unknownThing: 1 }, env),
      /unknown argument options\.unknownThing/,
    );
  });

  it('sets the apply switch from the mode a surface asks for, and leaves it alone otherwise', async () => {
    const preview = await runOperation(echo, { goalId: 'g', execute: true }, env, 'preview');
    const apply = await runOperation(echo, { goalId: 'g' }, env, 'apply');
    const asGiven = await runOperation(echo, { goalId: 'g', execute: true }, env);
    assert.equal((preview.args as { execute: boolean }).execute, false);
    assert.equal((apply.args as { execute: boolean }).execute, true);
    assert.equal((asGiven.args as { execute: boolean }).execute, true);
  });
});
