import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

import {
  coreFolderGraph,
  coreFolderOf,
  folderCycles,
  goalFileReaderImports,
  goalLookupFunctions,
  goalTypes,
  importsOf,
  optionalPreReadParameters,
  persistentCacheFileNames,
  persistentCacheFileHomes,
  goalFileCacheHomes,
  goalFileCachesByKind,
  reachable,
  ROOT,
  sourceFiles,
} from './architectureRules';

const root = join(__dirname, '..', '..');

/** Folders of user-facing surfaces: they call operations and render results. */
const SURFACES = [
  'src/cli',
  'src/commands',
  'src/views',
  'src/chat',
  'src/webviews',
  'src/statusBar',
  'src/lm',
  'src/workspace',
  'src/server',
  'src/api',
  'src/review',
  'src/terminal',
];
/**
 * What a surface may import from src/core besides types. `core/agentTools` is the operations as agent
 * tools (and `loopx mcp`'s server over them): a call there runs an operation too.
 */
const ALLOWED_CORE = [
  'src/core/ops',
  'src/core/agentTools',
  'src/core/commands',
  'src/core/errors',
  'src/core/version',
];

/**
 * Exported functions below `ops/` that still look a goal up by `(registryPath, goalId)` (issue 31: they
 * should take a `GoalRef` or a loaded `GoalSnapshot`). Shrink this list; never grow it.
 */
const GOAL_LOOKUP_OFFENDERS: readonly string[] = [];

/** Where a goal's files are read for deciding: the goal loader, and the stores that own each file (their locked re-reads). */
const GOAL_READER_HOMES = ['registry/', 'state/', 'runtime/', 'quota/', 'leases/', 'goal/'];
/** Code outside the loader and the stores that still imports a goal-file reader (issue 31). Shrink this list; never grow it. */
const GOAL_READER_OFFENDERS: readonly string[] = [];

/**
 * Optional pre-read parameters below `ops/` (issue 31: "as the caller already read it: not read again"): a second
 * way in beside reading, with "wins over" rules between them. Load the goal once (`GoalLoader`) and pass what was
 * loaded as a required input instead. Shrink this list; never grow it.
 */
const PRE_READ_OFFENDERS: readonly string[] = [];

/**
 * The goal type below `ops/` (issue 31: "goal-ish types below ops: one"): the `GoalRef` a goal is located as once,
 * and the typed registry entry it carries. Code takes a `GoalRef`, a `Pick` of it or a loaded `GoalSnapshot`.
 */
const GOAL_TYPES: readonly string[] = ['registry/goalRef.ts: GoalRef', 'registry/schema.ts: RegistryGoal'];
/** Goal types of their own that remain below `ops/` (issue 31). Shrink this list; never grow it. */
const GOAL_TYPE_OFFENDERS: readonly string[] = [];

/**
 * `core/todo` holds the todo rules once (resume conditions, which todo is runnable, the per-todo contract, the
 * attention route): pure functions over the parsed state file, so it imports only the folders of the files it
 * reads the parse of, and the deciders and views (`scheduling/`, `status/`, `turn/`, `ops/`) import it.
 */
