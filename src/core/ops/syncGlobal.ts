import * as path from 'node:path';
import { z } from 'zod';
import { syncGlobalRegistry, type GlobalSyncResult } from '../globalRegistry/sync';
import { GLOBAL_REGISTRY_FILE_NAME, locateRegistry, resolveRuntimeRoot } from '../registry/locate';
import { resolveRegistry } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `sync-global`: projects this project's goals into `<runtime root>/registry.global.json`, under
 * the global registry's lock; `dryRun` shows what would change without locking or writing.
 */

export const syncGlobal = defineOperation({
  key: 'syncGlobal',
  args: z.strictObject({
    goalId: z
      .array(z.string())
      .default([])
      .meta({ placeholder: 'id' })
      .describe('sync only these goals; default every goal of the registry'),
    allowRouteReplacement: z
      .boolean()
      .default(false)
      .describe('let a goal id owned by another project be replaced (the global registry is backed up first)'),
    dryRun: z.boolean().default(false).describe('show what would change without locking or writing'),
  }),
  run: async (args, env): Promise<GlobalSyncResult> => {
    // The project's own registry only: falling back to the global one would sync it into itself.
    const located = locateRegistry({
      flag: env.registryPath,
      env: env.env,
      cwd: env.cwd,
      homeDir: env.homeDir,
      globalFallback: false,
    });
    // Read through the operations' registry resolver; a missing one reads as {} (the sync then says it is missing).
    const registry = located.exists ? (await resolveRegistry({ ...env, registryPath: located.path })).document : {};
    const runtimeRoot = resolveRuntimeRoot({
      registryPath: located.path,
      registry,
      override: env.runtimeRootOverride,
      homeDir: env.homeDir,
      cwd: env.cwd,
    });
    return syncGlobalRegistry({
      projectRegistryPath: located.path,
      globalRegistryPath: path.join(runtimeRoot, GLOBAL_REGISTRY_FILE_NAME),
      goalIds: args.goalId,
      allowRouteReplacement: args.allowRouteReplacement,
      dryRun: args.dryRun,
      clock: env.clock,
      runtimeRoot,
      lock: { env: env.env },
    });
  },
});
