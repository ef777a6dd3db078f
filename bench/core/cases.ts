import { SIZE_NAMES, SIZES, type SizeName, type WorkspaceShape } from '../workspace/generate';
import type { BenchCase } from './types';

/** Timed runs per standard size: fewer for the big ones, so a full run stays within minutes. */
export const DEFAULT_RUNS: Readonly<Record<SizeName, number>> = { S: 15, M: 9, L: 5, XL: 5 };

/** One case per standard size (S, M, L, XL), each after one warm-up run. */
export function scalingCases(runs: Partial<Record<SizeName, number>> = {}): BenchCase[] {
  return SIZE_NAMES.map((size) => ({
    label: size,
    size,
    shape: SIZES[size],
    runs: runs[size] ?? DEFAULT_RUNS[size],
    warmup: 1,
  }));
}

export function fixedCase(label: string, shape: WorkspaceShape | null, runs: number, warmup = 1): BenchCase {
  return { label, shape, runs, warmup };
}

/** A registry of 1,000 goals (the registry target), each with a small state file and no runs. */
export const THOUSAND_GOALS: WorkspaceShape = { goals: 1000, todos: 5, runs: 0 };
/** One goal with a 500-todo state file (the parse target). */
export const FIVE_HUNDRED_TODOS: WorkspaceShape = { goals: 1, todos: 500, runs: 0 };
/** One goal with 500 todos and 10,000 run rows (the in-process quota target). */
export const BIG_GOAL: WorkspaceShape = { goals: 1, todos: 500, runs: 10_000 };
