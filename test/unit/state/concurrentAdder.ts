/**
 * Child process for the concurrency test: adds `count` agent todos to the state file, retrying
 * each add when the file changed between its read and its locked write.
 * Usage: concurrentAdder.ts <stateFile> <label> <count>
 */
import { isLoopxError } from '../../../src/core/errors';
import { applyStateEdit } from '../../../src/core/state/stateFile';
import { addTodo } from '../../../src/core/state/todos';
import { awaitGo } from '../../support/barrier';

async function main(): Promise<void> {
  const [file, label, countText] = process.argv.slice(2);
  if (!file || !label || !countText) throw new Error('usage: concurrentAdder.ts <stateFile> <label> <count>');
  await awaitGo();
  let retries = 0;
  for (let i = 0; i < Number(countText); i++) {
    for (;;) {
      try {
        await applyStateEdit(
          file,
          (text) =>
            addTodo(
              text,
              { role: 'agent', text: `${label} todo ${i}` },
              { now: '2026-07-01T00:00:00Z', goalId: 'g', roster: ['codex-main', 'codex-side', 'codex-prop'] },
            ),
          {
            operation: 'todo add',
            lock: { timeoutMs: 20000 },
          },
        );
        break;
      } catch (error) {
        if (!isLoopxError(error, 'state_changed_concurrently')) throw error;
        retries++;
      }
    }
  }
  process.stdout.write(JSON.stringify({ label, retries }));
}

main().catch((error: unknown) => {
  process.stderr.write(String(error instanceof Error ? error.stack : error));
  process.exit(1);
});
