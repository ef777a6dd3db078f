import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

import {
  coreFolderGraph,
  coreFolderOf,
  folderCycles,
  importsOf,
  reachable,
  ROOT,
  sourceFiles,
} from './architectureRules';

const root = join(__dirname, '..', '..');

/** Folders of user-facing surfaces: they call operations and render results. */
const SURFACES = ['src/cli', 'src/commands', 'src/views', 'src/chat', 'src/webviews', 'src/statusBar'];
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
