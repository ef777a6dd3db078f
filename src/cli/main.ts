import { errorMessage } from '../core/errors';
import { runCli } from './program';
import { hostClock, installDemoAgentFrom } from '../core/ops/hostSetup';
import { sourceDemoAgentArgv } from './demoAgentSource';
import { guardedOutput } from './closedOutput';

async function main(): Promise<void> {
  // The composition root: the demo agent is the bundle next to out/cli.js (or, from source, under tsx).
  installDemoAgentFrom(__dirname, sourceDemoAgentArgv);
  // A reader that closes early (`| head`) ends the output quietly, not with an EPIPE stack trace.
  const stdout = guardedOutput(process.stdout);
  const stderr = guardedOutput(process.stderr);
  try {
    const code = await runCli(process.argv.slice(2), {
      cwd: process.cwd(),
      env: process.env,
      clock: hostClock(process.env),
      stdout: stdout.write,
      stderr: stderr.write,
    });
    process.exitCode = code;
  } catch (error) {
    stderr.write(`loopx: ${errorMessage(error)}\n`);
    process.exitCode = 1;
  }
}

void main();
