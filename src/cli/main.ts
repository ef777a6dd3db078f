import { errorMessage } from '../core/errors';
import { runCli } from './program';
import { hostClock, installDemoAgentFrom } from '../core/ops/hostSetup';
import { sourceDemoAgentArgv } from './demoAgentSource';

async function main(): Promise<void> {
  // The composition root: the demo agent is the bundle next to out/cli.js (or, from source, under tsx).
  installDemoAgentFrom(__dirname, sourceDemoAgentArgv);
  try {
    const code = await runCli(process.argv.slice(2), {
      cwd: process.cwd(),
      env: process.env,
      clock: hostClock(process.env),
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
    });
    process.exitCode = code;
  } catch (error) {
    process.stderr.write(`loopx: ${errorMessage(error)}\n`);
    process.exitCode = 1;
  }
}

void main();
