/**
 * The real `loopx` CLI behind a start barrier (test/support/barrier.ts): loads the whole CLI first, waits for
 * the parent's "go", then runs argv like `node out/cli.js` would. Prints what the CLI prints.
 */
import { clockFromEnv } from '../../../../src/core/clock';
import { runCli } from '../../../../src/cli/program';
import { awaitGo } from '../../../support/barrier';

async function main(): Promise<void> {
  await awaitGo();
  process.exitCode = await runCli(process.argv.slice(2), {
    cwd: process.cwd(),
    env: process.env,
    clock: clockFromEnv(),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exitCode = 1;
});
