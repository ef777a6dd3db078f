import { z } from 'zod';
import { LoopxError } from '../errors';
import { parseDecimal, type DecimalSpec } from '../numbers';

export type { DecimalSpec } from '../numbers';

/**
 * What a surface needs to know about one argument of an operation, read off its zod schema: the
 * CLI turns it into an option, the palette into a prompt, the docs into a table row. Optional
 * `.meta()` keys refine it: `flag` (a CLI name that is not the kebab-case of the key, e.g. the
 * original's), `split` (a list also accepts comma-separated values), `hidden` (kept for
 * compatibility, not shown in help), `placeholder` (the `<value>` word in help), `textForm` (how a
 * surface that takes text spells a structured value: `jsonArgv`, an argv list written as one JSON
 * array, as the original's `--validation-command-json`). The schema itself stays surface-neutral
 * (a list is an array, a switch a boolean named for what it does); only these keys are the CLI's.
 */
export interface ArgumentField {
  key: string;
  /** `--goal-id` for `goalId`. */
  flag: string;
  kind: 'boolean' | 'string' | 'number' | 'enum' | 'list';
  /** For `enum`, and for lists of enums. */
  choices: readonly string[] | null;
  /** A number field that only takes whole numbers. */
  integer: boolean;
  required: boolean;
  description: string;
  split: boolean;
  hidden: boolean;
  placeholder: string;
  textForm: TextForm | null;
}

/** How a structured argument is written as one piece of text (see `argumentFromText`). */
export type TextForm = 'jsonArgv';

export interface ArgumentMeta {
  flag?: string;
  split?: boolean;
  hidden?: boolean;
  placeholder?: string;
  textForm?: TextForm;
}

type AnySchema = z.core.$ZodType;

function defOf(schema: AnySchema): z.core.$ZodTypeDef & Record<string, unknown> {
  return schema._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
}

/** The wrappers (optional, default, nullable, pipe's input) around a field, outermost first. */
function unwrapChain(schema: AnySchema): AnySchema[] {
  const chain: AnySchema[] = [];
  let current: AnySchema | undefined = schema;
  while (current !== undefined) {
    chain.push(current);
    const def = defOf(current);
    if (def.type === 'optional' || def.type === 'default' || def.type === 'nullable' || def.type === 'prefault') {
      current = def['innerType'] as AnySchema;
    } else if (def.type === 'pipe') {
      current = def['in'] as AnySchema;
    } else if (def.type === 'catch' || def.type === 'readonly' || def.type === 'nonoptional') {
      current = def['innerType'] as AnySchema;
    } else {
      current = undefined;
    }
  }
  return chain;
}

function metaOf(chain: readonly AnySchema[]): ArgumentMeta & { description?: string } {
  const merged: ArgumentMeta & { description?: string } = {};
  for (const schema of [...chain].reverse()) {
    const meta = z.globalRegistry.get(schema as z.ZodType) as (ArgumentMeta & { description?: string }) | undefined;
    if (meta !== undefined) Object.assign(merged, meta);
  }
  return merged;
}

export function kebabFlag(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

function baseKind(schema: AnySchema): Pick<ArgumentField, 'kind' | 'choices' | 'integer'> {
  const def = defOf(schema);
  switch (def.type) {
    case 'boolean':
      return { kind: 'boolean', choices: null, integer: false };
    case 'number': {
      const checks = (def['checks'] as AnySchema[] | undefined) ?? [];
      const integer =
        (schema as { format?: string | null }).format === 'safeint' ||
        checks.some((check) => (defOf(check) as { format?: string }).format === 'safeint');
      return { kind: 'number', choices: null, integer };
    }
    case 'enum':
      return { kind: 'enum', choices: Object.values(def['entries'] as Record<string, string>), integer: false };
    case 'literal': {
      const values = (def['values'] as unknown[]).map(String);
      return { kind: 'enum', choices: values, integer: false };
    }
    case 'array': {
      const element = unwrapChain(def['element'] as AnySchema).at(-1) as AnySchema;
      const inner = baseKind(element);
      return { kind: 'list', choices: inner.choices, integer: inner.integer };
    }
    default:
      return { kind: 'string', choices: null, integer: false };
  }
}

/** The arguments of an operation, in declaration order. */
export function argumentFields(schema: z.ZodObject): ArgumentField[] {
  return Object.entries(schema.shape).map(([key, field]) => {
    const chain = unwrapChain(field as AnySchema);
    const meta = metaOf(chain);
    const outer = defOf(field as AnySchema).type;
    const required = !(field as z.ZodType).safeParse(undefined).success && outer !== 'default';
    const kind = baseKind(chain.at(-1) as AnySchema);
    return {
      key,
      flag: meta.flag ?? kebabFlag(key),
      ...kind,
      required,
      description: meta.description ?? '',
      split: meta.split === true,
      hidden: meta.hidden === true,
      placeholder: meta.placeholder ?? (kind.kind === 'number' ? 'n' : key.replace(/Id$/, '-id').toLowerCase()),
      textForm: meta.textForm ?? null,
    };
  });
}

/**
 * A number a person typed (a CLI option, an input box), read strictly: plain decimal digits within
 * `spec` (no hex, exponent, spaces, leading zeros or -0), else a `usage` error naming `name`, the
 * value given and the accepted form. A surface reads every number it is given as text this way.
 */
export function numberFromText(text: string, name: string, spec: DecimalSpec = {}): number {
  return parseDecimal(text, name, spec, 'usage');
}

/** The value of a number argument given as text: `numberFromText` named by the field's flag, whole when the field is. */
export function numberArgument(field: ArgumentField, text: string): number {
  return numberFromText(text, field.flag, { integer: field.integer });
}

/**
 * The value of an argument written in its `textForm` (`jsonArgv`: `'["node","scripts/check.js"]'`),
 * named by the field's flag in a `usage` error; blank text counts as absent.
 */
export function argumentFromText(field: ArgumentField, raw: string): string[] | undefined {
  const text = raw.trim();
  if (text === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new LoopxError(
      'usage',
      `${field.flag} must be a JSON array of strings such as '["node","scripts/check.js"]', got ${JSON.stringify(text)}`,
    );
  }
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v !== '')) {
    throw new LoopxError(
      'usage',
      `${field.flag} must be a non-empty JSON array of non-empty strings (an argv; LoopX never runs a shell)`,
    );
  }
  return value as string[];
}
