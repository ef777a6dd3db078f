// `npm run bench`: runs bench/run.ts (the benchmark runner) under tsx; arguments pass through.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', join(root, 'bench', 'run.ts'), ...process.argv.slice(2)],
  { cwd: root, stdio: 'inherit' },
);
process.exit(result.status ?? 1);
