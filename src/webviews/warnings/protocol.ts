// zod/mini: the same checks as zod, in a bundle small enough for the webview's first paint (zod's full API is ~450 KB of it).
import * as z from 'zod/mini';
import { l10nBundleSchema } from '../shared/protocol';

/**
 * The messages between the projection-warnings webview and the extension host, validated with zod
 * on both sides. The webview only ever names a card and an action by key: the texts an action
 * writes come from the host's own model, never from the message.
 */

export const CARD_ACTIONS = [
  'set_next_action',
  'keep_route',
  'refresh_state',
  'add_todo',
  'record_replan',
  'open_state',
] as const;
export const cardActionKindSchema = z.enum(CARD_ACTIONS);
export type CardActionKind = z.infer<typeof cardActionKindSchema>;

export const comparedTextSchema = z.object({
  /** What the text is, e.g. "Durable Next Action". */
  label: z.string(),
  /** The field of the original payloads it comes from. */
  field: z.string(),
  value: z.nullable(z.string()),
  /** When the text was written (ISO time), when known. */
  written_at: z.nullable(z.string()),
});
export type ComparedText = z.infer<typeof comparedTextSchema>;

export const cardActionSchema = z.object({
  kind: cardActionKindSchema,
  label: z.string(),
  /** What the action would write, shown before the button is pressed. */
  detail: z.nullable(z.string()),
});
export type CardAction = z.infer<typeof cardActionSchema>;

export const warningCardSchema = z.object({
  /** Stable key: the goal's registry and id plus the warning id. */
  key: z.string().check(z.minLength(1)),
  goal_id: z.string(),
  goal_name: z.string(),
  severity: z.enum(['error', 'warning', 'info']),
  kind: z.string(),
  title: z.string(),
  message: z.string(),
  compared: z.array(comparedTextSchema),
  actions: z.array(cardActionSchema),
});
export type WarningCard = z.infer<typeof warningCardSchema>;

export const hostToWarningsSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('render'),
    cards: z.array(warningCardSchema),
    goal_count: z.int(),
    /** The display language's l10n bundle (absent in English): the script's own texts. */
    l10n: z.optional(l10nBundleSchema),
  }),
  z.object({ type: z.literal('result'), key: z.string(), ok: z.boolean(), message: z.string() }),
]);
export type HostToWarnings = z.infer<typeof hostToWarningsSchema>;

export const warningsToHostSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ready') }),
  z.strictObject({
    type: z.literal('act'),
    key: z.string().check(z.minLength(1), z.maxLength(2000)),
    action: cardActionKindSchema,
  }),
]);
export type WarningsToHost = z.infer<typeof warningsToHostSchema>;

/** What the webview keeps across reloads (`setState`). */
export const warningsStateSchema = z.object({
  cards: z._default(z.array(warningCardSchema), []),
  focused: z._default(z.nullable(z.string()), null),
});
export type WarningsState = z.infer<typeof warningsStateSchema>;
