import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { inWriteScope, laneOverlaps } from '../../../src/core/lanes/merge';
import { runLoopx } from '../cli/run';
import { removeTempDirs, demo } from '../turn/helpers';

// Root level: the temp dirs of every suite go at the end of the run (a root before() of another file keeps its build there).
after(removeTempDirs);

describe('lanes: configuration and overlap rules', () => {
  it('agent configure --isolation writes and clears the profile isolation, previewed first', async () => {
    const d = demo();
    const run = async (...args: string[]) =>
      (
        await runLoopx(
          [
            '--format',
            'json',
            'agent',
            'configure',
            '--goal-id',
            'tidy-notes',
            '--agent-id',
            'demo',
            '--preset',
            'demo',
            ...args,
          ],
          {
            cwd: d.workspace,
            env: { PATH: process.env['PATH'] ?? '' },
          },
        )
      ).json();
    const profile = () =>
      (
        JSON.parse(fs.readFileSync(d.registryPath, 'utf8')) as {
          goals: { coordination: { agent_profiles: Record<string, Record<string, unknown>> } }[];
        }
      ).goals[0]?.coordination.agent_profiles['demo'];
    const preview = await run('--isolation', 'worktree');
    assert.equal(preview['changed'], true);
    assert.equal(preview['isolation_after'], 'worktree');
    assert.equal(profile()?.['isolation'], undefined, 'a preview writes nothing');
    const written = await run('--isolation', 'worktree', '--execute');
    assert.equal(written['verified'], true);
    assert.equal(profile()?.['isolation'], 'worktree');
    assert.deepEqual(profile()?.['executor'], { preset: 'demo' });
    await run('--isolation', 'shared', '--execute');
    assert.equal(profile()?.['isolation'], undefined);
  });

  it('flags files two lanes change, and matches a lease write scope as path, folder or glob', () => {
    assert.deepEqual(
      laneOverlaps([
        { agent_id: 'a', pending_files: ['src/x.ts', 'README.md'] },
        { agent_id: 'b', pending_files: ['src/x.ts'] },
        { agent_id: 'c', pending_files: ['docs/y.md'] },
      ]),
      { 'src/x.ts': ['a', 'b'] },
    );
    assert.equal(inWriteScope('src/core/a.ts', 'src/core'), true);
    assert.equal(inWriteScope('src/corefile.ts', 'src/core'), false);
    assert.equal(inWriteScope('src/core/deep/a.ts', 'src/**/*.ts'), true);
    assert.equal(inWriteScope('src/a.md', 'src/*.ts'), false);
    assert.equal(inWriteScope('README.md', 'README.md'), true);
  });
});
