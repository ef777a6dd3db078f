import type { GeneratedWorkspace, SizeName, WorkspaceShape } from '../workspace/generate';

/** One measured configuration of a benchmark: a workspace shape and how often to run it. */
export interface BenchCase {
  /** `S`, `M`, `L`, `XL`, or a descriptive label for a fixed shape ("1,000 goals"). */
  label: string;
  /** Set for the standard sizes; only these cases enter the scaling table. */
  size?: SizeName;
  /** The generated workspace it reads, or null when the benchmark makes its own files. */
  shape: WorkspaceShape | null;
  runs: number;
  warmup: number;
}

export interface BenchContext {
  /** The generated workspace of the case (null when the case has no shape). */
  workspace: GeneratedWorkspace | null;
  /** Absolute path of the built `loopx` CLI (out/cli.js). */
  cliPath: string;
  /** Where the helper bundles live (rawRead.cjs, appendRows.cjs, peakRss.cjs). */
  buildDir: string;
  /** A scratch folder for this case, removed afterwards. */
  tmpDir: string;
  homeDir: string;
  /** The label of the case being run (benchmarks that make their own files pick their shape by it). */
  caseLabel?: string;
}

/** What one timed run may report besides its duration. */
export interface RunReport {
  /** Peak RSS of the child process the run spawned (whole-process benchmarks). */
  childPeakRssMb?: number;
  /** The duration the run measured itself (e.g. inside the VS Code extension host); replaces the wall time of run(). */
  measuredMs?: number;
}

export interface Prepared {
  run(): Promise<RunReport | void>;
  /** Checks the outcome after all runs; returns a line for the report, throws when the result is wrong. */
  verify?(): Promise<string>;
  /** Undoes what the runs wrote into a shared workspace. */
  cleanup?(): Promise<void>;
}

export type TargetMetric = 'median_ms' | 'baseline_ratio' | 'peak_rss_mb';

export interface Target {
  /** The case label the target applies to. */
  caseLabel: string;
  metric: TargetMetric;
  /** Met when the figure is strictly below this. */
  limit: number;
  /** How the target is phrased in the docs ("under 1.3 s as a whole CLI process"). */
  text: string;
}

interface BenchmarkCommon {
  /** Kebab-case id, used by `--only`. */
  name: string;
  title: string;
  targets?: Target[];
}

export interface RunnableBenchmark extends BenchmarkCommon {
  kind: 'in-process' | 'process';
  /** What one timed run does. */
  description: string;
  /** What the raw-limit baseline does with the same files. */
  baselineDescription: string;
  cases: BenchCase[];
  unitLabel: string;
  /** The amount of data a case holds, in `unitLabel`s (for the scaling table). */
  units(shape: WorkspaceShape | null): number;
  /** CLI words (`status`, `quota should-run`) that must exist in out/cli.js, else the benchmark is not implemented yet. */
  requiresCli?: string;
  prepare(ctx: BenchContext): Promise<Prepared>;
  prepareBaseline(ctx: BenchContext): Promise<Prepared>;
}

/** A benchmark of code that does not exist yet: listed, skipped, never given a figure. */
export interface PendingBenchmark extends BenchmarkCommon {
  kind: 'pending';
  /** What has to exist before it can be written, and what it will measure. */
  needs: string;
}

export type Benchmark = RunnableBenchmark | PendingBenchmark;

export interface Stats {
  median_ms: number;
  min_ms: number;
  max_ms: number;
  samples_ms: number[];
}

/** What a worker reports for one case and one side (the benchmark or its baseline). */
export interface SideResult extends Stats {
  peak_rss_mb: number;
  /** RSS of the worker (or, for whole-process runs, of an empty node process) before any work. */
  idle_rss_mb: number;
  verification: string | null;
}

export interface CaseResult {
  benchmark: string;
  case: string;
  size: SizeName | null;
  units: number;
  unit_label: string;
  runs: number;
  warmup: number;
  measured_at: string;
  subject: SideResult | null;
  baseline: SideResult | null;
  /** subject median ÷ baseline median. */
  baseline_ratio: number | null;
  /** Why there is no figure (not implemented yet, failed). */
  skipped: string | null;
  error: string | null;
}
