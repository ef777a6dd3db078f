// `npm run bench:gen -- --goals G --todos T --runs R --seed S --out DIR`: runs bench/generate.ts under tsx.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', join(root, 'bench', 'generate.ts'), ...process.argv.slice(2)],
  { cwd: process.cwd(), stdio: 'inherit' },
);
process.exit(result.status ?? 1);
