import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { refreshState } from '../../../src/core/refresh/refreshState';
import {
  captureDeliveryWorkspace,
  deliveryWorkspaceCausality,
  repositoryIdentity,
} from '../../../src/core/snapshots/deliveryWorkspace';
import { tempDir } from '../../support/tempDir';
import { refreshProject } from '../refresh/helpers';

/**
 * Settlement evidence the original accepts (issue 30; test/mixed/settlement.test.ts runs it against the original):
 * an accountable writeback records the checkout's delivery workspace snapshot, as the original's refresh-state does,
 * because the original's `quota spend-slot` of the turn refuses without it.
 */

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();
}

function checkout(origin: string | null): string {
  const dir = tempDir('loopx-delivery-ws-');
  git(dir, 'init', '-q');
  if (origin !== null) git(dir, 'remote', 'add', 'origin', origin);
  git(dir, 'commit', '-q', '--allow-empty', '-m', 'init');
  return dir;
}

const STATE = (meta: string): string =>
  [
    '---',
    'status: active',
    'updated_at: 2026-07-01T00:00:00+00:00',
    '---',
    '## Agent Todo',
    '- [ ] [P1] Do the work.',
    `  <!-- loopx:todo todo_id=todo_work status=open task_class=advancement_task${meta} -->`,
    '## Next Action',
    '- Do the work.',
    '',
  ].join('\n');

describe('delivery workspace snapshots (settlement evidence the original accepts)', () => {
  it("names a repository by its origin as the original does: credential-free, transport and '.git' aside", () => {
    for (const [remote, identity] of [
      ['https://github.com/Example/Repo.git', 'git:github.com/Example/Repo'],
      ['git@github.com:example/repo.git', 'git:github.com/example/repo'],
      ['ssh://git@GitHub.com:22/example/repo', 'git:github.com/example/repo'],
      ['https://host.example:8443/a//b/', 'git:host.example:8443/a/b'],
      ['git:github.com/example/repo', 'git:github.com/example/repo'],
    ] as const)
      assert.equal(repositoryIdentity(remote), identity, remote);
    for (const refused of [
      '',
      'file:///srv/repo.git',
      'https://user:secret@host/x.git',
      'https://host/x?token=1',
      '/srv/repo',
    ])
      assert.equal(repositoryIdentity(refused), null, refused);
  });

  it('classifies a todo as the original: a write contract requires the workspace, a non-delivery one does not', () => {
    const of = (meta: Record<string, string>) => deliveryWorkspaceCausality({ todoId: 'todo_x', meta }).requirement;
    assert.equal(of({ required_write_scopes: 'src/**' }), 'required');
    assert.equal(of({ task_repository: 'https://github.com/example/repo' }), 'required');
    assert.equal(of({ required_capabilities: 'shell,filesystem-write' }), 'required');
    assert.equal(of({ continuation_policy: 'same_agent_non_delivery' }), 'not_required');
    assert.equal(of({ continuation_policy: 'same_agent_non_delivery', required_write_scopes: 'docs/**' }), 'required');
    // Unsafe scopes are no scope (the original's normalize_required_write_scopes drops them).
    assert.equal(of({ required_write_scopes: '/etc/**,../up' }), 'unknown');
    assert.equal(of({}), 'unknown');
  });

  it("captures the checkout's origin and kind; none without an origin or outside git", async () => {
    const main = checkout('https://github.com/example/repo.git');
    assert.deepEqual(await captureDeliveryWorkspace(main, false), {
      schema_version: 'delivery_workspace_v0',
      task_repository: 'git:github.com/example/repo',
      repository_source: 'current_git_origin',
      workspace_kind: 'canonical_checkout',
      peer_independent_worktree_required: false,
    });
    const linked = path.join(tempDir('loopx-delivery-wt-'), 'lane');
    git(main, 'worktree', 'add', '-q', linked);
    assert.equal((await captureDeliveryWorkspace(linked, true))?.workspace_kind, 'independent_git_worktree');
    assert.equal(await captureDeliveryWorkspace(checkout(null), false), null);
    assert.equal(await captureDeliveryWorkspace(tempDir('loopx-no-git-'), false), null);
  });

  it('an accountable turn writeback records the snapshot on its run and index row; other runs do not', async () => {
    const clock = fixedClock('2026-07-30T23:59:00Z');
    const p = refreshProject(STATE(' required_write_scopes=src/**'), { agents: ['a'] });
    const repo = checkout('https://github.com/example/repo.git');
    const turn = { agentId: 'a', todoId: 'todo_work', turnInstanceId: 'turn-1', deliveryWorkspacePath: repo };
    const payload = await refreshState(await p.goal(), p.request({ ...turn, deliveryOutcome: 'outcome_progress' }), {
      clock,
    });
    assert.equal(payload.delivery_workspace?.task_repository, 'git:github.com/example/repo');
    const row = p.indexRows().at(-1);
    assert.deepEqual(row?.['delivery_workspace'], payload.delivery_workspace);
    const record = JSON.parse(fs.readFileSync(payload.json_path, 'utf8')) as Record<string, unknown>;
    assert.deepEqual(record['delivery_workspace'], payload.delivery_workspace);

    // Not accountable (no slot to spend): no snapshot.
    const gap = await refreshState(
      await p.goal(),
      p.request({ ...turn, turnInstanceId: 'turn-2', deliveryOutcome: 'outcome_gap' }),
      {
        clock,
      },
    );
    assert.equal(gap.delivery_workspace, undefined);
    assert.equal(p.indexRows().at(-1)?.['delivery_workspace'], undefined);
  });

  it('a todo that explicitly writes nothing gets no snapshot; a multi-agent goal asks for an independent worktree', async () => {
    const clock = fixedClock('2026-07-30T23:59:00Z');
    const repo = checkout('https://github.com/example/repo.git');
    const quiet = refreshProject(STATE(' continuation_policy=same_agent_non_delivery'), { agents: ['a'] });
    const none = await refreshState(
      await quiet.goal(),
      quiet.request({
        agentId: 'a',
        todoId: 'todo_work',
        deliveryOutcome: 'outcome_progress',
        deliveryWorkspacePath: repo,
      }),
      { clock },
    );
    assert.equal(none.delivery_workspace, undefined);

    const peers = refreshProject(STATE(' required_write_scopes=src/**'), { agents: ['a', 'b'] });
    const peer = await refreshState(
      await peers.goal(),
      peers.request({
        agentId: 'a',
        todoId: 'todo_work',
        deliveryOutcome: 'outcome_progress',
        deliveryWorkspacePath: repo,
      }),
      { clock },
    );
    assert.equal(peer.delivery_workspace?.peer_independent_worktree_required, true);
  });
});
