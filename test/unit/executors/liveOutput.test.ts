import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runBoundedProcess } from '../../../src/core/executors/process';
import { tempDir } from './helpers';

/**
 * Live output (what the editor's turn terminal shows): the process's text reaches the observer while
 * the process still runs. The agent below prints a line, then waits for a barrier file that the test
 * creates only after the observer has seen that line, so buffered-until-exit output cannot pass.
 */
const AGENT = `
const fs = require('fs');
const barrier = process.argv[1];
process.stdout.write('first line\\n');
process.stdout.write(Buffer.from([0xe2, 0x82]));
process.stderr.write('a note on stderr\\n');
const giveUp = setTimeout(() => { clearInterval(wait); process.stdout.write('no barrier\\n'); }, 15000);
const wait = setInterval(() => {
  if (!fs.existsSync(barrier)) return;
  clearInterval(wait);
  clearTimeout(giveUp);
  process.stdout.write(Buffer.from([0xac]));
  process.stdout.write(' after the barrier\\n');
}, 10);
`;

describe('live process output', () => {
  it('streams stdout and stderr to the observer while the process runs, whole characters only', async () => {
    const dir = tempDir('loopx-live-');
    const barrier = path.join(dir, 'go');
    const seen: { text: string; stream: string }[] = [];
    let sawFirstBeforeExit = false;
    let exited = false;
    const run = runBoundedProcess({
      argv: [process.execPath, '-e', AGENT, barrier],
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '' },
      timeoutMs: 60_000,
      onOutput: (text, stream) => {
        seen.push({ text, stream });
        const stdout = seen
          .filter((s) => s.stream === 'stdout')
          .map((s) => s.text)
          .join('');
        const stderr = seen
          .filter((s) => s.stream === 'stderr')
          .map((s) => s.text)
          .join('');
        if (stdout.includes('first line') && stderr.includes('a note') && !fs.existsSync(barrier)) {
          sawFirstBeforeExit = !exited;
          fs.writeFileSync(barrier, '');
        }
      },
    });
    const result = await run.finally(() => {
      exited = true;
    });
    assert.equal(result.end, 'exited');
    assert.equal(sawFirstBeforeExit, true, 'the first line arrived only after the process ended');
    const stdout = seen
      .filter((s) => s.stream === 'stdout')
      .map((s) => s.text)
      .join('');
    assert.equal(stdout, 'first line\n€ after the barrier\n');
    assert.ok(!stdout.includes('\ufffd'), 'a character split across chunks was broken');
    assert.equal(result.stdout.toString('utf8'), stdout, 'the captured stdout differs from what was streamed');
  });

  it('a throwing observer never breaks the process run', async () => {
    const dir = tempDir('loopx-live-');
    const result = await runBoundedProcess({
      argv: [process.execPath, '-e', 'process.stdout.write("hello\\n")'],
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '' },
      timeoutMs: 60_000,
      onOutput: () => {
        throw new Error('observer bug');
      },
    });
    assert.equal(result.end, 'exited');
    assert.equal(result.stdout.toString('utf8'), 'hello\n');
  });
});
