import * as fs from 'node:fs';
import { resolveRuntimeRoot, resolveStateFile } from '../../src/core/registry/locate';
import { readRegistry, registryGoals } from '../../src/core/registry/read';
import { scalingCases } from '../core/cases';
import { rawRead, requireWorkspace } from '../core/files';
import type { RunnableBenchmark } from '../core/types';

export const registryLoad: RunnableBenchmark = {
  kind: 'in-process',
  name: 'registry-load',
  title: 'Load the registry and resolve paths',
  description: 'readRegistry, registryGoals, then resolveStateFile for every goal and resolveRuntimeRoot',
  baselineDescription: 'read registry.json and JSON.parse it',
  cases: scalingCases(),
  unitLabel: 'goals',
  units: (shape) => shape?.goals ?? 0,
  prepare: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    return {
      run: async () => {
        const registry = await readRegistry(workspace.registryPath);
        const goals = registryGoals(registry);
        resolveRuntimeRoot({ registryPath: workspace.registryPath, registry, homeDir: ctx.homeDir });
        let resolved = 0;
        for (const goal of goals) if (resolveStateFile(goal, ctx.homeDir) !== null) resolved++;
        if (resolved !== workspace.goalIds.length)
          throw new Error(`resolved ${resolved} state files, expected ${workspace.goalIds.length}`);
      },
    };
  },
  prepareBaseline: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    if (!fs.existsSync(workspace.registryPath)) throw new Error(`missing ${workspace.registryPath}`);
    return {
      run: async () => {
        await rawRead([workspace.registryPath]);
      },
    };
  },
};
