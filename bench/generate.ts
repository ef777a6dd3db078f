import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { generateWorkspace, SIZE_NAMES, SIZES, type SizeName } from './workspace/generate';

/**
 * `npm run bench:gen -- --goals G --todos T --runs R --seed S --out DIR` (or `--size L`):
 * writes a deterministic synthetic LoopX workspace and prints what it wrote.
 */
function main(): void {
  const { values } = parseArgs({
    options: {
      size: { type: 'string' },
      goals: { type: 'string' },
      todos: { type: 'string' },
      runs: { type: 'string' },
      seed: { type: 'string', default: '1' },
      out: { type: 'string' },
      now: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(
      'usage: npm run bench:gen -- (--size S|M|L|XL | --goals G --todos T --runs R) [--seed N] [--now ISO] --out DIR',
    );
    return;
  }
  if (values.out === undefined) throw new Error('--out DIR is required (a new or empty folder)');
  let base = { goals: 10, todos: 20, runs: 50 };
  if (values.size !== undefined) {
    if (!(SIZE_NAMES as readonly string[]).includes(values.size))
      throw new Error(`--size must be one of ${SIZE_NAMES.join(', ')}`);
    base = { ...SIZES[values.size as SizeName] };
  }
  const whole = (name: string, text: string | undefined, fallback: number): number => {
    if (text === undefined) return fallback;
    if (!/^\d+$/.test(text)) throw new Error(`--${name} must be a whole number, got ${JSON.stringify(text)}`);
    return Number(text);
  };
  const started = performance.now();
  const workspace = generateWorkspace({
    goals: whole('goals', values.goals, base.goals),
    todos: whole('todos', values.todos, base.todos),
    runs: whole('runs', values.runs, base.runs),
    seed: whole('seed', values.seed, 1),
    out: values.out,
    ...(values.now !== undefined ? { now: values.now } : {}),
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`wrote ${workspace.root} in ${seconds} s`);
  console.log(`registry: ${workspace.registryPath}`);
  console.log(JSON.stringify(workspace.counts));
}

try {
  main();
} catch (error) {
  console.error(`bench:gen: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 2;
}
