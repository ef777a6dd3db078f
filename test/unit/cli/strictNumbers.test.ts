import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDecimal } from '../../../src/core/numbers';
import { connectedProject } from '../agents/helpers';
import { makeWorkspace, NOW } from '../quota/helpers';
import { runLoopx } from './run';

/** sha256 of every file under `dir`: equal before and after means the command wrote nothing. */
function hashes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    if (entry.isFile())
      out[path.relative(dir, full)] = createHash('sha256').update(fs.readFileSync(full)).digest('hex');
  }
  return out;
}

const BAD = ['0x10', '0o7', '1e3', '-0', '', ' 1', '1 ', '010', '+1', '1.', '.5', 'NaN', 'Infinity', '1_0'];

describe('numeric CLI options are parsed strictly (defect 8)', () => {
  it('parseDecimal accepts plain decimal only, in range', () => {
    assert.equal(parseDecimal('0', '--x'), 0);
    assert.equal(parseDecimal('0.25', '--x'), 0.25);
    assert.equal(parseDecimal('12', '--x', { integer: true, min: 1 }), 12);
    for (const raw of BAD) assert.throws(() => parseDecimal(raw, '--x'), /--x must be a number/, JSON.stringify(raw));
    assert.throws(() => parseDecimal('1.5', '--n', { integer: true }), /--n must be a whole number/);
    assert.throws(() => parseDecimal('0', '--n', { min: 1 }), /at least 1/);
    assert.throws(() => parseDecimal('70000', '--port', { integer: true, min: 0, max: 65535 }), /from 0 to 65535/);
    assert.throws(() => parseDecimal('99999999999999999999', '--n', { integer: true }), /whole number/);
  });

  it('configure-goal --execute with a bad number exits 2 naming the option, and the files are unchanged', async () => {
    const { project, registry } = connectedProject();
    for (const [flag, value] of [
      ['--quota-compute', '-0'],
      ['--quota-compute', '0x1'],
      ['--quota-compute', ''],
      ['--quota-compute', '1e-1'],
      ['--quota-window-hours', '0x18'],
      ['--quota-window-hours', ' 24'],
      ['--max-children', '0b11'],
      ['--max-children', '2.0'],
    ] as const) {
      const before = hashes(project);
      const run = await runLoopx([
        '--registry',
        registry,
        'configure-goal',
        '--goal-id',
        'g',
        flag,
        value,
        '--execute',
      ]);
      assert.equal(run.code, 2, `${flag} ${JSON.stringify(value)}: ${run.stdout}${run.stderr}`);
      assert.match(run.stderr, new RegExp(flag), `${flag} ${JSON.stringify(value)}`);
      assert.deepEqual(hashes(project), before, `${flag} ${JSON.stringify(value)}`);
    }
  });

  it('quota spend-slot --execute with a bad number exits 2 naming the option, and the files are unchanged', async () => {
    const ws = makeWorkspace();
    const base = ['--registry', ws.registryPath, 'quota', 'spend-slot', '--goal-id', 'g', '--agent-id', 'agent-a'];
    const rest = ['--todo-id', 'todo_parser', '--turn-instance-id', 't1', '--execute'];
    for (const [flag, value] of [
      ['--slots', '0x10'],
      ['--slots', '1e1'],
      ['--slots', '0'],
      ['--slots', ''],
      ['--tokens', '0x10'],
      ['--tokens', '1.5'],
      ['--cost-usd', '-0'],
      ['--cost-usd', '1e-2'],
      ['--turn-minutes', 'Infinity'],
    ] as const) {
      const before = hashes(ws.dir);
      const run = await runLoopx([...base, flag, value, ...rest], { cwd: ws.dir, env: { HOME: ws.dir }, now: NOW });
      assert.equal(run.code, 2, `${flag} ${JSON.stringify(value)}: ${run.stdout}${run.stderr}`);
      assert.match(run.stderr, new RegExp(flag), `${flag} ${JSON.stringify(value)}`);
      assert.deepEqual(hashes(ws.dir), before, `${flag} ${JSON.stringify(value)}`);
    }
  });

  it('read-only and server options reject the same spellings with exit 2', async () => {
    const { registry } = connectedProject();
    for (const args of [
      ['status', '--limit', '0x5'],
      ['status', '--limit', '1e2'],
      ['global-todos', '--limit', '010'],
      ['serve-status', '--port', '0x50'],
      ['serve-status', '--port', '99999'],
      ['turn', 'loop', '--goal-id', 'g', '--agent-id', 'a', '--max-turns', '0x2'],
      ['turn', 'loop', '--goal-id', 'g', '--agent-id', 'a', '--cadence-seconds', '1e3'],
    ]) {
      const run = await runLoopx(['--registry', registry, ...args]);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stdout}${run.stderr}`);
      assert.match(run.stderr, /must be a (whole )?number/, args.join(' '));
    }
  });
});
