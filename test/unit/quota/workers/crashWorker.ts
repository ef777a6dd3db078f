/**
 * Child process for the quota crash test: `<registry> <goal> <agent> <turn> <now>`. Reserves the
 * turn's slot, prints RESERVED and then waits forever (the test kills it with SIGKILL).
 */
import { fixedClock } from '../../../../src/core/clock';
import { loadGoalRef } from '../../../support/goalRef';
import { settlementIdentity } from '../../../../src/core/quota/identity';
import { reserveTurn } from '../../../../src/core/quota/admission';

async function main(): Promise<void> {
  const [registryPath = '', goalId = '', agentId = '', turn = '', now = ''] = process.argv.slice(2);
  const goal = await loadGoalRef({ registryPath, goalId });
  const identity = settlementIdentity({ goalId, agentId, turnInstanceId: turn, todoId: 'todo_parser' });
  const reserved = await reserveTurn(goal, fixedClock(now), { identity, ttlMinutes: 30 });
  process.stdout.write(`${reserved.status === 'reserved' ? 'RESERVED' : `NOT_RESERVED ${reserved.reason}`}\n`);
  setInterval(() => undefined, 60_000);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
