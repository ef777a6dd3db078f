import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { QUOTA_SLOT_SPENT } from '../../../src/core/quota/ledger';
import { expectSuccess, startTogether } from '../../support/barrier';
import { events } from '../evidence/helpers';
import { DEFAULT_STATE, makeWorkspace, NOW, readIndexRows } from '../quota/helpers';

/**
 * Two MCP clients at once, each an agent in its own process with its own server, released together
 * by the barrier: one todo, one slot. The file locks, reservations and receipts of the operations hold
 * over MCP as over the CLI: one claim wins, never more spends than slots, one receipt per turn id.
 */

const WORKER = path.join(__dirname, 'workers', 'raceClient.ts');
const AGENTS = ['agent-a', 'agent-b'];

async function race(dir: string, mode: 'claim' | 'slot'): Promise<Record<string, unknown>[]> {
  const workers = await startTogether(
    AGENTS.map((agent) => ({ script: WORKER, args: [dir, NOW, agent, mode, `turn-${agent}`] })),
  );
  await Promise.all(workers.map(expectSuccess));
  return workers.map(
    (worker) => JSON.parse(worker.stdout().trim().split('\n').pop() ?? '{}') as Record<string, unknown>,
  );
}

describe('two MCP clients racing behind a barrier', function () {
  this.timeout(120_000);

  it('for one todo: exactly one claim wins, the other is refused and nothing is lost', async () => {
    const ws = makeWorkspace({}, DEFAULT_STATE);
    const results = await race(ws.dir, 'claim');
    const winners = results.filter((result) => result['claimed'] === true);
    assert.equal(winners.length, 1, JSON.stringify(results));
    const loser = results.find((result) => result['claimed'] !== true);
    // Refused by the claim rule, or by the state file's compare-and-swap when both read it before either wrote.
    assert.ok(
      ['todo_claimed_by_other_agent', 'state_changed_concurrently'].includes(String(loser?.['error_code'])),
      JSON.stringify(results),
    );
    const state = fs.readFileSync(ws.statePath, 'utf8');
    assert.match(state, new RegExp(`todo_id=todo_parser [^\\n]*claimed_by=${String(winners[0]?.['agent'])}`));
  });

  it('for one slot: never over the limit, one receipt per turn id, the admitted turn spends once', async () => {
    // One slot in the window: compute 1 × 60 min / 60-min slots.
    const ws = makeWorkspace({ quota: { compute: 1, window_hours: 1, slot_minutes: 60 } }, DEFAULT_STATE);
    const results = await race(ws.dir, 'slot');
    for (const result of results) assert.equal(result['retry_agrees'], true, JSON.stringify(results));
    const told = results.filter((result) => result['told_to_run'] === true);
    assert.equal(told.length, 1, `one slot, one admitted turn: ${JSON.stringify(results)}`);
    for (const turn of told) assert.equal(turn['spent'], true, JSON.stringify(turn));
    const spends = readIndexRows(ws).filter((row) => row['classification'] === QUOTA_SLOT_SPENT);
    assert.equal(spends.length, told.length, 'every admitted turn spent, once');
    assert.ok(spends.length <= 1, 'never over the limit');
    const receipts = events(ws).filter((event) => event['event_kind'] === 'quota_should_run');
    const perTurn = new Map<string, number>();
    for (const receipt of receipts) {
      const turn = String(receipt['run_id']);
      perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
    }
    for (const [turn, count] of perTurn) assert.equal(count, 1, `turn ${turn} has ${count} receipts`);
    for (const turn of told)
      assert.ok(perTurn.has(`turn-${String(turn['agent'])}`), 'the admitted turn has its receipt');
  });
});
