import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { transformSync } from 'esbuild';
import { REPO_ROOT } from '../../support/demoWorkspace';

/**
 * Runs the examples of docs/api.md. The doc marks its code blocks with info strings:
 *   ```json file=<relative path>   a fixture file of the example project (also ```text file=…)
 *   ```ts example                  an example script, run with the project as its current directory
 *   ```json output                 what the example above it prints
 * The doc shows the project folder as PROJECT_PLACEHOLDER; the runner swaps in the real folder in
 * fixtures and swaps it back in outputs, and pins the clock with LOOPX_NOW = DOC_NOW.
 */

export const DOC_PATH = path.join(REPO_ROOT, 'docs', 'api.md');
export const PROJECT_PLACEHOLDER = '/home/me/my-project';
export const DOC_NOW = '2026-01-15T10:00:00Z';
export const PACKAGE_NAME = 'loopx-vscode';

export interface DocFixtureFile {
  path: string;
  content: string;
}

export interface DocExample {
  /** The nearest heading above the example. */
  title: string;
  /** 1-based line of the ```ts fence, for failure messages. */
  line: number;
  code: string;
  expectedOutput: string;
}

export interface DocContent {
  fixtures: DocFixtureFile[];
  examples: DocExample[];
}

interface Block {
  language: string;
  attributes: string[];
  body: string;
  line: number;
  heading: string;
}

function codeBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const headingMatch = /^#+\s+(.*)$/.exec(line);
    if (headingMatch) heading = headingMatch[1] ?? '';
    const fence = /^```(\w+)\s*(.*)$/.exec(line);
    if (!fence) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i] ?? '');
    blocks.push({
      language: fence[1] ?? '',
      attributes: (fence[2] ?? '').split(/\s+/).filter(Boolean),
      body: body.join('\n'),
      line: start + 1,
      heading,
    });
  }
  return blocks;
}

export function readDoc(markdown = fs.readFileSync(DOC_PATH, 'utf8')): DocContent {
  const blocks = codeBlocks(markdown);
  const fixtures: DocFixtureFile[] = [];
  const examples: DocExample[] = [];
  blocks.forEach((block, index) => {
    const file = block.attributes.find((a) => a.startsWith('file='));
    if (file !== undefined) fixtures.push({ path: file.slice('file='.length), content: `${block.body}\n` });
    if (block.language !== 'ts' || !block.attributes.includes('example')) return;
    const output = blocks[index + 1];
    if (output === undefined || output.language !== 'json' || !output.attributes.includes('output')) {
      throw new Error(`docs/api.md:${block.line}: the example has no \`\`\`json output block right after it`);
    }
    examples.push({ title: block.heading, line: block.line, code: block.body, expectedOutput: output.body });
  });
  return { fixtures, examples };
}

/** Writes the doc's fixture files into `projectDir`, with the placeholder replaced by the folder. */
export function writeFixture(projectDir: string, fixtures: readonly DocFixtureFile[]): void {
  for (const fixture of fixtures) {
    const target = path.join(projectDir, fixture.path);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, fixture.content.split(PROJECT_PLACEHOLDER).join(projectDir));
  }
}

/**
 * The example as a CommonJS script: TypeScript stripped by esbuild, `import … from` turned into
 * `require`, with `packageSpecifier` for the package, and the rest wrapped in an async function
 * so the example's top-level `await` runs.
 */
export function exampleToCommonJs(code: string, packageSpecifier: string): string {
  const javascript = transformSync(code, { loader: 'ts', format: 'esm', target: 'node20' }).code;
  const requires: string[] = [];
  const body = javascript.replace(
    /^import\s+(.+?)\s+from\s+(["'])([^"']+)\2;\n/gms,
    (_match, clause: string, _quote, specifier: string) => {
      const target = JSON.stringify(specifier === PACKAGE_NAME ? packageSpecifier : specifier);
      const namespace = /^\*\s+as\s+(\w+)$/.exec(clause.trim());
      const binding = namespace ? namespace[1] : clause.trim().replace(/\b(\w+)\s+as\s+(\w+)\b/g, '$1: $2');
      requires.push(`const ${binding} = require(${target});`);
      return '';
    },
  );
  return `'use strict';\n${requires.join('\n')}\n(async () => {\n${body}\n})().catch((error) => { console.error(error); process.exitCode = 1; });\n`;
}

/** Node arguments that let a script outside the repository require TypeScript sources (tsx, from the repo). */
export const TSX_NODE_ARGS: readonly string[] = [
  '--import',
  pathToFileURL(path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href,
];

export interface ExampleRun {
  status: number | null;
  /** stdout with the project folder shown as the placeholder, trailing whitespace trimmed. */
  output: string;
  stderr: string;
}

/** Runs a script as a real `node` process in `projectDir`, with the doc's pinned clock. */
export function runExampleScript(scriptPath: string, projectDir: string, nodeArgs: readonly string[] = []): ExampleRun {
  const result = spawnSync(process.execPath, [...nodeArgs, scriptPath], {
    cwd: projectDir,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', HOME: projectDir, LOOPX_NOW: DOC_NOW },
  });
  return { status: result.status, output: showProject(result.stdout, projectDir).trimEnd(), stderr: result.stderr };
}

function showProject(text: string, projectDir: string): string {
  const real = fs.realpathSync(projectDir);
  return text.split(real).join(PROJECT_PLACEHOLDER).split(projectDir).join(PROJECT_PLACEHOLDER);
}
