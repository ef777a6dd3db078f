/**
 * Finding the result object in what an agent printed. The rules are strict and predictable:
 *
 * - Machine output (`command` executor stdout, Claude Code's envelope): the whole text if it is
 *   one JSON object, else the LAST line that is a JSON object by itself. Earlier lines are logs.
 * - Model text (the final message of Claude Code or Codex): the whole text if it is one JSON
 *   object, else the LAST fenced block (```json or ```) that is a JSON object, else the last
 *   line that is one.
 *
 * Nothing else is guessed: no brace matching inside prose, no repair of broken JSON.
 */

export type JsonObject = Record<string, unknown>;

function parseObject(text: string): JsonObject | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') || !trimmed.endsWith('}')) return null;
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : null;
  } catch {
    return null;
  }
}

function lastObjectLine(text: string): JsonObject | null {
  const lines = text.split(/\r?\n/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const found = parseObject(lines[i] ?? '');
    if (found !== null) return found;
  }
  return null;
}

/** The result object of machine output, or null when there is none. */
export function extractMachineObject(text: string): JsonObject | null {
  return parseObject(text) ?? lastObjectLine(text);
}

const FENCE = /```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n([\s\S]*?)\r?\n[ \t]*```/g;

/** The result object inside a model's final message, or null when there is none. */
export function extractObjectFromMessage(text: string): JsonObject | null {
  const whole = parseObject(text);
  if (whole !== null) return whole;
  const blocks = [...text.matchAll(FENCE)].filter((m) => ['', 'json'].includes((m[1] ?? '').toLowerCase()));
  for (let i = blocks.length - 1; i >= 0; i--) {
    const found = parseObject(blocks[i]?.[2] ?? '');
    if (found !== null) return found;
  }
  return lastObjectLine(text);
}

/** Each line of JSONL output that is a JSON object, in order; other lines are skipped. */
export function jsonLines(text: string): JsonObject[] {
  return text
    .split(/\r?\n/)
    .map(parseObject)
    .filter((v): v is JsonObject => v !== null);
}
