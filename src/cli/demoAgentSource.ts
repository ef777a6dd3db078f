import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

/** How this CLI starts the built-in demo agent when it runs from source: its entry script under the tsx loader. */
export function sourceDemoAgentArgv(): string[] | undefined {
  const source = path.resolve(__dirname, '..', 'core', 'executors', 'demoAgentMain.ts');
  if (!fs.existsSync(source)) return undefined;
  try {
    return [process.execPath, '--import', pathToFileURL(require.resolve('tsx')).href, source];
  } catch {
    return undefined;
  }
}
