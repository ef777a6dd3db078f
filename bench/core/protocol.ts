/** What run.ts hands a worker process (as one JSON argument) and how the worker answers. */
export interface WorkerInput {
  benchmark: string;
  caseLabel: string;
  side: 'subject' | 'baseline';
  workspaceRoot: string | null;
  cliPath: string;
  buildDir: string;
  runs: number;
  warmup: number;
}

/** The worker prints its result as one line starting with this. */
export const RESULT_PREFIX = '@@bench-result ';
