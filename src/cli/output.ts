import type { CliContext, CommandOutput, OutputFormat } from './context';

export function printOutput(ctx: CliContext, format: OutputFormat, output: CommandOutput): void {
  if (format === 'json') {
    ctx.stdout(`${JSON.stringify(output.json, null, 2)}\n`);
  } else {
    ctx.stdout(output.markdown.endsWith('\n') ? output.markdown : `${output.markdown}\n`);
  }
}

/** Escapes text for a Markdown table cell. */
export function cell(text: string | null | undefined): string {
  return (text ?? '').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

export function markdownTable(
  headers: readonly string[],
  rows: readonly (readonly (string | null | undefined)[])[],
): string {
  const lines = [`| ${headers.join(' | ')} |`, `| ${headers.map(() => '---').join(' | ')} |`];
  for (const row of rows) lines.push(`| ${row.map(cell).join(' | ')} |`);
  return lines.join('\n');
}

/** Fields an operation's contract prints beside `error` when it fails, attached to the error that failed it. */
const CONTRACT_FIELDS = new WeakMap<object, Record<string, unknown>>();

/** Attaches the operation's failure fields (`dry_run`, `changed`, …) to an error on its way to the printer. */
export function withContractFields(error: unknown, fields: Record<string, unknown>): unknown {
  if (typeof error === 'object' && error !== null) CONTRACT_FIELDS.set(error, fields);
  return error;
}

export function contractFieldsOf(error: unknown): Record<string, unknown> {
  return (typeof error === 'object' && error !== null ? CONTRACT_FIELDS.get(error) : undefined) ?? {};
}
