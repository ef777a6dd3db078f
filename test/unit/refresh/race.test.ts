import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { refreshState } from '../../../src/core/refresh/refreshState';
import { parseStateDocument } from '../../../src/core/state/document';
import { readNextAction } from '../../../src/core/state/nextAction';
import { expectSuccess, startTogether } from '../../support/barrier';
import { BASIC_STATE, REPO, refreshProject } from './helpers';

interface Spawned {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

function spawnScript(script: string, args: string[]): Spawned {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO, script), ...args], { cwd: REPO });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, stdout: () => stdout, done };
}

function waitForLine(spawned: Spawned, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (spawned.stdout().split('\n').includes(line)) {
        spawned.child.stdout.off('data', check);
        resolve();
      }
    };
    spawned.child.stdout.on('data', check);
    void spawned.done.then((result) =>
      reject(new Error(`worker exited ${result.code} before printing ${line}: ${result.stderr}`)),
    );
    check();
  });
}

const REFRESH_WORKER = 'test/unit/refresh/refreshWorker.ts';
const EDITOR = 'test/unit/state/concurrentAdder.ts';

describe('refresh-state racing another process', function () {
  this.timeout(120000);

  it('case R3: another process edits the state file after refresh read it: refused with a clear error, the edit kept, nothing recorded', async () => {
    const p = refreshProject(BASIC_STATE);
    const refresher = spawnScript(REFRESH_WORKER, ['step', p.registryPath, p.dir, 'new act']);
    await waitForLine(refresher, 'planned');

    const editor = await spawnScript(EDITOR, [p.statePath, 'editor', '1']).done;
    assert.equal(editor.code, 0, editor.stderr);

    refresher.child.stdin.write('go\n');
    const result = await refresher.done;
    assert.equal(result.code, 0, result.stderr);
    const outcome = JSON.parse(result.stdout.trim().split('\n').pop() ?? '{}') as {
      outcome: string;
      code?: string;
      message?: string;
    };
    assert.equal(outcome.outcome, 'refused');
    assert.equal(outcome.code, 'state_changed_concurrently');
    assert.match(
      outcome.message ?? '',
      /changed while refresh-state was writing the Next Action .*nothing was written and no run was recorded\. Retry from the current state/,
    );

    const text = p.readState();
    assert.match(text, /editor todo 0/, "the other process's edit is kept");
    assert.equal(readNextAction(parseStateDocument(text)), 'old');
    assert.deepEqual(p.indexRows(), []);

    // The retry the message asks for works from the current state and keeps both edits.
    await refreshState(await p.goal(), p.request({ nextAction: 'new act' }), {
      clock: fixedClock('2026-07-30T00:00:00Z'),
    });
    const retried = p.readState();
    assert.match(retried, /editor todo 0/);
    assert.equal(readNextAction(parseStateDocument(retried)), 'new act');
    assert.equal(p.indexRows().length, 1);
  });

  it('refreshes and todo edits racing freely: no edit is lost and every refresh either lands or is refused', async () => {
    const p = refreshProject(BASIC_STATE);
    const adds = 30;
    const refreshes = 20;
    const [refresher, editor] = await startTogether([
      { script: path.join(REPO, REFRESH_WORKER), args: ['loop', p.registryPath, p.dir, String(refreshes)] },
      { script: path.join(REPO, EDITOR), args: [p.statePath, 'racer', String(adds)] },
    ]);
    assert.ok(refresher && editor);
    await Promise.all([expectSuccess(refresher), expectSuccess(editor)]);
    const { succeeded, conflicts } = JSON.parse(refresher.stdout().trim()) as {
      succeeded: string[];
      conflicts: string[];
    };
    assert.equal(succeeded.length + conflicts.length, refreshes);
    for (const message of conflicts)
      assert.match(message, /changed while refresh-state was .*Retry from the current state/);

    const text = p.readState();
    for (let i = 0; i < adds; i++) assert.ok(text.includes(`racer todo ${i}\n`), `todo ${i} was lost`);
    assert.equal(p.indexRows().length, succeeded.length, 'one run per refresh that landed, none for refused ones');
    const route = readNextAction(parseStateDocument(text));
    assert.ok(
      route !== null && (succeeded.length === 0 ? route === 'old' : succeeded.includes(route)),
      `unexpected route ${String(route)}`,
    );
  });
});
