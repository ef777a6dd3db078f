import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultStateFile } from '../../src/core/registry/bootstrap';
import { goalRuntimeDir } from '../../src/core/runtime/layout';
import type { GeneratedWorkspace } from '../workspace/generate';

/**
 * Snapshot of what a writing benchmark may change in one goal of a shared workspace: the registry,
 * the state file, and the goal's runtime folder (its file list and the run index). `restore`
 * puts them back, so the cached workspace stays as generated.
 */
export function preserveGoal(workspace: GeneratedWorkspace, goalId: string): { restore(): void } {
  const registryText = fs.readFileSync(workspace.registryPath);
  const stateFile = path.join(workspace.root, defaultStateFile(goalId));
  const stateText = fs.readFileSync(stateFile);
  const runtimeDir = goalRuntimeDir(workspace.runtimeRoot, goalId);
  const listFiles = (): string[] =>
    fs.existsSync(runtimeDir) ? fs.readdirSync(runtimeDir, { recursive: true }).map(String) : [];
  const before = new Set(listFiles());
  const indexFile = path.join(runtimeDir, 'runs', 'index.jsonl');
  const indexText = fs.existsSync(indexFile) ? fs.readFileSync(indexFile) : null;
  return {
    restore: () => {
      for (const file of listFiles().reverse()) {
        if (!before.has(file)) fs.rmSync(path.join(runtimeDir, file), { recursive: true, force: true });
      }
      if (indexText !== null) fs.writeFileSync(indexFile, indexText);
      fs.writeFileSync(stateFile, stateText);
      fs.writeFileSync(workspace.registryPath, registryText);
    },
  };
}
