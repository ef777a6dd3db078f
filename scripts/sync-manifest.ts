// Writes `contributes.commands`, `contributes.menus` and `contributes.chatParticipants` of package.json from the
// command catalog (src/core/commands/catalog.ts), `contributes.languageModelTools` from src/lm/toolSpecs.ts, and the catalog's English strings in package.nls.json (package.json
// names them as `%key%`). `npm run sync:manifest` after adding a catalog entry; test/unit/catalog.test.ts fails until
// you do, and test/unit/l10n.test.ts until package.nls.zh-cn.json translates the new strings.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  isCatalogNlsKey,
  manifestChatParticipants,
  manifestCommands,
  manifestMenus,
  manifestNls,
} from '../src/core/commands/manifest';
import { languageModelToolsNls, manifestLanguageModelTools } from '../src/lm/toolSpecs';

const root = join(__dirname, '..');
const path = join(root, 'package.json');
const manifest = JSON.parse(readFileSync(path, 'utf8')) as { contributes: Record<string, unknown> };
manifest.contributes['commands'] = manifestCommands();
manifest.contributes['menus'] = manifestMenus();
manifest.contributes['chatParticipants'] = manifestChatParticipants();
manifest.contributes['languageModelTools'] = manifestLanguageModelTools();
writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);

// package.nls.json: the hand-written strings (views, settings, walkthrough) as they are, the catalog's replaced.
const nlsPath = join(root, 'package.nls.json');
const nls = JSON.parse(readFileSync(nlsPath, 'utf8')) as Record<string, string>;
const handWritten = Object.fromEntries(
  Object.entries(nls).filter(([key]) => !isCatalogNlsKey(key) && !key.startsWith('lmTool.')),
);
writeFileSync(
  nlsPath,
  `${JSON.stringify({ ...handWritten, ...manifestNls(), ...languageModelToolsNls() }, null, 2)}\n`,
);

const menuItems = Object.values(manifestMenus()).flat().length;
console.log(`package.json: ${manifestCommands().length} commands, ${menuItems} menu items; package.nls.json`);