const TODO_RULE_IMPORTS: readonly string[] = ['registry', 'runtime', 'state'];
/** A resume condition parsed (`todo_done:(…)`, `startsWith('todo_done:')`, `` `todo_done:${id}` ``): a reading of it. */
const RESUME_CONDITION_READ = /todo_done:\(|['"`]todo_done:['"`]|`todo_done:\$\{/;

/** The one persistent cache file LoopX writes (issue 31 merged status's and the run index's): `<runtime>/cache/status-cache.json`. */
const PERSISTENT_CACHE_FILES: readonly string[] = ['status-cache.json'];

describe('architecture', () => {
  it('src/core never imports the VS Code API (also enforced by the ESLint rule)', () => {
    const files = readdirSync(join(root, 'src', 'core'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.ts'));
    assert.ok(files.length > 3, 'expected core sources');
    const offenders = files.filter((f) =>
      /(from\s+['"]vscode['"]|require\(\s*['"]vscode['"]\s*\)|import\(\s*['"]vscode['"]\s*\))/.test(
        readFileSync(join(root, 'src', 'core', f), 'utf8'),
      ),
    );
    assert.deepEqual(offenders, []);
  });

  it('src/core imports only src/core, Node built-ins and npm packages (never the surfaces)', () => {
    const coreDir = join(root, 'src', 'core');
    const files = readdirSync(coreDir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.ts'));
    const outside: string[] = [];
    for (const file of files) {
      const source = readFileSync(join(coreDir, file), 'utf8');
      for (const match of source.matchAll(/(?:from\s+|import\(\s*|require\(\s*)['"](\.{1,2}\/[^'"]*)['"]/g)) {
        const target = resolve(dirname(join(coreDir, file)), match[1] ?? '');
        if (target !== join(root, 'package.json') && !target.startsWith(`${coreDir}/`) && target !== coreDir)
          outside.push(`${file} -> ${match[1]}`);
      }
    }
    assert.deepEqual(outside, []);
  });

  it('has no import cycles between the folders of src/core', () => {
    assert.deepEqual(folderCycles(coreFolderGraph()), []);
  });

  it('core/todo is the todo rules, pure: it imports only state/, registry/ and runtime/, and no fs', () => {
    const graph = coreFolderGraph();
    assert.deepEqual([...(graph.get('todo') ?? [])].sort(), TODO_RULE_IMPORTS);
    for (const folder of ['scheduling', 'status', 'ops'])
      assert.ok(graph.get(folder)?.has('todo'), `${folder} applies the todo rules from core/todo`);
    const withFs = sourceFiles(join('src', 'core', 'todo')).filter((file) =>
      /from\s+['"](node:)?fs(\/promises)?['"]/.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    assert.deepEqual(withFs, []);
  });

  it('a resume condition is read only in core/todo (the writer checks its grammar in state/todos.ts)', () => {
    const readers = sourceFiles(join('src', 'core')).filter(
      (file) =>
        !file.startsWith(join('src', 'core', 'todo') + '/') &&
        file !== join('src', 'core', 'state', 'todos.ts') &&
        RESUME_CONDITION_READ.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    assert.deepEqual(readers, [], 'read resume_when through core/todo/resume.ts');
    assert.ok(
      RESUME_CONDITION_READ.test(readFileSync(join(ROOT, 'src', 'core', 'todo', 'resume.ts'), 'utf8')),
      'the rule recognizes the reading it guards',
    );
  });

  it('core/server is HTTP only: it imports core/status and what status itself builds on, never ops, turns or agents', () => {
    const graph = coreFolderGraph();
    const allowed = reachable(graph, 'status');
    const server = [...(graph.get('server') ?? [])];
    assert.ok(server.includes('status'), 'the server serves the status model');
    assert.deepEqual(
      server.filter((folder) => !allowed.has(folder)),
      [],
    );
  });

  it('surfaces reach the core only through core/ops (plus the catalog, errors, version and types)', () => {
    const found: string[] = [];
    for (const surface of SURFACES) {
      if (!existsSync(join(ROOT, surface))) continue;
      for (const file of sourceFiles(surface)) {
        for (const edge of importsOf(file)) {
          const folder = coreFolderOf(edge.to);
          if (folder === null || edge.typeOnly) continue;
          if (ALLOWED_CORE.some((allowed) => edge.to === allowed || edge.to.startsWith(`${allowed}/`))) continue;
          found.push(`${file} -> ${edge.to}`);
        }
      }
    }
    assert.deepEqual(found, [], 'a surface imports a core internal: call an operation (src/core/ops) instead');
  });

  it('below ops/, no new exported function looks a goal up by (registryPath, goalId): it takes a GoalRef or a snapshot', () => {
    const found = goalLookupFunctions();
    assert.ok(found.length > 0 || GOAL_LOOKUP_OFFENDERS.length === 0);
    assert.deepEqual(
      found.filter((f) => !GOAL_LOOKUP_OFFENDERS.includes(f)),
      [],
      'load the goal once (core/goal: GoalLoader) and pass the GoalRef or the snapshot down',
    );
    // A fixed offender leaves the list too, so the list only shrinks.
    assert.deepEqual(
      GOAL_LOOKUP_OFFENDERS.filter((f) => !found.includes(f)),
      [],
      'remove fixed entries from GOAL_LOOKUP_OFFENDERS',
    );
  });

  it('below ops/, one goal type: the GoalRef (no new QuotaGoal, TurnGoal, GoalLocation, …)', () => {
    const found = goalTypes();
    for (const allowed of GOAL_TYPES) assert.ok(found.includes(allowed), `${allowed} is where it is said to be`);
    assert.deepEqual(
      found.filter((f) => !GOAL_TYPES.includes(f) && !GOAL_TYPE_OFFENDERS.includes(f)),
      [],
      'take the GoalRef (registry/goalRef.ts), a Pick of it, or a loaded GoalSnapshot instead of a goal type of your own',
    );
    assert.deepEqual(
      GOAL_TYPE_OFFENDERS.filter((f) => !found.includes(f)),
      [],
      'remove fixed entries from GOAL_TYPE_OFFENDERS',
    );
  });

  it('only core/goal and the stores import the registry, state-file and run-index readers', () => {
    const found = goalFileReaderImports();
    assert.ok(
      found.some((f) => f.startsWith('goal/')),
      'the goal loader reads through them',
    );
    const outside = found.filter((f) => !GOAL_READER_HOMES.some((home) => f.startsWith(home)));
    assert.deepEqual(
      outside.filter((f) => !GOAL_READER_OFFENDERS.includes(f)),
      [],
      'read a goal through core/goal (GoalLoader) instead',
    );
    assert.deepEqual(
      GOAL_READER_OFFENDERS.filter((f) => !outside.includes(f)),
      [],
      'remove fixed entries from GOAL_READER_OFFENDERS',
    );
  });

  it('below ops/, no optional pre-read parameter ("as the caller already read it: not read again")', () => {
    const found = optionalPreReadParameters();
    assert.deepEqual(
      found.filter((f) => !PRE_READ_OFFENDERS.includes(f)),
      [],
      'take what was loaded as a required input (a GoalSnapshot from GoalLoader), not as an optional second way in',
    );
    assert.deepEqual(
      PRE_READ_OFFENDERS.filter((f) => !found.includes(f)),
      [],
      'remove fixed entries from PRE_READ_OFFENDERS',
    );
  });

  it('the RunHistoryReader and the parsed state files are cached once per process (core/goal/cache.ts)', () => {
    const constructions = sourceFiles(join('src', 'core')).filter((file) =>
      /new RunHistoryReader\(|RunHistoryReader\.shared\(\)/.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    assert.deepEqual(constructions, [join('src', 'core', 'goal', 'cache.ts')]);
  });

  it('one persistent cache file, named only by core/goal/persistentCache.ts', () => {
    assert.deepEqual(persistentCacheFileNames(), [...PERSISTENT_CACHE_FILES].sort());
    assert.deepEqual(persistentCacheFileHomes(), [join('src', 'core', 'goal', 'persistentCache.ts')]);
  });

  it('one in-memory cache per goal file kind per process: the file caches are built only in core/goal', () => {
    // The process's GoalCache (core/goal/cache.ts) holds them all: the decisions' GoalLoader and the
    // read views' GoalFiles (under every status cache) read through it. No other class of src/core
    // keeps parsed registries, state files or run indexes.
    assert.deepEqual(goalFileCacheHomes(), [join('src', 'core', 'goal', 'cache.ts')]);
  });

  it('one cache per goal file kind per process: one map each in src, built once (processGoalCache)', () => {
    const caches = goalFileCachesByKind();
    const cache = join('src', 'core', 'goal', 'cache.ts');
    // StateFileCache's map, the only one: GoalLoader and GoalFiles (every status cache) read through it.
    assert.deepEqual(caches.state, [cache], 'state files: read them through processGoalCache().stateFiles');
    // RunIndexCache: the read views' full reads (one map) and the decisions' incremental RunHistoryReader,
    // one object per process.
    assert.deepEqual(caches.runIndex, [cache, cache], 'run indexes: read them through processGoalCache().runIndexes');
    // RegistryCache's map, the only one.
    assert.deepEqual(caches.registry, [cache], 'registries: read them through processGoalCache().registries');
    // GoalCache once (processGoalCache), and each of its three caches once: a second instance would be a second cache.
    assert.deepEqual(caches.builders, [cache, cache, cache, cache]);
  });

  it('keeps src/extension.ts a short composition root', () => {
    const lines = readFileSync(join(root, 'src', 'extension.ts'), 'utf8').split('\n').length;
    assert.ok(lines <= 60, `src/extension.ts has ${lines} lines`);
  });

  it('pins @types/vscode to the engines.vscode minimum, so vsce can package', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      engines: { vscode: string };
      devDependencies: Record<string, string>;
    };
    assert.equal(`^${pkg.devDependencies['@types/vscode']}`, pkg.engines.vscode);
  });
});
