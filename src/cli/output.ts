import type { CliContext, CommandOutput, OutputFormat } from './context';
import { writeJsonPretty } from './jsonStream';

export function printOutput(ctx: CliContext, format: OutputFormat, output: CommandOutput): void {
  if (format === 'json') {
    // In pieces: a status over thousands of goals is tens of megabytes of text.
    writeJsonPretty(output.json, ctx.stdout);
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
