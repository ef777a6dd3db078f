import { validateRegistryFile } from '../../src/core/registry/validate';
import { fixedCase, scalingCases, THOUSAND_GOALS } from '../core/cases';
import { rawRead, requireWorkspace } from '../core/files';
import type { RunnableBenchmark } from '../core/types';

const THOUSAND = '1,000 goals';

export const registryValidate: RunnableBenchmark = {
  kind: 'in-process',
  name: 'registry-validate',
  title: 'Validate the registry (read + validate + resolve paths)',
  description:
    'validateRegistryFile: read, check every entry, resolve repo and state file, stat them, build the goal rows',
  baselineDescription: 'read registry.json and JSON.parse it',
  cases: [...scalingCases(), fixedCase(THOUSAND, THOUSAND_GOALS, 15)],
  unitLabel: 'goals',
  units: (shape) => shape?.goals ?? 0,
  targets: [
    {
      caseLabel: THOUSAND,
      metric: 'median_ms',
      limit: 50,
      text: 'registry of 1,000 goals read + validated + paths resolved well under 50 ms',
    },
  ],
  prepare: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    return {
      run: async () => {
        const result = await validateRegistryFile(workspace.registryPath, { homeDir: ctx.homeDir });
        if (!result.ok || !('goal_count' in result) || result.goal_count !== workspace.goalIds.length)
          throw new Error(`validation failed: ${JSON.stringify(result).slice(0, 300)}`);
      },
    };
  },
  prepareBaseline: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    return {
      run: async () => {
        await rawRead([workspace.registryPath]);
      },
    };
  },
};
