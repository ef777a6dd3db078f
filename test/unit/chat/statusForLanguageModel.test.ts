import assert from 'node:assert/strict';
import * as os from 'node:os';
import { statusForLanguageModel, type StatusPayload } from '../../../src/core/ops/status';
import { cli } from '../evidence/helpers';
import { makeWorkspace } from '../quota/helpers';

/**
 * Issue 34, defect 10: the `@loopx` chat participant gives a language model the status read model as
 * context. It must hold workspace-relative paths only (`<project>/…`), never the machine's absolute ones.
 */
describe('status as language model context (the @loopx participant)', () => {
  it('labels every absolute path workspace-relative and keeps the goals', async () => {
    const ws = makeWorkspace({ domain: 'demo' });
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
    const payload = (await cli(ws, ['status'])).json() as unknown as StatusPayload;
    assert.ok(JSON.stringify(payload).includes(ws.dir), 'the status payload itself names absolute paths');

    const context = JSON.stringify(
      statusForLanguageModel(payload, { workspaceFolders: [ws.dir], homeDir: os.homedir() }),
    );
    assert.ok(!context.includes(ws.dir), `an absolute path reached the model: ${context.slice(0, 400)}`);
    assert.doesNotMatch(context, /"\/(?:tmp|home|root|Users)\//);
    assert.match(context, /<project>\/\.loopx\/registry\.json/);
    assert.match(context, /"goal_id":"g"/);
  });
});
