/**
 * A race worker (../../fs/barrier.ts): loads the CLI, waits for the parent's "go", then runs
 * `loopx task-lease acquire` for each todo id given, one after another, as agent argv[2].
 * Prints one JSON line: the todo ids this agent won.
 */
import { clockFromEnv } from '../../../../src/core/clock';
import { runCli } from '../../../../src/cli/program';
import { awaitGo } from '../../../support/barrier';

async function main(): Promise<void> {
  const [agent, ...todoIds] = process.argv.slice(2);
  if (agent === undefined) throw new Error('usage: acquireMany <agent> <todo id>…');
  await awaitGo();
  const won: string[] = [];
  const refused: string[] = [];
  for (const todoId of todoIds) {
    let out = '';
    const code = await runCli(
      [
        'task-lease',
        'acquire',
        '--goal-id',
        'g1',
        '--todo-id',
        todoId,
        '--owner',
        agent,
        '--idempotency-key',
        `race-${agent}`,
        '--format',
        'json',
      ],
      {
        cwd: process.cwd(),
        env: process.env,
        clock: clockFromEnv(),
        stdout: (text) => (out += text),
        stderr: (text) => process.stderr.write(text),
      },
    );
    const body = JSON.parse(out) as { ok: boolean; error_code?: string };
    if (code === 0 && body.ok) won.push(todoId);
    else refused.push(`${todoId}:${body.error_code ?? code}`);
  }
  process.stdout.write(`${JSON.stringify({ agent, won, refused })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exitCode = 1;
});
