import { cpSync, existsSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(__dirname, '..', '..');
export const DEMO_SOURCE = join(REPO_ROOT, 'examples', 'demo-workspace');

/** Sets every file under `dir` (but `except`) as last modified at `at`: nothing in it is racy for a stamp cache. */
export function ageFiles(dir: string, at: Date, except?: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = join(dir, entry.name);
    if (entry.isDirectory()) ageFiles(file, at, except);
    else if (file !== except) utimesSync(file, at, at);
  }
}

/**
 * Copies the committed demo workspace to `destination` and makes it real: the registry's `repo`
 * fields become the absolute path of the copy, as LoopX writes them.
 */
export function materializeDemoWorkspace(destination: string, options: { replace?: boolean } = {}): string {
  const target = resolve(destination);
  if (existsSync(target)) {
    if (!options.replace) return target;
    rmSync(target, { recursive: true, force: true });
  }
  cpSync(DEMO_SOURCE, target, { recursive: true });
  const registryPath = join(target, '.loopx', 'registry.json');
  writeFileSync(registryPath, readFileSync(registryPath, 'utf8').split('__WORKSPACE__').join(target));
  return target;
}
