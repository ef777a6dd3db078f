import { SIZE_NAMES } from '../workspace/generate';
import { growthLabel, round, type GrowthLabel } from './stats';
import type { Benchmark, CaseResult, Target } from './types';

export interface MachineInfo {
  cpu_model: string;
  cores: number;
  memory_gb: number;
  node_version: string;
  platform: string;
  /** 1-minute load average when the run started and ended: the machine is shared, so say how busy it was. */
  load_average_start: number;
  load_average_end: number | null;
}

export interface BenchResults {
  schema_version: 'loopx_bench_results_v1';
  generated_at: string;
  machine: MachineInfo;
  cli: { path: string; built_at: string | null };
  results: CaseResult[];
  scaling: ScalingRow[];
}

export interface ScalingRow {
  benchmark: string;
  step: string;
  data_factor: number;
  time_factor: number;
  time_exponent: number | null;
  time_label: GrowthLabel;
  /** Peak RSS above the idle process, as a factor. */
  memory_factor: number;
  memory_label: GrowthLabel;
}

const SIZE_ORDER = new Map<string, number>(SIZE_NAMES.map((size, index) => [size, index]));

/** Time and memory growth between consecutive sizes, and from S to XL, for every benchmark measured at several sizes. */
export function scalingRows(results: readonly CaseResult[]): ScalingRow[] {
  const rows: ScalingRow[] = [];
  const byBenchmark = new Map<string, CaseResult[]>();
  for (const result of results) {
    if (result.size === null || result.subject === null) continue;
    byBenchmark.set(result.benchmark, [...(byBenchmark.get(result.benchmark) ?? []), result]);
  }
  for (const [benchmark, cases] of byBenchmark) {
    const sorted = [...cases].sort((a, b) => (SIZE_ORDER.get(a.size ?? '') ?? 0) - (SIZE_ORDER.get(b.size ?? '') ?? 0));
    const pairs: [CaseResult, CaseResult][] = sorted.slice(1).map((to, index) => [sorted[index] as CaseResult, to]);
    const first = sorted[0];
    const last = sorted[sorted.length - 1];
    if (sorted.length > 2 && first !== undefined && last !== undefined) pairs.push([first, last]);
    for (const [from, to] of pairs) {
      if (from.subject === null || to.subject === null) continue;
      const dataFactor = from.units > 0 ? to.units / from.units : 1;
      const timeFactor = to.subject.median_ms / from.subject.median_ms;
      const netMemory = (side: NonNullable<CaseResult['subject']>): number =>
        Math.max(side.peak_rss_mb - side.idle_rss_mb, 1);
      const memoryFactor = netMemory(to.subject) / netMemory(from.subject);
      const time = growthLabel(dataFactor, timeFactor);
      rows.push({
        benchmark,
        step: `${from.case} → ${to.case}`,
        data_factor: round(dataFactor, 2),
        time_factor: round(timeFactor, 2),
        time_exponent: time.exponent,
        time_label: time.label,
        memory_factor: round(memoryFactor, 2),
        memory_label: growthLabel(dataFactor, memoryFactor).label,
      });
    }
  }
  return rows;
}

export function formatMs(ms: number): string {
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms).toLocaleString('en-US')} ms`;
}

const count = (n: number): string => n.toLocaleString('en-US');

export function targetFigure(target: Target, result: CaseResult | undefined): { figure: string; status: string } {
  if (result === undefined) return { figure: '—', status: 'not measured' };
  if (result.skipped !== null) return { figure: '—', status: result.skipped };
  if (result.error !== null || result.subject === null) return { figure: '—', status: 'failed (see the results)' };
  let value: number | null;
  let figure: string;
  if (target.metric === 'median_ms') {
    value = result.subject.median_ms;
    figure = `${formatMs(value)} median`;
  } else if (target.metric === 'peak_rss_mb') {
    value = result.subject.peak_rss_mb;
    figure = `${value.toFixed(0)} MB peak RSS`;
  } else {
    value = result.baseline_ratio;
    figure = value === null ? '—' : `${value.toFixed(2)}× the raw baseline`;
  }
  if (value === null) return { figure, status: 'not measured' };
  return { figure, status: value < target.limit ? 'met' : '**not met**' };
}

function findResult(results: readonly CaseResult[], benchmark: string, caseLabel: string): CaseResult | undefined {
  return (
    results.find((r) => r.benchmark === benchmark && r.case === caseLabel) ??
    results.find((r) => r.benchmark === benchmark && r.skipped !== null)
  );
}

export function renderMachine(data: BenchResults): string {
  const m = data.machine;
  return [
    `Measured on ${data.generated_at.slice(0, 10)} (${data.generated_at}).`,
    '',
    '| CPU | Cores | Memory | Node | OS | Load average (start → end) |',
    '|---|---|---|---|---|---|',
    `| ${m.cpu_model} | ${m.cores} | ${m.memory_gb} GB | ${m.node_version} | ${m.platform} | ${m.load_average_start} → ${m.load_average_end ?? '?'} |`,
    '',
    `CLI under test: \`${data.cli.path}\`${data.cli.built_at ? ` (built ${data.cli.built_at})` : ''}.`,
  ].join('\n');
}

