/**
 * One racing agent: an MCP server of the project in this process with the SDK client on it,
 * connected and initialized before the barrier; after "go" it runs its part and prints one JSON line.
 *
 *   raceClient.ts <project dir> <now> <agent> claim           → todo_claim of todo_parser
 *   raceClient.ts <project dir> <now> <agent> slot <turn id>  → should_run (twice: a retry), then
 *                                                               refresh_state and spend_slot if told to run
 */
import { awaitGo } from '../../../support/barrier';
import { call, connectInMemory } from '../helpers';

async function main(): Promise<void> {
  const [dir = '', now = '', agent = '', mode = '', turn = ''] = process.argv.slice(2);
  const client = await connectInMemory({ dir, now });
  await client.listTools();
  await awaitGo();
  const out: Record<string, unknown> = { agent };
  if (mode === 'claim') {
    const claim = await call(client, 'todo_claim', {
      goalId: 'g',
      todoId: 'todo_parser',
      claimedBy: agent,
      agentId: agent,
    });
    out['claimed'] = claim.isError !== true;
    out['error_code'] = claim.structured['error_code'] ?? null;
  } else {
    const guard = { goalId: 'g', agentId: agent, turnInstanceId: turn };
    const first = await call(client, 'should_run', guard);
    const retry = await call(client, 'should_run', guard);
    out['told_to_run'] = first.structured['should_run'] === true;
    out['retry_agrees'] = retry.structured['should_run'] === first.structured['should_run'];
    if (out['told_to_run'] === true) {
      const recorded = await call(client, 'refresh_state', {
        ...guard,
        classification: 'validated_progress',
        deliveryOutcome: 'outcome_progress',
      });
      out['recorded'] = recorded.isError !== true;
      const spent = await call(client, 'spend_slot', { ...guard, source: 'heartbeat', execute: true });
      out['spent'] = spent.isError !== true;
      out['spend_error'] = spent.isError === true ? spent.content : null;
    }
  }
  await client.close();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
