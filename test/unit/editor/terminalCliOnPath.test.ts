import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLI_ON_PATH_MODES,
  cliOnPathMode,
  findOtherLoopx,
  launcherFileName,
  loopxFileNames,
  pathFolders,
  terminalCliPlan,
} from '../../../src/terminal/cliOnPath';

/** A stand-in for the Python LoopX's console script, as pip installs it. */
const PYTHON_LOOPX = '#!/usr/bin/env python3\nimport sys\nfrom loopx.cli import main\nsys.exit(main())\n';

describe('the loopx the integrated terminals get (loopx.terminal.cliOnPath)', () => {
  let dir: string;
  let ours: string;
  let python: string;
  let empty: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'loopx-cli-on-path-'));
    ours = join(dir, 'ours-bin');
    python = join(dir, 'venv-bin');
    empty = join(dir, 'empty');
    for (const folder of [ours, python, empty]) mkdirSync(folder);
    writeFileSync(join(ours, 'loopx'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    writeFileSync(join(python, 'loopx'), PYTHON_LOOPX, { mode: 0o755 });
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const lookup = (path: string) => findOtherLoopx({ path, exclude: [ours], platform: 'linux' });

  it('finds the Python loopx on the PATH, past our own launcher folder, and so leaves it first by default', () => {
    const found = lookup([ours, empty, python, '/usr/bin'].join(':'));
    assert.equal(found, join(python, 'loopx'));
    assert.equal(readFileSync(found, 'utf8'), PYTHON_LOOPX);
    assert.deepEqual(terminalCliPlan('whenMissing', found), {
      prependPath: false,
      reason: `another loopx comes first on the PATH (${found})`,
    });
  });

  it('prepends ours when no other loopx is on the PATH (our own folder does not count)', () => {
    const found = lookup([ours, empty, `${ours}/`].join(':'));
    assert.equal(found, undefined);
    assert.equal(terminalCliPlan('whenMissing', found).prependPath, true);
  });

  it('skips a loopx that is not an executable file, empty and relative PATH entries', () => {
    const notExecutable = join(dir, 'plain');
    const folderNamedLoopx = join(dir, 'odd');
    mkdirSync(notExecutable);
    mkdirSync(join(folderNamedLoopx, 'loopx'), { recursive: true });
    writeFileSync(join(notExecutable, 'loopx'), PYTHON_LOOPX, { mode: 0o644 });
    assert.equal(lookup(['', '.', 'venv-bin', notExecutable, folderNamedLoopx].join(':')), undefined);
    chmodSync(join(notExecutable, 'loopx'), 0o755);
    assert.equal(lookup(['', notExecutable].join(':')), join(notExecutable, 'loopx'));
  });

  it('reads a Windows PATH: ";" between folders, quotes removed, PATHEXT names (the launcher is loopx.cmd)', () => {
    assert.deepEqual(pathFolders('"C:\\Program Files\\Python\\Scripts";;C:\\bin\\;relative', 'win32'), [
      'C:\\Program Files\\Python\\Scripts',
      'C:\\bin',
    ]);
    assert.deepEqual(loopxFileNames('win32', '.EXE;.CMD;'), ['loopx.exe', 'loopx.cmd']);
    assert.deepEqual(loopxFileNames('win32', undefined), ['loopx.com', 'loopx.exe', 'loopx.bat', 'loopx.cmd']);
    assert.deepEqual(loopxFileNames('linux', '.EXE'), ['loopx']);
    assert.deepEqual(pathFolders('/usr/bin:/opt/x//:/', 'linux'), ['/usr/bin', '/opt/x', '/']);
    assert.deepEqual(pathFolders('C:\\', 'win32'), ['C:\\']);
    assert.equal(launcherFileName('win32'), 'loopx.cmd');
    assert.equal(launcherFileName('darwin'), 'loopx');
  });

  it('"always" prepends ours even before another loopx; "never" never touches the PATH', () => {
    const other = join(python, 'loopx');
    assert.equal(terminalCliPlan('always', other).prependPath, true);
    assert.equal(terminalCliPlan('always', undefined).prependPath, true);
    assert.equal(terminalCliPlan('never', undefined).prependPath, false);
    assert.equal(terminalCliPlan('never', other).prependPath, false);
  });

  it('reads the setting strictly: an unknown value is the default, whenMissing', () => {
    assert.deepEqual(CLI_ON_PATH_MODES, ['whenMissing', 'always', 'never']);
    assert.equal(cliOnPathMode('always'), 'always');
    assert.equal(cliOnPathMode('never'), 'never');
    assert.equal(cliOnPathMode('Always'), 'whenMissing');
    assert.equal(cliOnPathMode(undefined), 'whenMissing');
  });

  it('is declared in package.json with the same values and default', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
      contributes: { configuration: { properties: Record<string, { enum?: string[]; default?: unknown }> } };
    };
    const setting = manifest.contributes.configuration.properties['loopx.terminal.cliOnPath'];
    assert.deepEqual(setting?.enum, [...CLI_ON_PATH_MODES]);
    assert.equal(setting?.default, 'whenMissing');
  });
});
