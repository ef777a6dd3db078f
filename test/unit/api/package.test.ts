import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as loopx from '../../../src/core/index';
import { CRASH_AT_PHASE_ENV } from '../../../src/core/turn/crashHook';
import { REPO_ROOT } from '../../support/demoWorkspace';
import { exampleToCommonJs, PACKAGE_NAME, readDoc, runExampleScript, writeFixture } from './docExamples';

/**
 * The library as a consumer gets it: a project OUTSIDE the repository with the package installed
 * in `node_modules/loopx-vscode` — the repository's real package.json (linked, so its `exports`
 * are what is tested), `out/core` built there by `node scripts/build-lib.mjs --outdir`, and the
 * package's dependencies — whose plain CommonJS scripts `require('loopx-vscode')` and whose
 * TypeScript is checked against the emitted declarations with the repository's tsc. (The build
 * goes to the test's own folder: scripts/build.mjs empties the shared out/ whenever anyone rebuilds.)
 */
describe('the built library, required from outside the repository', function () {
  this.timeout(180_000);
  const consumer = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-consumer-')));
  const doc = readDoc();

  const installed = path.join(consumer, 'node_modules', PACKAGE_NAME);

  before(() => {
    fs.mkdirSync(installed, { recursive: true });
    execFileSync(
      process.execPath,
      [path.join(REPO_ROOT, 'scripts', 'build-lib.mjs'), '--outdir', path.join(installed, 'out', 'core')],
      { cwd: REPO_ROOT, stdio: 'pipe' },
    );
    fs.symlinkSync(path.join(REPO_ROOT, 'package.json'), path.join(installed, 'package.json'), 'file');
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(installed, 'node_modules'), 'dir');
    // Only for the type check: a TypeScript consumer of a Node library has @types/node.
    fs.symlinkSync(
      path.join(REPO_ROOT, 'node_modules', '@types'),
      path.join(consumer, 'node_modules', '@types'),
      'dir',
    );
  });
  after(() => fs.rmSync(consumer, { recursive: true, force: true }));

  function runNode(script: string, source: string): { status: number | null; stdout: string; stderr: string } {
    const file = path.join(consumer, script);
    fs.writeFileSync(file, source);
    const result = spawnSync(process.execPath, [file], {
      cwd: consumer,
      encoding: 'utf8',
      env: { PATH: process.env['PATH'] ?? '' },
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  it('carries no test hook: the crash hook and its variable name are compiled out of the library', () => {
    const files = fs.readdirSync(path.join(installed, 'out', 'core'), { recursive: true }).map(String);
    assert.ok(files.includes('index.js'), files.join(', '));
    const carriers = files.filter((file) => {
      const full = path.join(installed, 'out', 'core', file);
      return fs.statSync(full).isFile() && fs.readFileSync(full, 'utf8').includes(CRASH_AT_PHASE_ENV);
    });
    assert.deepEqual(carriers, [], `${CRASH_AT_PHASE_ENV} ships in the library`);
  });

  it('resolves require("loopx-vscode") to out/core/index.js through package.json "exports"', () => {
    const run = runNode('resolve.cjs', `console.log(require.resolve(${JSON.stringify(PACKAGE_NAME)}));\n`);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(
      run.stdout.trim(),
      path.join(installed, 'out', 'core', 'index.js'),
      'package.json must map "." to the library: "exports": { ".": { "types": "./out/core/index.d.ts", "default": "./out/core/index.js" }, "./package.json": "./package.json" }',
    );
  });

  it('exports the same surface as src/core/index.ts, with working LoopxError instances', () => {
    const run = runNode(
      'surface.cjs',
      [
        `const loopx = require(${JSON.stringify(PACKAGE_NAME)});`,
        'let refusal = null;',
        'try { loopx.compactOrchestrationPolicy("x"); } catch (error) { refusal = { isLoopxError: error instanceof loopx.LoopxError && loopx.isLoopxError(error, "invalid_argument"), code: error.code }; }',
        'console.log(JSON.stringify({ keys: Object.keys(loopx).sort(), version: loopx.version, refusal }));',
      ].join('\n'),
    );
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), {
      keys: Object.keys(loopx).sort(),
      version: loopx.version,
      refusal: { isLoopxError: true, code: 'invalid_argument' },
    });
  });

  it('can be imported by name from an ES module', () => {
    const run = runNode(
      'import.mjs',
      [
        `import { compactOrchestrationPolicy, version } from ${JSON.stringify(PACKAGE_NAME)};`,
        'console.log(JSON.stringify({ version, policy: compactOrchestrationPolicy({ allowed: true, max_children: 2 }) }));',
      ].join('\n'),
    );
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), {
      version: loopx.version,
      policy: { mode: 'multi_subagent', spawn_allowed: true, max_children: 2 },
    });
  });

  doc.examples.forEach((example, index) => {
    it(`runs the docs/api.md example "${example.title}" with plain node and prints the documented output`, () => {
      const project = path.join(consumer, `project-${index}`);
      writeFixture(project, doc.fixtures);
      const script = path.join(consumer, `example-${index}.cjs`);
      fs.writeFileSync(script, exampleToCommonJs(example.code, PACKAGE_NAME));
      const run = runExampleScript(script, project);
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.output, example.expectedOutput);
    });
  });

  it('type-checks a TypeScript consumer and the docs/api.md examples against the emitted declarations', () => {
    const files = ['consumer.ts'];
    fs.writeFileSync(
      path.join(consumer, 'consumer.ts'),
      [
        `import { archiveRuntimeGoal, getGoalStatus, isLoopxError, listTodos, LoopxError, TodoListResultSchema, type ArchiveRuntimeResult, type GoalStatus } from '${PACKAGE_NAME}';`,
        '',
        'export async function main(): Promise<void> {',
        "  const archived: ArchiveRuntimeResult = await archiveRuntimeGoal({ registryPath: '.loopx/registry.json', goalId: 'g', execute: false });",
        '  const where: string = archived.archive_path;',
        '  const dryRun: boolean = archived.dry_run;',
        "  const status: GoalStatus = await getGoalStatus({ registryPath: 'r.json', goalId: 'g' });",
        '  const open: number | undefined = status.state?.todos.agent.open_count;',
        "  const todos = TodoListResultSchema.parse(await listTodos({ registryPath: 'r.json', goalId: 'g', role: 'agent' }));",
        '  const firstId: string | undefined = todos.todos[0]?.todo_id;',
        '  console.log(where, dryRun, open, firstId);',
        '  // @ts-expect-error goalId is a string',
        "  await archiveRuntimeGoal({ registryPath: 'r.json', goalId: 5 });",
        '  // @ts-expect-error role is "user" or "agent"',
        "  await listTodos({ registryPath: 'r.json', goalId: 'g', role: 'owner' });",
        '  try {',
        "    await archiveRuntimeGoal({ registryPath: 'r.json', goalId: 'g' });",
        '  } catch (error) {',
        '    if (isLoopxError(error)) { const code: string = error.code; console.log(code, error instanceof LoopxError); }',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
    doc.examples.forEach((example, index) => {
      // .mts: the examples use top-level await, which TypeScript allows in ES modules.
      const name = `example-${index}.mts`;
      fs.writeFileSync(path.join(consumer, name), `${example.code}\nexport {};\n`);
      files.push(name);
    });
    fs.writeFileSync(
      path.join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'Node16',
          moduleResolution: 'Node16',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
        },
        files,
      }),
    );
    const tsc = spawnSync(
      process.execPath,
      [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(consumer, 'tsconfig.json')],
      { cwd: consumer, encoding: 'utf8' },
    );
    assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
  });
});
