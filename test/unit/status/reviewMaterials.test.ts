import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GoalStatusCache } from '../../../src/core/status/goalStatus';
import { LiveStatusModel } from '../../../src/core/status/liveStatus';
import { materialRoots, reviewMaterials } from '../../../src/core/status/projection/reviewMaterials';
import { goalItems, type StatusPayload } from '../../../src/core/status/statusPayload';
import { loadStatusAt } from '../../support/status';
import { tempDir } from '../../support/tempDir';

/**
 * A todo's `review_materials` (the original's materials.py `extract_review_materials`): the markdown files its text
 * links, each with whether it exists; the look-up is per link and the status caches (memory and persistent) key the
 * item on the linked files, so creating or removing one shows on the next status call.
 */

const STATE = `---\nstatus: active\nupdated_at: 2026-07-01T00:00:00+00:00\n---\n## User Todo\n- [ ] Review [the plan](docs/plan.md#scope) and \`notes/later.md\`\n  <!-- loopx:todo todo_id=todo_review status=open task_class=user_gate -->\n## Agent Todo\n- [ ] Implement the parser\n  <!-- loopx:todo todo_id=todo_parser status=open task_class=advancement_task -->\n## Next Action\n- Implement the parser.\n`;

function workspace(): { dir: string; registryPath: string } {
  const dir = tempDir('loopx-materials-');
  const state = path.join(dir, '.codex', 'goals', 'review', 'ACTIVE_GOAL_STATE.md');
  fs.mkdirSync(path.dirname(state), { recursive: true });
  fs.writeFileSync(state, STATE);
  const past = new Date(Date.now() - 60_000);
  fs.utimesSync(state, past, past);
  fs.mkdirSync(path.join(dir, 'docs'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'docs', 'plan.md'), '# Plan\n');
  fs.mkdirSync(path.join(dir, '.loopx', 'runtime'), { recursive: true });
  const registryPath = path.join(dir, '.loopx', 'registry.json');
  const goal = { id: 'review', repo: dir, state_file: '.codex/goals/review/ACTIVE_GOAL_STATE.md', status: 'active' };
  fs.writeFileSync(registryPath, JSON.stringify({ common_runtime_root: '.loopx/runtime', goals: [goal] }));
  return { dir, registryPath };
}

function materials(payload: StatusPayload): unknown {
  const todos = goalItems(payload)[0]?.user_todos as { items: Record<string, unknown>[] } | null;
  return todos?.items[0]?.['review_materials'];
}

const listed = (planExists: boolean, laterExists: boolean): unknown => [
  { label: 'the plan', path: 'docs/plan.md#scope', exists: planExists, anchor: 'scope' },
  { label: 'later.md', path: 'notes/later.md', exists: laterExists },
];

describe('status: review materials (the markdown files a todo links)', () => {
  it('lists links then backtick paths once each, markdown and local only, each looked up under the roots', () => {
    const root = tempDir('loopx-materials-rule-');
    const state = path.join(root, 'goals', 'g', 'STATE.md');
    fs.mkdirSync(path.dirname(state), { recursive: true });
    fs.mkdirSync(path.join(root, 'docs'), { recursive: true });
    fs.writeFileSync(path.join(root, 'docs', 'a.md'), '');
    fs.writeFileSync(path.join(root, 'docs', 'a b.md'), '');
    fs.writeFileSync(path.join(path.dirname(state), 'beside.MD'), '');
    fs.writeFileSync(path.join(path.dirname(root), 'outside.md'), '');
    const roots = materialRoots(root, state, '/home/someone');
    assert.deepEqual(roots, [root, path.dirname(state)]);
    const found = reviewMaterials(
      '`docs/a.md` then [A](docs/a.md) [again](docs/a.md) [web](https://x.test/r.md) [txt](notes.txt) ' +
        '[Beside](beside.MD) [up](../outside.md) [abs](' +
        path.join(root, 'docs', 'a.md') +
        ') [spaced](docs/a%20b.md#Top)',
      roots,
      '/home/someone',
      (file) => fs.existsSync(file),
    );
    assert.deepEqual(found, [
      { label: 'A', path: 'docs/a.md', exists: true },
      { label: 'Beside', path: 'beside.MD', exists: true },
      { label: 'up', path: '../outside.md', exists: false },
      { label: 'abs', path: path.join(root, 'docs', 'a.md'), exists: true },
      { label: 'spaced', path: 'docs/a%20b.md#Top', exists: true, anchor: 'Top' },
    ]);
    assert.deepEqual(
      reviewMaterials('No links here', roots, '/home/someone', () => true),
      [],
    );
    assert.deepEqual(
      reviewMaterials('[p](/etc/p.md)', roots, '/home/someone', () => true),
      [{ label: 'p', path: '/etc/p.md', exists: false }],
      'an absolute path outside the roots is not looked up',
    );
  });

  it('one item cache: a linked file created, then removed, between two status calls shows on the next', async () => {
    const { dir, registryPath } = workspace();
    const cache = new GoalStatusCache();
    const status = () => loadStatusAt({ registryPath, homeDir: dir, cache });
    assert.deepEqual(materials(await status()), listed(true, false));
    fs.mkdirSync(path.join(dir, 'notes'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'notes', 'later.md'), '# Later\n');
    assert.deepEqual(materials(await status()), listed(true, true));
    fs.rmSync(path.join(dir, 'docs', 'plan.md'));
    assert.deepEqual(materials(await status()), listed(false, true));
  });

  it('the persistent cache: a later process sees a linked file created or removed since', async () => {
    const { dir, registryPath } = workspace();
    const status = () => loadStatusAt({ registryPath, homeDir: dir, persistentCache: true });
    assert.deepEqual(materials(await status()), listed(true, false));
    assert.deepEqual(materials(await status()), listed(true, false));
    fs.mkdirSync(path.join(dir, 'notes'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'notes', 'later.md'), '# Later\n');
    assert.deepEqual(materials(await status()), listed(true, true));
    fs.rmSync(path.join(dir, 'notes', 'later.md'));
    assert.deepEqual(materials(await status()), listed(true, false));
  });

  it('the live model (/status.json) rebuilds when a linked file is created, though nothing else changed', async () => {
    const { dir, registryPath } = workspace();
    const model = new LiveStatusModel({
      registryPath,
      homeDir: dir,
      clock: { now: () => new Date() },
      watch: false,
      persistentCache: false,
    });
    try {
      const first = await model.refresh();
      assert.ok(first.ok);
      assert.deepEqual(materials(first.payload), listed(true, false));
      assert.equal((await model.refresh()).version, first.version, 'nothing changed: the snapshot is kept');
      fs.mkdirSync(path.join(dir, 'notes'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'notes', 'later.md'), '# Later\n');
      const second = await model.refresh();
      assert.ok(second.ok);
      assert.deepEqual(materials(second.payload), listed(true, true));
    } finally {
      model.close();
    }
  });
});
