import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const root = join(__dirname, '..', '..');

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