export function renderTargets(benchmarks: readonly Benchmark[], results: readonly CaseResult[]): string {
  const lines = ['| Target | Benchmark | Case | Figure | Status |', '|---|---|---|---|---|'];
  for (const benchmark of benchmarks) {
    for (const target of benchmark.targets ?? []) {
      const { figure, status } =
        benchmark.kind === 'pending'
          ? { figure: '—', status: 'not implemented yet' }
          : targetFigure(target, findResult(results, benchmark.name, target.caseLabel));
      lines.push(`| ${target.text} | \`${benchmark.name}\` | ${target.caseLabel} | ${figure} | ${status} |`);
    }
  }
  return lines.join('\n');
}

export function renderResults(benchmarks: readonly Benchmark[], results: readonly CaseResult[]): string {
  const out: string[] = [];
  for (const benchmark of benchmarks) {
    out.push(`### \`${benchmark.name}\`: ${benchmark.title}`, '');
    if (benchmark.kind === 'pending') {
      out.push(`Not implemented yet. Needs ${benchmark.needs}.`, '');
      for (const target of benchmark.targets ?? [])
        out.push(`- Target: ${target.text} (${target.caseLabel}): not implemented yet.`);
      if ((benchmark.targets ?? []).length > 0) out.push('');
      continue;
    }
    out.push(`Timed: ${benchmark.description}.`, '', `Raw baseline: ${benchmark.baselineDescription}.`, '');
    const mine = benchmark.cases
      .map((c) => results.find((r) => r.benchmark === benchmark.name && r.case === c.label))
      .filter((r): r is CaseResult => r !== undefined);
    const skipped = mine.find((r) => r.skipped !== null);
    if (mine.length === 0) {
      out.push('Not measured yet.', '');
      continue;
    }
    if (skipped !== undefined && mine.every((r) => r.skipped !== null)) {
      out.push(`Skipped: ${skipped.skipped ?? ''}.`, '');
      for (const target of benchmark.targets ?? [])
        out.push(`- Target: ${target.text} (${target.caseLabel}): not implemented yet.`);
      if ((benchmark.targets ?? []).length > 0) out.push('');
      continue;
    }
    out.push(
      `| Case | Data | Median | Min | Max | Raw baseline (median) | × baseline | Peak RSS (baseline) | Runs | Measured |`,
      '|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const r of mine) {
      if (r.subject === null) {
        out.push(
          `| ${r.case} | ${count(r.units)} ${r.unit_label} | ${r.skipped ?? `failed: ${(r.error ?? '').slice(0, 120).replace(/\|/g, '/').replace(/\n/g, ' ')}`} | | | | | | | ${r.measured_at.slice(0, 10)} |`,
        );
        continue;
      }
      const s = r.subject;
      const b = r.baseline;
      out.push(
        `| ${r.case} | ${count(r.units)} ${r.unit_label} | ${formatMs(s.median_ms)} | ${formatMs(s.min_ms)} | ${formatMs(s.max_ms)} | ${b ? formatMs(b.median_ms) : '—'} | ${r.baseline_ratio === null ? '—' : `${r.baseline_ratio.toFixed(2)}×`} | ${s.peak_rss_mb.toFixed(0)} MB (${b ? `${b.peak_rss_mb.toFixed(0)} MB` : '—'}) | ${r.runs} + ${r.warmup} warm-up | ${r.measured_at.slice(0, 10)} |`,
      );
    }
    out.push('');
    for (const target of benchmark.targets ?? []) {
      const { figure, status } = targetFigure(target, findResult(results, benchmark.name, target.caseLabel));
      out.push(`- Target: ${target.text} (${target.caseLabel}): ${figure}, ${status}.`);
    }
    const verifications = mine.map((r) => r.subject?.verification).filter((v): v is string => typeof v === 'string');
    for (const verification of verifications) out.push(`- Checked: ${verification}.`);
    if ((benchmark.targets ?? []).length > 0 || verifications.length > 0) out.push('');
  }
  return out.join('\n').trimEnd();
}

export function renderScaling(rows: readonly ScalingRow[]): string {
  const lines = [
    '| Benchmark | Step | Data × | Time × | k (time ∝ data^k) | Time | Memory × | Memory |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    lines.push(
      `| \`${row.benchmark}\` | ${row.step} | ${row.data_factor} | ${row.time_factor} | ${row.time_exponent ?? '—'} | ${row.time_label} | ${row.memory_factor} | ${row.memory_label} |`,
    );
  }
  return lines.join('\n');
}

/** Replaces the text between `<!-- bench:NAME:begin -->` and `<!-- bench:NAME:end -->`, keeping everything else. */
export function replaceBetweenMarkers(document: string, name: string, content: string): string {
  const begin = `<!-- bench:${name}:begin -->`;
  const end = `<!-- bench:${name}:end -->`;
  const from = document.indexOf(begin);
  const to = document.indexOf(end);
  if (from < 0 || to < from)
    throw new Error(
      `docs/benchmarks.md has no ${begin} … ${end} block; add the two marker lines where the ${name} table belongs`,
    );
  return `${document.slice(0, from + begin.length)}\n${content}\n${document.slice(to)}`;
}
