import type { Stats } from './types';

export function summarize(samplesMs: readonly number[]): Stats {
  if (samplesMs.length === 0) throw new Error('no samples to summarize');
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return {
    median_ms: round(median),
    min_ms: round(sorted[0] as number),
    max_ms: round(sorted[sorted.length - 1] as number),
    samples_ms: samplesMs.map(round),
  };
}

export function round(value: number, decimals = 3): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

export type GrowthLabel = 'linear' | 'sublinear' | 'superlinear' | 'flat';

/**
 * How a cost grew against how the data grew, as the exponent k in cost ∝ size^k:
 * k < 0.8 sublinear, 0.8–1.25 linear, above superlinear. When the data did not grow
 * (size factor < 1.5) the step says nothing about scaling and is labelled flat.
 */
export function growthLabel(sizeFactor: number, costFactor: number): { exponent: number | null; label: GrowthLabel } {
  if (sizeFactor < 1.5 || costFactor <= 0) return { exponent: null, label: 'flat' };
  const exponent = Math.log(costFactor) / Math.log(sizeFactor);
  const label: GrowthLabel = exponent < 0.8 ? 'sublinear' : exponent <= 1.25 ? 'linear' : 'superlinear';
  return { exponent: round(exponent, 2), label };
}
