// Writes `contributes.commands` and `contributes.menus` of package.json from the command catalog (src/core/commands/catalog.ts).
// `npm run sync:manifest` after adding a catalog entry; test/unit/catalog.test.ts fails until you do.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { manifestChatParticipants, manifestCommands, manifestMenus } from '../src/core/commands/manifest';

const path = join(__dirname, '..', 'package.json');
const manifest = JSON.parse(readFileSync(path, 'utf8')) as { contributes: Record<string, unknown> };
manifest.contributes['commands'] = manifestCommands();
manifest.contributes['menus'] = manifestMenus();
manifest.contributes['chatParticipants'] = manifestChatParticipants();
writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
const menuItems = Object.values(manifestMenus()).flat().length;
console.log(`package.json: ${manifestCommands().length} commands, ${menuItems} menu items`);
