import assert from 'node:assert/strict';
import { makeWorkspace, readIndexRows } from '../quota/helpers';
import { ONE_TODO, cli } from './helpers';
import { LOOPX_CLI_COMMAND } from '../../../src/core/protocol/cliInvocation';

/**
 * The commands `loopx heartbeat-prompt` tells an external scheduler's agent to run, run against our
 * CLI in order (should-run → refresh-state → spend-slot, one turn id written into each command), twice as a retried
 * heartbeat would: one writeback row and exactly one spend.
 */

/** A prompt command line as argv: the turn id written in and the placeholders filled, quotes removed. */
function argvOf(line: string, turn: string): string[] {
  const filled = line
    .replace(/<turn_id>/g, turn)
    .replace('<classification>', 'validated_progress')
    .replace('<scale>', 'single_surface')
    .replace('<outcome>', 'outcome_progress')
    .replace('<cost_usd>', '0.002')
    .replace('<tokens>', '1500');
  assert.doesNotMatch(filled, /<[a-z_ ]+>/, `every placeholder is filled: ${filled}`);
  const words = filled.split(/\s+/).filter(Boolean);
  assert.equal(words[0], 'loopx');
  return words.slice(1);
}

describe('heartbeat-prompt commands run end to end against our CLI', () => {
  it('should-run → refresh-state → spend-slot with one turn id, retried: one writeback, one spend', async () => {
    const ws = makeWorkspace({}, ONE_TODO);
    const prompt = await cli(ws, ['heartbeat-prompt', '--goal-id', 'g', '--agent-id', 'agent-a']);
    assert.equal(prompt.code, 0, prompt.stderr);
    const lines = String(prompt.json()['prompt'])
      .split('\n')
      .flatMap((line) => line.match(/`("\$\{LOOPX_CLI:-loopx\}" [^`]+)`/g) ?? [])
      // `"${LOOPX_CLI:-loopx}" …` is `loopx …` where LOOPX_CLI is unset (test/unit/slash/loopxCliInvocation.test.ts runs it in sh).
      .map((quoted) => quoted.slice(1, -1).replace(LOOPX_CLI_COMMAND, 'loopx'));
    const pick = (prefix: string) => {
      const found = lines.find((l) => l.startsWith(prefix) && !l.includes('autonomous_replan'));
      assert.ok(found, `the prompt names ${prefix}: ${lines.join(' | ')}`);
      return found;
    };
    const sequence = [pick('loopx quota should-run'), pick('loopx refresh-state'), pick('loopx quota spend-slot')];
    for (let attempt = 0; attempt < 2; attempt++) {
      for (const line of sequence) {
        const run = await cli(ws, argvOf(line, 'HB-1'));
        assert.equal(run.code, 0, `${line}: ${run.stdout}`);
      }
    }
    const rows = readIndexRows(ws);
    assert.deepEqual(
      rows.map((r) => [r['classification'], r['todo_id']]),
      [
        ['validated_progress', 'todo_parser'],
        ['quota_slot_spent', 'todo_parser'],
      ],
    );
    // The prompt's spend step carries the turn's usage: the ledger records what the agent reported.
    assert.deepEqual(rows[1]?.['usage'], { estimated: false, tokens: 1500, cost_usd: 0.002 });
  });
});
