/**
 * CI (run by .ci/run through `npm run test:setup`; about a minute): what `npm pack` makes is what a user installs.
 * It packs the repository as npm does (`prepack` builds the production bundles and the library), installs the
 * tarball globally into a scratch prefix and into a scratch project, both from the registry as a user would
 * (zod is the one dependency fetched), and runs what they get: the `loopx` bin on a copy of the demo workspace,
 * `require`/`import` of the library, and a TypeScript consumer type-checked against the shipped declarations.
 */
import * as assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npmChildEnv } from '../../scripts/npm-env.cjs';
import { materializeDemoWorkspace, REPO_ROOT } from '../support/demoWorkspace';

const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
};
/** What runs outside the editor, and nothing else (the extension ships as a .vsix). */
const SHIPPED_FILES = [
  'CHANGELOG.md',
  'LICENSE',
  'README.md',
  'out/cli-main.js',
  'out/cli.js',
  'out/core/index.d.ts',
  'out/core/index.js',
  'out/demoAgent.js',
  'package.json',
];
const NPM_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];

function run(command: string, args: string[], cwd: string): SpawnSyncReturns<string> {
  // A clean environment: this runs inside `npm run test:setup`, whose npm variables a child npm would adopt.
  return spawnSync(command, args, { cwd, encoding: 'utf8', env: npmChildEnv(process.env) });
}
function ok(result: SpawnSyncReturns<string>, what: string): string {
  assert.equal(result.status, 0, `${what} failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

describe('npm pack: the CLI and the library installed from the tarball', function () {
  this.timeout(10 * 60_000);
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'loopx-pack-')));
  let tarball = '';
  let packed: string[] = [];
  let workspace = '';

  before(() => {
    const started = Date.now();
    const output = ok(run('npm', ['pack', '--json', '--pack-destination', scratch], REPO_ROOT), 'npm pack');
    // prepack's build logs ("[build-lib] …") precede the JSON report on stdout: it starts at a line "[".
    const report = JSON.parse(output.slice(output.lastIndexOf('\n[\n') + 1)) as {
      filename: string;
      files: { path: string }[];
    }[];
    tarball = join(scratch, report[0]?.filename ?? '');
    packed = (report[0]?.files ?? []).map((file) => file.path).sort();
    workspace = materializeDemoWorkspace(join(scratch, 'workspace'));
    console.log(`      npm pack took ${((Date.now() - started) / 1000).toFixed(0)} s`);
  });
  after(() => {
    if (!process.env['KEEP_TMP']) rmSync(scratch, { recursive: true, force: true });
  });

  it('packs the bundles, the library with its declarations and the docs, and nothing else', () => {
    assert.equal(tarball, join(scratch, `${manifest.name}-${manifest.version}.tgz`));
    const declarations = packed.filter((file) => file.startsWith('out/core/') && file.endsWith('.d.ts'));
    assert.ok(declarations.length > 20, `the library's declarations are missing: ${declarations.join(', ')}`);
    // Besides the declarations (the type check below proves index.d.ts finds all it imports): exactly the list.
    const others = packed.filter((file) => !declarations.includes(file) || file === 'out/core/index.d.ts');
    assert.deepEqual(others, SHIPPED_FILES);
    assert.deepEqual(
      Object.keys(manifest.dependencies),
      ['zod'],
      'the bundles inline everything but zod (@vscode/l10n is bundled into the extension and its webviews)',
    );
  });

  it('installs globally: `loopx --version` is the package version and `loopx status` reads the demo workspace', () => {
    const prefix = join(scratch, 'prefix');
    ok(run('npm', ['install', '--global', '--prefix', prefix, ...NPM_FLAGS, tarball], scratch), 'npm install -g');
    const loopx = join(prefix, 'bin', 'loopx');
    assert.equal(ok(run(loopx, ['--version'], workspace), 'loopx --version').trim(), `loopx ${manifest.version}`);
    const status = JSON.parse(ok(run(loopx, ['status', '--format', 'json'], workspace), 'loopx status')) as {
      ok: boolean;
      registry: string;
      goal_count: number;
      run_count: number;
    };
    assert.deepEqual(
      { ok: status.ok, registry: status.registry, goals: status.goal_count, runs: status.run_count },
      { ok: true, registry: join(workspace, '.loopx', 'registry.json'), goals: 1, runs: 3 },
    );
  });

  it('installs into a project: require, import and TypeScript types of the library work', () => {
    const project = join(scratch, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), '{ "name": "consumer", "private": true }\n');
    ok(run('npm', ['install', ...NPM_FLAGS, tarball], project), 'npm install <tarball>');
    const registryPath = JSON.stringify(join(workspace, '.loopx', 'registry.json'));
    writeFileSync(
      join(project, 'status.cjs'),
      [
        `const loopx = require('${manifest.name}');`,
        `loopx.getGoalStatus({ registryPath: ${registryPath}, goalId: 'tidy-notes' }).then((s) =>`,
        '  console.log(JSON.stringify({ version: loopx.version, goal: s.goal.goalId, next: s.state.next_action, runs: s.runs.count })));',
        '',
      ].join('\n'),
    );
    assert.deepEqual(JSON.parse(ok(run(process.execPath, ['status.cjs'], project), 'require')), {
      version: manifest.version,
      goal: 'tidy-notes',
      next: 'Add a "Related" section linking notes that share a tag.',
      runs: 3,
    });
    writeFileSync(
      join(project, 'todos.mjs'),
      [
        `import { listTodos } from '${manifest.name}';`,
        `const list = await listTodos({ registryPath: ${registryPath}, goalId: 'tidy-notes', role: 'agent' });`,
        'console.log(list.count);',
        '',
      ].join('\n'),
    );
    assert.match(ok(run(process.execPath, ['todos.mjs'], project), 'import').trim(), /^[1-9]\d*$/);

    // A TypeScript consumer has @types/node; the library's own types (and zod's) come from the install.
    mkdirSync(join(project, 'node_modules', '@types'));
    symlinkSync(join(REPO_ROOT, 'node_modules', '@types', 'node'), join(project, 'node_modules', '@types', 'node'));
    writeFileSync(
      join(project, 'consumer.mts'),
      [
        `import { getGoalStatus, isLoopxError, type GoalStatus } from '${manifest.name}';`,
        "const status: GoalStatus = await getGoalStatus({ registryPath: 'r.json', goalId: 'g' });",
        'const open: number | undefined = status.state?.todos.agent.open_count;',
        'console.log(open, isLoopxError(status));',
        '// @ts-expect-error goalId is a string',
        "await getGoalStatus({ registryPath: 'r.json', goalId: 5 });",
        '',
      ].join('\n'),
    );
    const options = ['--strict', '--noEmit', '--module', 'node16', '--target', 'es2022', '--types', 'node'];
    const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    ok(run(process.execPath, [tsc, ...options, 'consumer.mts'], project), 'tsc on a consumer of the installed types');
  });
});
