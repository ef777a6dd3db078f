import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  CATALOG_LITERAL,
  COMMANDS,
  cliCommands,
  paletteCommandId,
  paletteCommands,
} from '../../src/core/commands/catalog';
import { manifestChatParticipants, manifestCommands, manifestMenus } from '../../src/core/commands/manifest';
import { buildProgram } from '../../src/cli/program';
import { fixedClock } from '../../src/core/clock';
import type { Command } from 'commander';
import { EXTENSION_ID, SETTINGS, VIEW_CONTAINER_ID, VIEW_IDS } from '../../src/core/commands/ids';
import { LOOPX_EXTENSION_ID } from '../../src/api/types';

const root = join(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  contributes: {
    commands: { command: string }[];
    menus: Record<string, { command: string }[]>;
    chatParticipants: unknown;
    viewsWelcome: { contents: string }[];
  };
};

function cliWords(program: Command): string[] {
  const words: string[] = [];
  for (const command of program.commands) {
    if (command.commands.length > 0) {
      for (const sub of command.commands) words.push(`${command.name()} ${sub.name()}`);
      // A group that is also a command of its own (`loopx mcp` beside `loopx mcp install`) has an action.
      if ((command as unknown as { _actionHandler?: unknown })._actionHandler) words.push(command.name());
    } else {
      words.push(command.name());
    }
  }
  return words.sort();
}

describe('command catalog', () => {
  it('parses to exactly what is written, so a bundle may use the literal without parsing it', () => {
    // Bundles skip the parse (LOOPX_SHIPPED_BUILD); under tsx COMMANDS is the parsed catalog.
    assert.notEqual(COMMANDS, CATALOG_LITERAL);
    assert.deepStrictEqual(COMMANDS, CATALOG_LITERAL);
  });

  it('has unique keys, CLI words, palette titles and slash forms', () => {
    for (const field of ['key', 'cli', 'title', 'slash'] as const) {
      const values = COMMANDS.map((c) => c[field]).filter((v) => v !== null);
      assert.equal(new Set(values).size, values.length, `duplicate ${field}`);
    }
  });

  it('matches package.json contributes.commands exactly (run `npm run sync:manifest` to fix)', () => {
    assert.deepEqual(manifest.contributes.commands, manifestCommands());
  });

  it('generates contributes.menus from the placements in the catalog (run `npm run sync:manifest` to fix)', () => {
    assert.deepEqual(manifest.contributes.menus, manifestMenus());
    const goalItems = manifestMenus()['view/item/context'].filter((item) => item.when.includes('/^goal\\./'));
    assert.ok(goalItems.some((item) => item.command === 'loopx.turnLoop' && item.when.endsWith('isWorkspaceTrusted')));
  });

  it('hides the node-only commands from the command palette (run there without their tree node they can only fail)', () => {
    const hidden = (manifest.contributes.menus['commandPalette'] ?? []) as { command: string; when: string }[];
    assert.ok(
      hidden.some((item) => item.command === 'loopx.openRunEvidence' && item.when === 'false'),
      'Open Run Evidence is hidden from the palette',
    );
    // Generated from the catalog: exactly the node-only commands, so a new one is hidden without a hand edit.
    assert.deepEqual(
      hidden.map((item) => item.command),
      paletteCommands()
        .filter((spec) => spec.nodeOnly === true)
        .map(paletteCommandId),
    );
    for (const spec of COMMANDS.filter((c) => c.nodeOnly === true)) {
      assert.ok((spec.menus ?? []).length > 0, `${spec.key} is node-only, so it needs a tree menu to be reachable`);
      assert.equal(spec.cli, null, `${spec.key} is node-only, so it has no CLI form`);
    }
  });

  it('generates the @loopx chat participant and its slash commands from the catalog (run `npm run sync:manifest` to fix)', () => {
    assert.deepEqual(manifest.contributes.chatParticipants, manifestChatParticipants());
    const names = manifestChatParticipants()[0]?.commands.map((c) => c.name);
    assert.deepEqual(names, ['goal', 'status', 'summary', 'gates', 'todos', 'risks', 'next', 'run']);
    const chat = COMMANDS.map((c) => c.chat).filter((v) => v !== undefined);
    assert.equal(new Set(chat).size, chat.length, 'duplicate chat command');
  });

  it('matches the CLI program command for command', async () => {
    const program = await buildProgram(
      { cwd: root, env: {}, clock: fixedClock('2026-01-01T00:00:00Z'), stdout: () => {}, stderr: () => {} },
      () => {},
    );
    assert.deepEqual(
      cliWords(program),
      cliCommands()
        .map((c) => c.cli ?? '')
        .sort(),
    );
  });

  it('is what the extension registers: every palette command is registered through the catalog', () => {
    // The extension registers commands only through registerPaletteCommands(catalog); a literal
    // registerCommand('loopx.…') elsewhere would add a command the catalog does not know.
    const sources = readdirSync(join(root, 'src'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.ts'));
    const literal = sources.filter((f) =>
      /registerCommand\(\s*['"`]loopx\./.test(readFileSync(join(root, 'src', f), 'utf8')),
    );
    assert.deepEqual(literal, []);
    assert.ok(paletteCommands().length > 0);
  });

  it('only references known commands from menus and welcome views', () => {
    const known = new Set(paletteCommands().map(paletteCommandId));
    for (const [menu, entries] of Object.entries(manifest.contributes.menus)) {
      for (const entry of entries) assert.ok(known.has(entry.command), `${menu} references unknown ${entry.command}`);
    }
    const nls = JSON.parse(readFileSync(join(root, 'package.nls.json'), 'utf8')) as Record<string, string>;
    for (const welcome of manifest.contributes.viewsWelcome) {
      const contents = nls[welcome.contents.replace(/^%|%$/g, '')] ?? welcome.contents;
      assert.ok(contents.length > 0 && !contents.startsWith('%'), `welcome content ${welcome.contents} is defined`);
      for (const match of contents.matchAll(/command:(loopx\.[A-Za-z]+)/g)) {
        assert.ok(known.has(match[1] ?? ''), `welcome view references unknown ${match[1]}`);
      }
    }
  });

  it('shares its ids with the manifest: extension, views and settings', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      name: string;
      publisher: string;
      contributes: {
        viewsContainers: { activitybar: { id: string }[] };
        views: Record<string, { id: string }[]>;
        configuration: { properties: Record<string, unknown> };
      };
    };
    assert.equal(EXTENSION_ID, `${pkg.publisher}.${pkg.name}`);
    assert.equal(LOOPX_EXTENSION_ID, EXTENSION_ID);
    assert.deepEqual(
      pkg.contributes.viewsContainers.activitybar.map((c) => c.id),
      [VIEW_CONTAINER_ID],
    );
    assert.deepEqual(
      (pkg.contributes.views[VIEW_CONTAINER_ID] ?? []).map((v) => v.id),
      Object.values(VIEW_IDS),
    );
    const settingKeys = Object.entries(SETTINGS)
      .filter(([name]) => name !== 'section')
      .map(([, key]) => `${SETTINGS.section}.${key}`)
      .sort();
    assert.deepEqual(Object.keys(pkg.contributes.configuration.properties).sort(), settingKeys);
  });
});
