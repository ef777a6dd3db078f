import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
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

/**
 * A multi-root workspace of two demo copies with different registries and runtime roots: `alpha`
 * keeps the demo's `.loopx/registry.json` (runtime `.loopx/runtime`); `beta` has none there, its
 * folder setting `loopx.registryPath` names `config/registry.json` (relative to beta), whose
 * runtime root is `beta/runtime` and whose goal is shown as "Tidy the beta notes". Returns the
 * `.code-workspace` file.
 */
export function materializeTwoFolderWorkspace(destination: string): string {
  const target = resolve(destination);
  mkdirSync(target, { recursive: true });
  const alpha = materializeDemoWorkspace(join(target, 'alpha'));
  const beta = materializeDemoWorkspace(join(target, 'beta'));
  const demoRegistry = join(beta, '.loopx', 'registry.json');
  const registry = JSON.parse(readFileSync(demoRegistry, 'utf8')) as {
    goals: Record<string, unknown>[];
    [key: string]: unknown;
  };
  mkdirSync(join(beta, 'config'), { recursive: true });
  writeFileSync(
    join(beta, 'config', 'registry.json'),
    JSON.stringify(
      {
        ...registry,
        common_runtime_root: join(beta, 'runtime'),
        goals: registry.goals.map((goal) => ({ ...goal, display_name: 'Tidy the beta notes' })),
      },
      null,
      2,
    ),
  );
  renameSync(join(beta, '.loopx', 'runtime'), join(beta, 'runtime'));
  rmSync(join(beta, '.loopx'), { recursive: true, force: true });
  mkdirSync(join(beta, '.vscode'), { recursive: true });
  writeFileSync(
    join(beta, '.vscode', 'settings.json'),
    JSON.stringify({ 'loopx.registryPath': 'config/registry.json' }, null, 2),
  );
  const file = join(target, 'two-folders.code-workspace');
  writeFileSync(file, JSON.stringify({ folders: [{ path: alpha }, { path: beta }], settings: {} }, null, 2));
  return file;
}
