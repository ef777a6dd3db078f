import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateWorkspace, SIZES, todoSplit, type GeneratedWorkspace } from '../../../bench/workspace/generate';
import { registryProjectRoot, resolveRuntimeRoot, resolveStateFile } from '../../../src/core/registry/locate';
import { readRegistry, registryGoals } from '../../../src/core/registry/read';
import { validateRegistryDocument } from '../../../src/core/registry/validate';
import { readGoalRuns } from '../../../src/core/runtime/runIndex';
import { analyzeGates } from '../../../src/core/state/gates';
import { parseStateDocument } from '../../../src/core/state/document';
import { projectStateDocument } from '../../../src/core/state/structured';
import { removeTempDirs, tempDir } from '../../support/tempDir';

after(() => {
  removeTempDirs();
});

describe('bench workspace generator', () => {
  let workspace: GeneratedWorkspace;
  before(() => {
    workspace = generateWorkspace({ ...SIZES.S, seed: 7, out: path.join(tempDir(), 'ws') });
  });

  it('writes a registry our reader and validator accept, with every path resolving to a real file', async () => {
    const registry = await readRegistry(workspace.registryPath);
    const goals = registryGoals(registry);
    assert.equal(goals.length, SIZES.S.goals);
    assert.deepEqual(
      goals.map((g) => g.id),
      workspace.goalIds,
    );
    const validation = validateRegistryDocument(registry, {
      registryPath: workspace.registryPath,
      homeDir: os.homedir(),
    });
    assert.deepEqual(validation.problem_diagnostics, []);
    assert.equal(validation.ok, true);
    assert.ok(validation.goals.every((row) => row.repo_exists && row.state_file_exists));
    assert.equal(
      resolveRuntimeRoot({ registryPath: workspace.registryPath, registry, homeDir: os.homedir() }),
      fs.realpathSync(workspace.runtimeRoot),
    );
  });

  it('writes state files that parse with zero errors and zero warnings, with the exact todo counts', async () => {
    const registry = await readRegistry(workspace.registryPath);
    const split = todoSplit(SIZES.S.todos);
    let openAgent = 0;
    for (const goal of registryGoals(registry)) {
      const file = resolveStateFile(goal, os.homedir());
      assert.ok(file !== null);
      const doc = parseStateDocument(fs.readFileSync(file, 'utf8'));
      const projection = projectStateDocument(doc, { goalId: goal.id });
      assert.equal(projection.diagnostics.error_count, 0, JSON.stringify(projection.diagnostics.errors));
      assert.deepEqual(projection.diagnostics.warnings, []);
      assert.equal(projection.diagnostics.migration_ready, true);
      assert.equal(projection.todos.user.total_count, split.user);
      assert.equal(projection.todos.agent.total_count, split.agent);
      assert.ok(projection.next_action.first !== null);
      const gates = analyzeGates(doc);
      assert.equal(
        gates.open_gates.length +
          doc.todos.filter((t) => t.meta['task_class'] === 'user_gate' && t.status === 'done').length,
        split.gates,
      );
      assert.ok(
        gates.agent_todos.some((t) => t.blocked),
        'some agent todo is held by a gate',
      );
      openAgent += projection.todos.agent.open_count;
    }
    assert.equal(openAgent, workspace.counts.openAgentTodos);
    assert.equal(workspace.counts.todos, SIZES.S.goals * SIZES.S.todos);
  });

  it('writes run indexes our reader reads completely, with both artifacts of every row, and spends inside and outside the window', async () => {
    const projectRoot = registryProjectRoot(workspace.registryPath);
    let rows = 0;
    let spends = 0;
    let spendsInWindow = 0;
    const windowStart = new Date(workspace.now).getTime() - 24 * 3_600_000;
    for (const goalId of workspace.goalIds) {
      const read = await readGoalRuns(workspace.runtimeRoot, goalId, { projectRoot });
      assert.equal(read.exists, true);
      assert.deepEqual(read.skipped, []);
      assert.equal(read.raw_count, SIZES.S.runs);
      assert.equal(read.rows.length, SIZES.S.runs, 'no two rows merge: every row has its own artifacts');
      assert.ok(read.rows.every((row) => row.json_exists && row.markdown_exists));
      rows += read.rows.length;
      for (const row of read.rows.filter((r) => r.classification === 'quota_slot_spent')) {
        spends++;
        if (new Date(row.generated_at ?? '').getTime() >= windowStart) spendsInWindow++;
        const record = JSON.parse(fs.readFileSync(path.resolve(projectRoot, row.json_path ?? ''), 'utf8')) as {
          quota_event?: { slots?: number };
        };
        assert.equal(record.quota_event?.slots, 1);
      }
    }
    assert.equal(rows, workspace.counts.runRows);
    assert.equal(spends, workspace.counts.spendRows);
    assert.equal(spendsInWindow, workspace.counts.spendRowsInWindow);
    assert.ok(spendsInWindow > 0 && spendsInWindow < spends, 'spends fall both inside and outside the 24 h window');
  });

  it('is deterministic: the same seed gives the same files, another seed different ones', () => {
    const again = generateWorkspace({ ...SIZES.S, seed: 7, out: path.join(tempDir(), 'ws') });
    const other = generateWorkspace({ ...SIZES.S, seed: 8, out: path.join(tempDir(), 'ws') });
    const relativeFiles = (root: string): string[] =>
      fs
        .readdirSync(root, { recursive: true })
        .map(String)
        .filter((f) => fs.statSync(path.join(root, f)).isFile())
        .sort();
    const files = relativeFiles(workspace.root);
    assert.deepEqual(relativeFiles(again.root), files);
    const normalize = (root: string, file: string): string =>
      fs.readFileSync(path.join(root, file), 'utf8').split(root).join('<root>');
    for (const file of files) assert.equal(normalize(again.root, file), normalize(workspace.root, file), file);
    const stateFile = path.join('.codex', 'goals', 'goal-0001', 'ACTIVE_GOAL_STATE.md');
    assert.notEqual(normalize(other.root, stateFile), normalize(workspace.root, stateFile));
  });

  it('refuses a folder that is not empty and leaves it untouched', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'keep.txt'), 'mine');
    assert.throws(() => generateWorkspace({ goals: 1, todos: 1, runs: 1, seed: 1, out: dir }), /not empty/);
    assert.deepEqual(fs.readdirSync(dir), ['keep.txt']);
  });

  it('supports goals without runs and a single todo', async () => {
    const small = generateWorkspace({ goals: 2, todos: 1, runs: 0, seed: 3, out: path.join(tempDir(), 'ws') });
    assert.equal(small.counts.runRows, 0);
    const read = await readGoalRuns(small.runtimeRoot, small.goalIds[0] ?? '', { projectRoot: small.root });
    assert.equal(read.exists, false);
    const doc = parseStateDocument(
      fs.readFileSync(path.join(small.root, '.codex', 'goals', 'goal-0001', 'ACTIVE_GOAL_STATE.md'), 'utf8'),
    );
    assert.equal(doc.todos.length, 1);
    assert.equal(projectStateDocument(doc).diagnostics.error_count, 0);
  });
});
