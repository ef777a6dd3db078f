import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { isLoopxError } from '../../../src/core/errors';
import { updateRegistry } from '../../../src/core/registry/update';
import { readJson, tempDir, writeJson } from './helpers';

const clock = fixedClock('2026-02-01T08:30:00Z');
const repoRoot = path.join(__dirname, '..', '..', '..');

function runChild(registryPath: string, prefix: string, count: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, 'fixtures', 'addGoal.ts'), registryPath, prefix, String(count)],
      { cwd: repoRoot, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    child.on('error', reject);
    child.on('exit', (code) => resolve(code ?? -1));
  });
}

describe('registry update', () => {
  it('keeps unknown fields, refreshes updated_at and writes only on change', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'registry.json');
    writeJson(file, {
      schema_version: 1,
      updated_at: 'old',
      custom: { nested: [1, 'ü'] },
      goals: [{ id: 'a', extra: true }],
    });

    const unchanged = await updateRegistry(file, () => 'nothing', { operation: 'test', clock });
    assert.equal(unchanged.changed, false);
    assert.equal(unchanged.value, 'nothing');
    assert.equal(readJson(file)['updated_at'], 'old');

    const result = await updateRegistry(
      file,
      (registry) => {
        (registry['goals'] as Record<string, unknown>[]).push({ id: 'b' });
      },
      { operation: 'test', clock },
    );
    assert.equal(result.changed, true);
    assert.equal(result.created, false);
    assert.deepEqual(readJson(file), {
      schema_version: 1,
      updated_at: '2026-02-01T08:30:00Z',
      custom: { nested: [1, 'ü'] },
      goals: [{ id: 'a', extra: true }, { id: 'b' }],
    });
  });

  it('creates a missing registry with a schema_version, and not at all when nothing changes', async () => {
    const dir = tempDir();
    const file = path.join(dir, '.loopx', 'registry.json');
    const idle = await updateRegistry(file, () => undefined, { operation: 'test', clock });
    assert.equal(idle.changed, false);
    assert.equal(fs.existsSync(file), false);
    const created = await updateRegistry(
      file,
      (registry) => {
        registry['goals'] = [];
      },
      { operation: 'test', clock },
    );
    assert.equal(created.created, true);
    assert.deepEqual(readJson(file), { goals: [], schema_version: '0.1', updated_at: '2026-02-01T08:30:00Z' });
  });

  it('never writes a registry it could not parse', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'registry.json');
    fs.writeFileSync(file, '{"goals": [}');
    let called = false;
    await assert.rejects(
      updateRegistry(
        file,
        () => {
          called = true;
        },
        { operation: 'test', clock },
      ),
      (error: unknown) => isLoopxError(error, 'registry_invalid_json'),
    );
    assert.equal(called, false);
    assert.equal(fs.readFileSync(file, 'utf8'), '{"goals": [}');
  });

  it('serializes concurrent writers across processes: no goal is lost', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'registry.json');
    writeJson(file, { goals: [], keep: 'me' });
    const codes = await Promise.all(['p1', 'p2', 'p3', 'p4'].map((prefix) => runChild(file, prefix, 3)));
    assert.deepEqual(codes, [0, 0, 0, 0]);
    const registry = readJson(file);
    const ids = (registry['goals'] as { id: string }[]).map((g) => g.id).sort();
    assert.equal(ids.length, 12);
    assert.deepEqual(ids, ['p1', 'p2', 'p3', 'p4'].flatMap((p) => [0, 1, 2].map((i) => `${p}-${i}`)).sort());
    assert.equal(registry['keep'], 'me');
  });
});
