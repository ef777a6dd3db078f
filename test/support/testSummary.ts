import { existsSync, readFileSync } from 'node:fs';

export interface TestSummary {
  passed: number;
  failed: number;
  pending: number;
  results?: { title: string; state: string; error?: string }[];
}

export function readSummary(file: string): TestSummary | undefined {
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as TestSummary;
}

export function printResults(summary: TestSummary): void {
  for (const result of summary.results ?? []) {
    const mark = result.state === 'passed' ? '✔' : result.state === 'failed' ? '✖' : '-';
    console.log(`  ${mark} ${result.title}`);
    if (result.error)
      console.log(
        result.error
          .split('\n')
          .map((l) => `      ${l}`)
          .join('\n'),
      );
  }
}

/**
 * Judges one suite's run: a suite that ran no test, or left a test pending, counts one extra failure
 * (with the reason printed), so a suite that silently stopped loading its tests cannot pass.
 */
export function judgeSuite(label: string, summary: TestSummary | undefined): TestSummary | undefined {
  if (!summary) return summary;
  const problems: string[] = [];
  if (summary.passed + summary.failed === 0) problems.push('ran no test');
  if (summary.pending > 0) problems.push(`${summary.pending} test(s) pending (skipped tests prove nothing)`);
  if (problems.length === 0) return summary;
  console.log(`  ✖ ${label}: ${problems.join('; ')}`);
  return { ...summary, failed: summary.failed + 1 };
}

/** Adds up summaries; an absent one counts as a failure so a crashed run never passes. */
export function combine(summaries: (TestSummary | undefined)[]): TestSummary {
  return summaries.reduce<TestSummary>(
    (total, s) =>
      s
        ? { passed: total.passed + s.passed, failed: total.failed + s.failed, pending: total.pending + s.pending }
        : { ...total, failed: total.failed + 1 },
    { passed: 0, failed: 0, pending: 0 },
  );
}
