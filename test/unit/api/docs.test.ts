import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from '../../support/demoWorkspace';
import { exampleToCommonJs, readDoc, runExampleScript, TSX_NODE_ARGS, writeFixture } from './docExamples';

/**
 * docs/api.md cannot drift from the code: every ```ts example in it runs here, as a real Node
 * process against the TypeScript sources, and must print exactly the ```json output below it.
 * (package.test.ts runs the same examples against the built package.)
 */
describe('docs/api.md examples', () => {
  const doc = readDoc();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-doc-'));
  after(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('documents the four scripted operations of the original, and each example has its output', () => {
    const code = doc.examples.map((example) => example.code).join('\n');
    for (const name of [
      'archiveRuntimeGoal',
      'nextActionProjectionWarning',
      'readJson',
      'findRegistryGoal',
      'compactOrchestrationPolicy',
    ]) {
      assert.ok(code.includes(`${name}(`), `no example calls ${name}`);
    }
    assert.ok(
      doc.examples.every((example) => example.expectedOutput.trim() !== ''),
      'an example has an empty output block',
    );
    assert.ok(doc.fixtures.some((fixture) => fixture.path === '.loopx/registry.json'));
  });

  doc.examples.forEach((example, index) => {
    it(`${example.title} (docs/api.md:${example.line}) prints its documented output`, () => {
      const project = path.join(scratch, `example-${index}`);
      writeFixture(project, doc.fixtures);
      const script = path.join(scratch, `example-${index}.cjs`);
      fs.writeFileSync(script, exampleToCommonJs(example.code, path.join(REPO_ROOT, 'src', 'core', 'index.ts')));
      const run = runExampleScript(script, project, TSX_NODE_ARGS);
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.output, example.expectedOutput);
    });
  });
});
