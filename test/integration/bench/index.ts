import { writeFileSync } from 'node:fs';
import * as vscode from 'vscode';

/**
 * Extension-host side of the `extension-activation` benchmark (bench/benchmarks/extension.ts):
 * activate LoopX, show the Goals view, wait until it lists the workspace's goals, and write the
 * timings LoopX measured itself to $LOOPX_BENCH_TIMINGS.
 */
export async function run(): Promise<void> {
  const output = process.env['LOOPX_BENCH_TIMINGS'];
  if (!output) throw new Error('LOOPX_BENCH_TIMINGS is not set');
  const extension = vscode.extensions.getExtension('loopx.loopx-vscode');
  if (!extension) throw new Error('LoopX is not installed in this host');
  await extension.activate();
  await vscode.commands.executeCommand('loopx.goals.focus');
  const deadline = Date.now() + 240_000;
  for (;;) {
    const timings = (await vscode.commands.executeCommand('_loopx.activationTimings')) as {
      activateToGoalsShownMs: number | null;
    };
    if (timings.activateToGoalsShownMs !== null) {
      writeFileSync(output, JSON.stringify(timings));
      return;
    }
    if (Date.now() > deadline) throw new Error('the Goals view did not list the goals within 240 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
