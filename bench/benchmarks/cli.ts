import { fixedCase, scalingCases } from '../core/cases';
import { requireWorkspace, runIndexFiles, stateFiles } from '../core/files';
import { cliRun, expectOkJson, rawReadProcess, runNode } from '../core/processes';
import type { RunnableBenchmark } from '../core/types';

/** Whole-process benchmarks of the `loopx` CLI (out/cli.js, built by `npm run build`). */

export const cliStartup: RunnableBenchmark = {
  kind: 'process',
  name: 'cli-startup',
  title: '`loopx --version` (CLI start-up floor)',
  description: 'node out/cli.js --version: load the bundle, build the command tree, print, exit',
  baselineDescription: 'a node process that reads nothing (node start-up alone)',
  cases: [fixedCase('no workspace', null, 15)],
  unitLabel: 'processes',
  units: () => 1,
  prepare: async (ctx) => ({
    run: async () => {
      const { stdout, childPeakRssMb } = runNode(ctx, [ctx.cliPath, '--version']);
      if (!/\d+\.\d+\.\d+/.test(stdout)) throw new Error(`unexpected --version output: ${stdout}`);
      return { childPeakRssMb };
    },
  }),
  prepareBaseline: async (ctx) => rawReadProcess(ctx, []),
};

export const cliRegistry: RunnableBenchmark = {
  kind: 'process',
  name: 'cli-registry',
  title: '`loopx registry --format json` (whole process)',
  description:
    'node out/cli.js --registry <registry> registry --format json: validate the registry and print every goal row',
  baselineDescription: 'a node process that reads registry.json and JSON.parses it',
  cases: scalingCases({ S: 10, M: 9, L: 7, XL: 7 }),
  unitLabel: 'goals',
  units: (shape) => shape?.goals ?? 0,
  prepare: async (ctx) =>
    cliRun(ctx, ['registry', '--format', 'json'], {
      check: (stdout) => {
        expectOkJson(stdout);
        const goals = (JSON.parse(stdout) as { goal_count?: number }).goal_count;
        if (goals !== requireWorkspace(ctx.workspace).goalIds.length)
          throw new Error(`registry printed ${String(goals)} goals`);
      },
    }),
  prepareBaseline: async (ctx) => rawReadProcess(ctx, [requireWorkspace(ctx.workspace).registryPath]),
};

export const cliTodoList: RunnableBenchmark = {
  kind: 'process',
  name: 'cli-todo-list',
  title: '`loopx todo list --goal-id <one goal> --format json` (whole process)',
  description:
    'node out/cli.js todo list for the first goal: read the registry, find the goal, parse its state file, list todos and gates',
  baselineDescription: "a node process that reads registry.json (JSON.parse) and the goal's state file",
  cases: scalingCases({ S: 10, M: 9, L: 7, XL: 7 }),
  unitLabel: 'goals in the registry',
  units: (shape) => shape?.goals ?? 0,
  prepare: async (ctx) =>
    cliRun(ctx, ['todo', 'list', '--goal-id', requireWorkspace(ctx.workspace).goalIds[0] ?? '', '--format', 'json']),
  prepareBaseline: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    return rawReadProcess(ctx, [workspace.registryPath, ...stateFiles(workspace).slice(0, 1)]);
  },
};

/** Every file `status` over the whole workspace reads at least: the registry, each state file, each run index. */
export function statusFiles(ctx: { workspace: Parameters<typeof requireWorkspace>[0] }): string[] {
  const workspace = requireWorkspace(ctx.workspace);
  return [workspace.registryPath, ...stateFiles(workspace), ...runIndexFiles(workspace)];
}
