import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  generateWorkspace,
  GENERATOR_VERSION,
  goalIdAt,
  readWorkspaceManifest,
  type GeneratedWorkspace,
  type WorkspaceShape,
} from '../workspace/generate';

export const BENCH_SEED = 1;

export function workspaceDirName(shape: WorkspaceShape, seed: number): string {
  return `g${shape.goals}-t${shape.todos}-r${shape.runs}-s${seed}`;
}

/** A generated workspace read back from its manifest, or null when it is missing or from another generator version. */
export function loadWorkspace(root: string): GeneratedWorkspace | null {
  const manifest = readWorkspaceManifest(root);
  if (manifest === null || manifest.generatorVersion !== GENERATOR_VERSION || manifest.root !== root) return null;
  return { ...manifest, goalIds: Array.from({ length: manifest.shape.goals }, (_, index) => goalIdAt(index)) };
}

/**
 * The cached workspace of this shape under `cacheDir`, generated when missing or stale. Benchmarks
 * treat it as read-only; one that writes restores what it changed (see preserveGoal).
 */
export function ensureWorkspace(
  cacheDir: string,
  shape: WorkspaceShape,
  seed: number,
  log: (line: string) => void,
): GeneratedWorkspace {
  const root = path.join(cacheDir, workspaceDirName(shape, seed));
  const cached = loadWorkspace(root);
  if (cached !== null) return cached;
  fs.rmSync(root, { recursive: true, force: true });
  const started = performance.now();
  const generated = generateWorkspace({ ...shape, seed, out: root });
  log(
    `generated ${path.basename(root)} (${generated.counts.runRows.toLocaleString('en-US')} run rows, ${generated.counts.artifactFiles.toLocaleString('en-US')} artifacts) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return generated;
}
