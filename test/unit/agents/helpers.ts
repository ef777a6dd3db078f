import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { resolveGoalToWrite, type ResolvedGoal } from '../../../src/core/ops/goalHandle';
import { tempDir } from '../../support/tempDir';
export { tempDir } from '../../support/tempDir';

/** Writes `<project>/.loopx/registry.json` and returns its path. */
export function writeRegistry(project: string, registry: unknown): string {
  const file = path.join(project, '.loopx', 'registry.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(registry, null, 2)}\n`);
  return file;
}

export function readJson(file: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
}

/** A project with one goal `g` whose state file exists, plus extra goal fields. */
export function connectedProject(goal: Record<string, unknown> = {}): { project: string; registry: string } {
  const project = tempDir();
  const stateFile = '.codex/goals/g/ACTIVE_GOAL_STATE.md';
  fs.mkdirSync(path.join(project, path.dirname(stateFile)), { recursive: true });
  fs.writeFileSync(path.join(project, stateFile), '# g\n');
  const registry = writeRegistry(project, {
    schema_version: '0.1',
    custom_top_level: { keep: true },
    goals: [
      {
        id: 'g',
        domain: 'demo',
        status: 'active',
        repo: project,
        state_file: stateFile,
        adapter: { kind: 'generic_project_goal_v0' },
        x_unknown: [1, 2],
        ...goal,
      },
    ],
  });
  return { project, registry };
}

export function goalOf(registryFile: string, goalId = 'g'): Record<string, unknown> {
  const goals = readJson(registryFile)['goals'] as Record<string, unknown>[];
  const goal = goals.find((entry) => entry['id'] === goalId);
  if (!goal) throw new Error(`no goal ${goalId}`);
  return goal;
}

/** The goal as the registry writers' operations resolve it (`resolveGoalToWrite`), for calling the writers directly. */
export function goalRefOf(registryFile: string, goalId = 'g'): Promise<ResolvedGoal> {
  const project = path.dirname(path.dirname(registryFile));
  return resolveGoalToWrite(
    { cwd: project, env: {}, clock: fixedClock('2026-01-15T10:00:00Z'), homeDir: project, registryPath: registryFile },
    goalId,
  );
}
