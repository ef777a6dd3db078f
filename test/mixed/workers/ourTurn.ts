/**
 * One of our turns, as the turn driver accounts it: `<registry> <goal> <agent> <turn> <settle-file>` reserves a slot
 * (admission), works until `<settle-file>` exists (the agent's turn), then settles it. Prints `{admitted, status}`.
 */
import * as fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../../../src/core/clock';
import { loadGoalRef } from '../../support/goalRef';
import { settlementIdentity } from '../../../src/core/quota/identity';
import { reserveTurn } from '../../../src/core/quota/admission';
import { settleReservation } from '../../../src/core/quota/settlement';

async function main(): Promise<void> {
  const [registryPath = '', goalId = '', agentId = '', turn = '', settleFile = ''] = process.argv.slice(2);
  const goal = await loadGoalRef({ registryPath, goalId });
  const identity = settlementIdentity({ goalId, agentId, turnInstanceId: turn, todoId: 'todo_aaaaaaaaaaaa' });
  const lock = { agentId, timeoutMs: 60_000 };
  const reserved = await reserveTurn(goal, systemClock, { identity, lock });
  if (!reserved.admitted) {
    process.stdout.write(`${JSON.stringify({ admitted: false, reason: reserved.reason })}\n`);
    return;
  }
  while (!fs.existsSync(settleFile)) await sleep(10);
  const settled = await settleReservation(goal, systemClock, { identity, lock });
  process.stdout.write(`${JSON.stringify({ admitted: true, status: settled.status })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
