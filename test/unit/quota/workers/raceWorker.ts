/**
 * Child process for the quota race test: `<registry> <goal> <agent> <turns>`. Each turn reserves a
 * slot and, when admitted, settles it; prints one JSON summary line.
 */
import { fixedClock } from '../../../../src/core/clock';
import { loadGoalRef } from '../../../support/goalRef';
import { settlementIdentity } from '../../../../src/core/quota/identity';
import { reserveTurn } from '../../../../src/core/quota/admission';
import { settleReservation } from '../../../../src/core/quota/settlement';
import { awaitGo } from '../../../support/barrier';

async function main(): Promise<void> {
  const [registryPath = '', goalId = '', agentId = '', turns = '0'] = process.argv.slice(2);
  const clock = fixedClock('2026-01-15T10:00:00Z');
  const goal = await loadGoalRef({ registryPath, goalId });
  const lock = { agentId, timeoutMs: 120_000, pollMs: 3 };
  await awaitGo();
  let admitted = 0;
  let refused = 0;
  let settled = 0;
  for (let i = 0; i < Number(turns); i++) {
    const identity = settlementIdentity({
      goalId,
      agentId,
      turnInstanceId: `${agentId}-turn-${i}`,
      todoId: 'todo_parser',
    });
    const reserved = await reserveTurn(goal, clock, { identity, lock });
    if (!reserved.admitted) {
      refused++;
      continue;
    }
    admitted++;
    const result = await settleReservation(goal, clock, {
      identity,
      lock,
      usage: { tokens: 100, cost_usd: 0.01, estimated: true },
    });
    if (result.status === 'settled') settled++;
  }
  process.stdout.write(`${JSON.stringify({ agentId, admitted, refused, settled })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
