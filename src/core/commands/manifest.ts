import { VIEW_IDS } from './ids';
import { chatCommands, paletteCommandId, paletteCommands, type MenuTarget } from './catalog';

export interface ManifestCommand {
  command: string;
  /** A `%key%` of package.nls.json: VS Code shows the string of the display language. */
  title: string;
  category: string;
  icon?: string;
}

/** `%key%`: how package.json names a string of package.nls.json (and package.nls.<language>.json). */
const nlsRef = (key: string): string => `%${key}%`;

/** The package.nls.json key of a palette command's title. */
export const commandTitleKey = (commandId: string): string => `${commandId}.title`;
const COMMAND_CATEGORY_KEY = 'command.category';
const CHAT_PARTICIPANT_DESCRIPTION_KEY = 'chat.participant.description';
const chatCommandKey = (name: string): string => `chat.command.${name}.description`;

/** The `contributes.commands` entries the catalog implies, in catalog order. */
export function manifestCommands(): ManifestCommand[] {
  return paletteCommands().map((spec) => ({
    command: paletteCommandId(spec),
    title: nlsRef(commandTitleKey(paletteCommandId(spec))),
    category: nlsRef(COMMAND_CATEGORY_KEY),
    ...(spec.icon ? { icon: `$(${spec.icon})` } : {}),
  }));
}

export interface ManifestMenuItem {
  command: string;
  when: string;
  group: string;
}

/** The view and `contextValue` prefix of each menu target; tree items set `contextValue` to `<kind>.<state>`. */
const TARGETS: Record<MenuTarget, { menu: 'view/title' | 'view/item/context'; when: string }> = {
  goalsTitle: { menu: 'view/title', when: `view == ${VIEW_IDS.goals}` },
  agentsTitle: { menu: 'view/title', when: `view == ${VIEW_IDS.agents}` },
  viewsTitle: { menu: 'view/title', when: `view == ${VIEW_IDS.goals} || view == ${VIEW_IDS.agents}` },
  goal: { menu: 'view/item/context', when: `view == ${VIEW_IDS.goals} && viewItem =~ /^goal\\./` },
  todo: { menu: 'view/item/context', when: `view == ${VIEW_IDS.goals} && viewItem =~ /^todo\\./` },
  gate: {
    menu: 'view/item/context',
    when: `(view == ${VIEW_IDS.goals} || view == ${VIEW_IDS.gateInbox}) && viewItem =~ /^gate\\./`,
  },
  warning: { menu: 'view/item/context', when: `view == ${VIEW_IDS.goals} && viewItem =~ /^warning\\./` },
  run: { menu: 'view/item/context', when: `view == ${VIEW_IDS.goals} && viewItem =~ /^run\\./` },
  agent: { menu: 'view/item/context', when: `view == ${VIEW_IDS.agents} && viewItem =~ /^agent/` },
  reviewTitle: { menu: 'view/title', when: `view == ${VIEW_IDS.review}` },
  reviewTurn: { menu: 'view/item/context', when: `view == ${VIEW_IDS.review} && viewItem =~ /^reviewTurn\\./` },
  reviewFile: { menu: 'view/item/context', when: `view == ${VIEW_IDS.review} && viewItem =~ /^reviewFile\\./` },
};

export interface ManifestPaletteItem {
  command: string;
  when: string;
}

export interface ManifestMenus {
  'view/title': ManifestMenuItem[];
  'view/item/context': ManifestMenuItem[];
  commandPalette: ManifestPaletteItem[];
}

/**
 * `contributes.menus`: for the views, the catalog's placements; for the command palette, the
 * node-only commands hidden (`when: false`: run there without their tree node they could only fail).
 * In catalog order.
 */
export function manifestMenus(): ManifestMenus {
  const menus: Record<'view/title' | 'view/item/context', ManifestMenuItem[]> = {
    'view/title': [],
    'view/item/context': [],
  };
  for (const spec of paletteCommands()) {
    for (const placement of spec.menus ?? []) {
      const target = TARGETS[placement.on];
      const base =
        placement.state === undefined
          ? target.when
          : target.when.replace(/\/\^([a-z]+)\\\.\/$/, (_, kind: string) => `/^${kind}\\.${placement.state}/`);
      const when = placement.trustedOnly ? `${base} && isWorkspaceTrusted` : base;
      menus[target.menu].push({ command: paletteCommandId(spec), when, group: placement.group });
    }
  }
  const commandPalette = paletteCommands()
    .filter((spec) => spec.nodeOnly === true)
    .map((spec): ManifestPaletteItem => ({ command: paletteCommandId(spec), when: 'false' }));
  return { ...menus, commandPalette };
}

/** The id of the `@loopx` chat participant. */
export const CHAT_PARTICIPANT_ID = 'loopx.chat';

/** What each chat slash command says in the chat view's completion list. */
const CHAT_DESCRIPTIONS: Readonly<Record<string, string>> = {
  goal: 'Draft a goal from a sentence: objective, first todos and gates, for you to review',
  status: 'Each goal: the Next Action, open gates, todos and latest runs',
  summary: 'Progress across goals: who each goal waits on, runs, quota',
  gates: 'Open user gates across goals and what each one blocks',
  todos: 'Todos across goals: runnable, blocked, deferred',
  risks: 'Stale runs, warnings, failing validations, quota near its limit',
  next: 'What should run next, for each goal and agent, and why',
  run: 'Run one turn of a goal (asks before it runs)',
};

export interface ManifestChatParticipant {
  id: string;
  name: string;
  fullName: string;
  description: string;
  isSticky: boolean;
  commands: { name: string; description: string }[];
}

/** `contributes.chatParticipants`: `@loopx` with one slash command per catalog entry that names one. */
export function manifestChatParticipants(): ManifestChatParticipant[] {
  return [
    {
      id: CHAT_PARTICIPANT_ID,
      name: 'loopx',
      fullName: 'LoopX',
      description: nlsRef(CHAT_PARTICIPANT_DESCRIPTION_KEY),
      isSticky: true,
      commands: chatCommands().map((spec) => ({
        name: spec.chat,
        description: nlsRef(chatCommandKey(spec.chat)),
      })),
    },
  ];
}

const CHAT_PARTICIPANT_DESCRIPTION = 'Ask about your goals, gates and todos, or run a turn';

/**
 * The English strings of package.nls.json that the catalog owns (command titles, their category, the chat
 * participant and its slash commands), by key. `npm run sync:manifest` writes them; the rest of package.nls.json
 * (views, welcome content, settings, walkthrough) is written by hand.
 */
export function manifestNls(): Record<string, string> {
  const strings: Record<string, string> = { [COMMAND_CATEGORY_KEY]: 'LoopX' };
  for (const spec of paletteCommands()) strings[commandTitleKey(paletteCommandId(spec))] = spec.title ?? spec.key;
  strings[CHAT_PARTICIPANT_DESCRIPTION_KEY] = CHAT_PARTICIPANT_DESCRIPTION;
  for (const spec of chatCommands()) strings[chatCommandKey(spec.chat)] = CHAT_DESCRIPTIONS[spec.chat] ?? spec.intent;
  return strings;
}

/** Whether a package.nls.json key is one the catalog owns (so sync:manifest may drop it when its command goes). */
export function isCatalogNlsKey(key: string): boolean {
  return (
    key === COMMAND_CATEGORY_KEY ||
    key === CHAT_PARTICIPANT_DESCRIPTION_KEY ||
    /^loopx\.[A-Za-z]+\.title$/.test(key) ||
    /^chat\.command\.[A-Za-z]+\.description$/.test(key)
  );
}
