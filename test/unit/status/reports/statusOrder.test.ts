import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadStatusAt } from '../../../support/status';
import { registryGoal, stateFileText, writeRegistry, writeStateFile } from '../../../support/fixtureBuilders';
import { tempDir } from '../../../support/tempDir';
import { goalItems } from '../../../../src/core/status/statusPayload';
import { compareCodePoints } from '../../../../src/core/status/reports/statusOrder';

/** The status payload's order (the original's sorted goal ids) and its run-history check's goal count. */

describe('status: item order and the run-history check', () => {
  it('items and run history in goal id order (code points), whatever the registry order', async () => {
    const dir = tempDir('loopx-status-order-');
    const ids = ['beta', 'alpha', 'Zed', 'alpha-2'];
    const registryPath = writeRegistry(
      dir,
      ids.map((id) => registryGoal(dir, id)),
    );
    for (const id of ids) writeStateFile(dir, id, stateFileText());
    const payload = await loadStatusAt({ registryPath, homeDir: dir });
    const expected = ['Zed', 'alpha', 'alpha-2', 'beta'];
    assert.deepEqual(
      goalItems(payload).map((item) => item.goal_id),
      expected,
    );
    assert.deepEqual(
      payload.run_history.goals.map((goal) => goal.id),
      expected,
    );
  });

  it('code points, as Python compares strings (not UTF-16 units)', () => {
    assert.ok(compareCodePoints('a\u{1F600}', 'a\uFFFF') > 0);
    assert.ok(compareCodePoints('B', 'a') < 0);
    assert.equal(compareCodePoints('x', 'x'), 0);
  });

  it('run-history goals: the registry goals and the runtime goal folders, each once; the checks end with the deferred scan', async () => {
    const dir = tempDir('loopx-status-history-');
    const registryPath = writeRegistry(dir, [registryGoal(dir, 'g')]);
    writeStateFile(dir, 'g', stateFileText());
    fs.mkdirSync(path.join(dir, '.loopx', 'runtime', 'goals', 'g'), { recursive: true });
    fs.mkdirSync(path.join(dir, '.loopx', 'runtime', 'goals', 'old-goal'), { recursive: true });
    const payload = await loadStatusAt({ registryPath, homeDir: dir });
    assert.ok(payload.contract.checks.includes('run-history goals=2 runs=0'), payload.contract.checks.join('\n'));
    assert.equal(payload.contract.checks.at(-1), 'public boundary scan deferred for status hot path');
    const one = await loadStatusAt({ registryPath, homeDir: dir, goalId: 'g' });
    assert.ok(one.contract.checks.includes('run-history goals=1 runs=0'));
  });
});
