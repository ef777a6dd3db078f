import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cli } from '../evidence/helpers';
import { makeWorkspace, type Workspace } from '../quota/helpers';

/**
 * Issue 34, defect 8: a run index that cannot be read is never "0 runs, 0 slots used". Status reads
 * on with a visible warning naming the file and the fix (CLI Markdown, the JSON's contract warnings
 * that /status.json serves, the item the editor's views read); admission refuses it. Lines the
 * reader tolerates (garbage lines, a torn last line) stay tolerated.
 */

function workspaceWithRun(): { ws: Workspace; index: string } {
  const ws = makeWorkspace({ domain: 'demo', quota: { allowed_slots: 3 } });
  const index = path.join(ws.runtimeRoot, 'goals', 'g', 'runs', 'index.jsonl');
  return { ws, index };
}

async function recordRun(ws: Workspace): Promise<void> {
  const run = await cli(ws, [
    'refresh-state',
    '--goal-id',
    'g',
    '--classification',
    'state_refreshed',
    '--agent-id',
    'agent-a',
  ]);
  assert.equal(run.code, 0, run.stdout);
}

describe('an unreadable run index (issue 34, defect 8)', () => {
  it('status warns, naming the file and the fix, and shows slot use as unknown; admission refuses', async () => {
    const { ws, index } = workspaceWithRun();
    await recordRun(ws);
    fs.rmSync(index);
    fs.mkdirSync(index);

    const json = await cli(ws, ['status']);
    const payload = json.json();
    const warnings = (payload['contract'] as { warnings: string[] }).warnings;
    const warning = warnings.find((w) => w.includes('run index unreadable'));
    assert.ok(warning !== undefined, `no warning among ${JSON.stringify(warnings)}`);
    assert.ok(warning.includes(index), warning);
    assert.match(warning, /Replace it/);
    const item = (payload['attention_queue'] as { items: Record<string, unknown>[] }).items.find(
      (i) => i['goal_id'] === 'g',
    );
    assert.ok(typeof item?.['run_index_unreadable'] === 'string', JSON.stringify(item));

    const markdown = await cli(ws, ['--format', 'markdown', 'status']);
    assert.match(markdown.stdout, /run index is unreadable/);
    assert.match(markdown.stdout, /Quota: unknown/);
    assert.doesNotMatch(markdown.stdout, /0 of 3 slots used/);

    for (const admission of [
      ['quota', 'should-run', '--goal-id', 'g'],
      ['quota', 'should-run', '--goal-id', 'g', '--agent-id', 'agent-a', '--turn-instance-id', 't1'],
    ]) {
      const refused = await cli(ws, admission);
      assert.equal(refused.code, 1, refused.stdout);
      assert.equal(refused.error().code, 'file_not_regular');
      assert.ok(refused.error().message.includes(index), refused.error().message);
    }
  });

  it('garbage lines and a torn last line stay tolerated: skipped and counted, not an unreadable index', async () => {
    const { ws, index } = workspaceWithRun();
    await recordRun(ws);
    fs.appendFileSync(
      index,
      Buffer.concat([Buffer.from('not json at all\n'), Buffer.from('{"generated_at": "2026-01-1')]),
    );
    const status = (await cli(ws, ['status'])).json();
    const warnings = (status['contract'] as { warnings: string[] }).warnings;
    assert.ok(!warnings.some((w) => w.includes('run index unreadable')), JSON.stringify(warnings));
    assert.ok(
      warnings.some((w) => w.includes('unreadable=2')),
      JSON.stringify(warnings),
    );
    assert.equal(status['run_count'], 1);
    const guard = await cli(ws, ['quota', 'should-run', '--goal-id', 'g']);
    assert.equal(guard.code, 0, guard.stdout);
  });
});
