import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isLoopxError } from '../../../src/core/errors';
import {
  findRegistryGoal,
  rawRegistryGoalsById,
  readRegistry,
  readRegistrySync,
  registryGoalEntries,
  registryGoals,
  registryGoalsOfDocument,
} from '../../../src/core/registry/read';
import { tempDir, writeJson } from './helpers';

describe('registry reading', () => {
  it('reads a missing file as an empty registry', async () => {
    const dir = tempDir();
    assert.deepEqual(await readRegistry(path.join(dir, 'none.json')), {});
    assert.deepEqual(readRegistrySync(path.join(dir, 'none.json')), {});
  });

  it('rejects bad JSON naming the file, line and column, and leaves the file untouched', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'registry.json');
    const text = '{\n  "goals": [\n    {"id": "a",}\n  ]\n}\n';
    fs.writeFileSync(file, text);
    await assert.rejects(readRegistry(file), (error: unknown) => {
      assert.ok(isLoopxError(error, 'registry_invalid_json'));
      assert.match(error.message, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:16: `));
      assert.match(error.message, /Fix the JSON by hand/);
      assert.deepEqual({ ...error.details, reason: undefined }, { file, line: 3, column: 16, reason: undefined });
      assert.match(error.message, /\(unexpected "}"\)/);
      return true;
    });
    assert.throws(
      () => readRegistrySync(file),
      (error: unknown) => isLoopxError(error, 'registry_invalid_json'),
    );
    assert.equal(fs.readFileSync(file, 'utf8'), text);
  });

  it('reports a truncated file at its end', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'registry.json');
    fs.writeFileSync(file, '{\n  "goals": [');
    await assert.rejects(
      readRegistry(file),
      (error: unknown) => isLoopxError(error) && error.message.startsWith(`${file}:2:13:`),
    );
  });

  it('rejects a non-object root with the original message', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'registry.json');
    writeJson(file, [1]);
    await assert.rejects(
      readRegistry(file),
      (error: unknown) =>
        isLoopxError(error, 'registry_not_object') && error.message.startsWith('registry root must be a JSON object'),
    );
  });

  it('lists goals tolerantly and finds them by string id', () => {
    const registry = {
      goals: [{ id: 7, repo: '/p' }, 'junk', { id: '' }, { domain: 'x' }, { id: 'b' }, { id: 'b', second: true }],
    };
    assert.deepEqual(
      registryGoals(registry).map((g) => g.id),
      ['7', 'b', 'b'],
    );
    assert.deepEqual(registryGoals({ goals: { a: 1 } }), []);
    assert.deepEqual(registryGoals(null), []);
    assert.equal(findRegistryGoal(registry, '7')?.repo, '/p');
    assert.equal(findRegistryGoal(registry, 7)?.repo, '/p');
    assert.equal(findRegistryGoal(registry, 'b')?.['second'], undefined);
    assert.equal(findRegistryGoal(registry, 'zz'), undefined);
  });
});

describe('registry goals per document (one parse for status)', () => {
  const registry = (): Record<string, unknown> => ({
    goals: [
      { id: 'a', status: 'active' },
      'not an object',
      { id: '' },
      { id: 7, display_name: 'seven' },
      { id: 'a', status: 'second a' },
      { id: 'b', status: 3 },
      { id: 'c', coordination: { registered_agents: ['x'] } },
    ],
  });

  it('gives what registryGoals and rawRegistryGoalsById give, order and duplicates as they keep them', () => {
    const doc = registry();
    assert.deepEqual(registryGoalsOfDocument(doc), registryGoals(doc));
    assert.deepEqual([...registryGoalEntries(doc)], [...rawRegistryGoalsById(doc)]);
    assert.equal(
      registryGoalEntries(doc).get('a'),
      (doc['goals'] as unknown[])[0],
      'the raw entry itself, first of its id',
    );
    assert.deepEqual(registryGoalsOfDocument({ goals: 'no list' }), []);
    assert.deepEqual(registryGoalsOfDocument({}), []);
  });

  it('is the same array for the same document, and a new parse for another document', () => {
    const doc = registry();
    assert.equal(registryGoalsOfDocument(doc), registryGoalsOfDocument(doc));
    const other = registry();
    (other['goals'] as unknown[]).push({ id: 'd' });
    assert.deepEqual(
      registryGoalsOfDocument(other).map((goal) => goal.id),
      ['a', '7', 'a', 'b', 'c', 'd'].filter((id) => registryGoals(other).some((goal) => goal.id === id)),
    );
    assert.equal(registryGoalsOfDocument(other).at(-1)?.id, 'd');
  });
});
