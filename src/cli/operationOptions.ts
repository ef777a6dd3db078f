import { Option, type Command } from 'commander';
import type { z } from 'zod';
import { LoopxError } from '../core/errors';
import { argumentFields, argumentFromText, numberArgument, type ArgumentField } from '../core/ops/fields';
import type { Operation, OperationOutput } from '../core/ops/operation';

/**
 * The CLI face of an operation, generated from its argument schema: one option per field, help
 * from the field's description, and parsing that turns commander's strings into the schema's
 * types strictly (a usage error, exit 2, names the option and what it accepts).
 */
export function addOperationOptions(command: Command, operation: Operation<z.ZodObject, OperationOutput>): void {
  for (const field of argumentFields(operation.args)) {
    const option = new Option(
      field.kind === 'boolean' ? field.flag : `${field.flag} <${field.placeholder}>`,
      helpText(field),
    );
    // A list written in one piece of text (`textForm`) is one option, not a repeatable one.
    if (field.kind === 'list' && field.textForm === null) option.argParser(collect).default(undefined);
    if (field.choices !== null && field.kind === 'enum') option.choices(field.choices);
    if (field.required && field.kind !== 'boolean') option.makeOptionMandatory();
    if (field.hidden) option.hideHelp();
    command.addOption(option);
  }
}

function helpText(field: ArgumentField): string {
  const suffix = field.kind === 'list' && field.textForm === null ? ' (repeatable)' : '';
  return `${field.description}${suffix}`;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Commander's parsed options as the operation's raw arguments (numbers parsed strictly, lists split). */
export function operationInput(
  operation: Operation<z.ZodObject, OperationOutput>,
  options: Record<string, unknown>,
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const field of argumentFields(operation.args)) {
    const option = new Option(field.flag);
    const raw = options[option.attributeName()];
    if (raw === undefined) continue;
    // Commander stores `--no-follow-up` as `followUp: false` (default true).
    input[field.key] = option.negate ? raw === false : convert(field, raw);
  }
  return input;
}

function convert(field: ArgumentField, raw: unknown): unknown {
  // Strictly decimal; the schema checks the range afterwards and names the option if it is off.
  if (field.kind === 'number') return numberArgument(field, String(raw));
  if (field.textForm !== null) return argumentFromText(field, String(raw));
  if (field.kind === 'list') {
    const values = (raw as string[]).flatMap((value) => (field.split ? value.split(',') : [value]));
    const trimmed = values.map((value) => value.trim()).filter((value) => value !== '');
    return field.choices === null && !field.integer ? trimmed : trimmed.map((v) => listItem(field, v));
  }
  return raw;
}

function listItem(field: ArgumentField, value: string): unknown {
  if (field.integer) return numberArgument(field, value);
  if (field.choices !== null && !field.choices.includes(value)) {
    throw new LoopxError(
      'usage',
      `${field.flag} must be one of ${field.choices.join(', ')}; got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** Turns the library's `invalid_argument` into the CLI's usage error, naming the option rather than the field. */
export function usageFromInvalidArgument(
  operation: Operation<z.ZodObject, OperationOutput>,
  error: LoopxError,
): LoopxError {
  const argument = String(error.details['argument'] ?? '').replace(/^options\./, '');
  const key = argument.split('.')[0] ?? '';
  const field = argumentFields(operation.args).find((candidate) => candidate.key === key);
  const flag = field?.flag ?? key;
  const accepted = String(error.details['accepted'] ?? '');
  const received = error.details['received'];
  const message = field
    ? `${flag} must be ${accepted}; got ${received === null || received === undefined ? 'nothing' : JSON.stringify(received)}`
    : error.message;
  return new LoopxError('usage', message, { ...error.details, option: flag });
}
