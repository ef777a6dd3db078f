// Writes `contributes.commands` of package.json from the command catalog (src/core/commands/catalog.ts).
// `npm run sync:manifest` after adding a catalog entry; test/unit/catalog.test.ts fails until you do.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { manifestCommands } from '../src/core/commands/manifest';

const path = join(__dirname, '..', 'package.json');
const manifest = JSON.parse(readFileSync(path, 'utf8')) as { contributes: Record<string, unknown> };
manifest.contributes['commands'] = manifestCommands();
writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`package.json: ${manifestCommands().length} commands`);
