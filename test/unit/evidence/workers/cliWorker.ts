/**
 * Child process for the heartbeat race tests: `<cwd> <now> <argv…>`. Loads the CLI, waits at the start
 * barrier, then runs one `loopx` command in this process (as `node out/cli.js` would) and exits with
 * its code, its output on stdout.
 */
import { fixedClock } from '../../../../src/core/clock';
import { runCli } from '../../../../src/cli/program';
import { awaitGo } from '../../../support/barrier';

async function main(): Promise<void> {
  const [cwd = '', now = '', ...argv] = process.argv.slice(2);
  await awaitGo();
  process.exitCode = await runCli(argv, {
    cwd,
    env: { HOME: cwd, PATH: process.env['PATH'] },
    clock: fixedClock(now),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
