import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runOnce } from '../../../src/core/turn/runOnce';
import { startTogether, startWorker } from '../../support/barrier';
import { runLoopx } from '../cli/run';
import { removeTempDirs, tempDir } from '../turn/helpers';
import { laneDemo, laneTurn, laneWorktree, sh } from './helpers';
import { waitUntil } from '../../support/waitFor';

const WORKER = path.join(__dirname, 'fixtures', 'laneWorker.ts');

// Root level: the temp dirs of every suite go at the end of the run (a root before() of another file keeps its build there).
after(removeTempDirs);

describe('lanes: real processes in parallel, and a killed turn', function () {
  this.timeout(120_000);

  it('two lanes editing the same file at once: neither sees the other, each commit holds only its own change, the second merge gate shows the conflict, nothing is lost', async () => {
    const d = laneDemo(['demo', 'codex-main']);
    const barrier = tempDir('loopx-lane-barrier-');
    const workers = await startTogether(
      ['demo', 'codex-main'].map((agentId) => ({
        script: WORKER,
        args: [
          JSON.stringify({
            registryPath: d.registryPath,
            agentId,
            file: 'shared.txt',
            line: `from ${agentId}`,
            barrierDir: barrier,
          }),
        ],
      })),
    );
    // Both agents are inside their turns (worktrees made, about to edit) before either edits.
    await waitUntil(
      () => fs.existsSync(path.join(barrier, 'ready-demo')) && fs.existsSync(path.join(barrier, 'ready-codex-main')),
      'both agents',
    ).catch((error: Error) => {
      throw new Error(
        `${error.message}: ${workers.map((w) => w.stdout().slice(0, 800) + w.stderr().slice(0, 800)).join(' | ')}`,
      );
    });
    fs.writeFileSync(path.join(barrier, 'go'), '');
    const codes = await Promise.all(workers.map((w) => w.exited));
    assert.deepEqual(codes, [0, 0], workers.map((w) => w.stderr()).join('\n'));
    for (const w of workers)
      assert.equal(JSON.parse(w.stdout().trim().split('\n').pop() ?? '{}').status, 'committed', w.stdout());
    for (const agent of ['demo', 'codex-main']) {
      assert.equal(
        fs.readFileSync(path.join(barrier, `seen-${agent}`), 'utf8'),
        '',
        `${agent} saw no edit before its own`,
      );
      assert.equal(
        fs.readFileSync(path.join(barrier, `after-${agent}`), 'utf8'),
        `from ${agent}\n`,
        `${agent} never saw the other's edit`,
      );
      const wt = laneWorktree(d, agent);
      assert.equal(sh(wt, 'show', '--format=', '--name-only', 'HEAD'), 'shared.txt');
      assert.equal(sh(wt, 'show', 'HEAD:shared.txt'), `from ${agent}`);
      assert.equal(sh(wt, 'rev-list', '--count', 'main..HEAD'), '1');
    }
    assert.equal(fs.existsSync(path.join(d.workspace, 'shared.txt')), false, 'the main checkout got neither edit');
    const json = async (args: string[]) =>
      (
        await runLoopx(['--format', 'json', ...args], { cwd: d.workspace, env: { PATH: process.env['PATH'] ?? '' } })
      ).json();
    assert.equal(
      (await json(['lane', 'merge', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--execute']))['status'],
      'merged',
    );
    const second = await json(['lane', 'merge', '--goal-id', 'tidy-notes', '--agent-id', 'codex-main']);
    assert.deepEqual(second['conflicts'], ['shared.txt']);
    assert.equal(sh(d.workspace, 'show', 'loopx/tidy-notes/codex-main:shared.txt'), 'from codex-main', 'nothing lost');
    assert.equal(sh(d.workspace, 'show', 'HEAD:shared.txt'), 'from demo');
  });

  it('kill -9 in the middle of a turn: the lane branch is unchanged and the next turn starts clean (no stray locks)', async () => {
    const d = laneDemo(['demo']);
    assert.equal((await runOnce(laneTurn(d, 'demo', 'shared.txt', 'kept'))).status, 'committed');
    const wt = laneWorktree(d, 'demo');
    const head = sh(wt, 'rev-parse', 'HEAD');
    const worker = startWorker(WORKER, [
      JSON.stringify({
        registryPath: d.registryPath,
        agentId: 'demo',
        file: 'shared.txt',
        line: 'half-done',
        mode: 'hang',
      }),
    ]);
    const hanging = path.join(wt, 'shared.txt.hanging');
    await waitUntil(() => fs.existsSync(hanging), 'the agent to edit and hang');
    const agentPid = Number(fs.readFileSync(hanging, 'utf8'));
    worker.child.kill('SIGKILL');
    await worker.exited;
    process.kill(agentPid, 'SIGKILL');
    // A killed git would leave its index lock behind too.
    fs.writeFileSync(path.join(sh(wt, 'rev-parse', '--absolute-git-dir'), 'index.lock'), '');
    assert.equal(sh(wt, 'rev-parse', 'HEAD'), head, 'the branch did not move');
    assert.match(sh(wt, 'status', '--porcelain'), /shared.txt/, 'the killed turn left its edit behind');

    const next = await runOnce(laneTurn(d, 'demo', 'shared.txt', 'next'));
    assert.equal(next.status, 'committed', JSON.stringify(next).slice(0, 600));
    assert.equal(
      fs.readFileSync(path.join(wt, 'shared.txt'), 'utf8'),
      'kept\nnext\n',
      'started clean: no half-done edit',
    );
    assert.equal(fs.existsSync(hanging), false);
    assert.equal(sh(wt, 'status', '--porcelain'), '');
    assert.doesNotMatch(sh(d.workspace, 'worktree', 'list', '--porcelain'), /locked|prunable/);
    assert.equal(sh(wt, 'rev-list', '--count', `${head}..HEAD`), '1');
  });
});
