import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { LOOPX_VERSION } from '../../../src/core/version';

/** What `_loopx.terminalCliPath` answers: the decision and the collection's PATH and LOOPX_CLI mutators. */
interface TerminalCliInfo {
  binDir: string | undefined;
  launcher: string | undefined;
  mode: string;
  otherLoopx: string | undefined;
  prependPath: boolean;
  path: { value: string; type: number } | undefined;
  loopxCli: { value: string; type: number } | undefined;
}

const info = async (): Promise<TerminalCliInfo> => {
  const answer = await vscode.commands.executeCommand<TerminalCliInfo>('_loopx.terminalCliPath');
  assert.ok(answer);
  return answer;
};

/** Waits until the extension has re-applied the collection for `mode` (the configuration event comes after the write). */
async function applied(mode: string): Promise<TerminalCliInfo> {
  for (let i = 0; i < 300; i++) {
    const current = await info();
    if (current.mode === mode) return current;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the terminal environment was not re-applied for ${mode}`);
}

/** The PATH and LOOPX_CLI a new integrated terminal gets: the mutators applied to the host's environment. */
function terminalEnv(state: TerminalCliInfo): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (state.path !== undefined) {
    assert.equal(state.path.type, vscode.EnvironmentVariableMutatorType.Prepend);
    env['PATH'] = `${state.path.value}${process.env['PATH'] ?? ''}`;
  }
  if (state.loopxCli !== undefined) {
    assert.equal(state.loopxCli.type, vscode.EnvironmentVariableMutatorType.Replace);
    env['LOOPX_CLI'] = state.loopxCli.value;
  }
  return env;
}

function sh(command: string, env: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } {
  return spawnSync('sh', ['-c', command], { env, encoding: 'utf8', cwd: tmpdir() });
}

describe("the integrated terminals' loopx (loopx.terminal.cliOnPath) in the real VS Code host", function () {
  this.timeout(120_000);
  const config = () => vscode.workspace.getConfiguration('loopx');
  const originalPath = process.env['PATH'];
  let fakeDir: string;

  before(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)?.activate();
    // The Python LoopX's console script, as pip installs it (a stand-in that answers `doctor` its own way).
    fakeDir = mkdtempSync(join(tmpdir(), 'loopx-python-bin-'));
    writeFileSync(join(fakeDir, 'loopx'), '#!/bin/sh\necho "python loopx: $*"\n', { mode: 0o755 });
  });

  afterEach(async () => {
    process.env['PATH'] = originalPath;
    await config().update('terminal.cliOnPath', undefined, vscode.ConfigurationTarget.Global);
    await applied('whenMissing');
  });

  after(() => rmSync(fakeDir, { recursive: true, force: true }));

  it('with no other loopx on the PATH: ours goes first, LOOPX_CLI names it, and loopx --version runs through it', async () => {
    const state = await info();
    assert.equal(state.mode, 'whenMissing');
    assert.equal(state.otherLoopx, undefined, 'the test host has no other loopx on its PATH');
    assert.ok(state.binDir && state.launcher, 'the launcher was written');
    assert.equal(state.path?.value, `${state.binDir}${delimiter}`);
    assert.equal(state.loopxCli?.value, state.launcher);
    const env = terminalEnv(state);
    for (const command of ['loopx --version', '"$LOOPX_CLI" --version']) {
      const run = sh(command, env);
      assert.equal(run.status, 0, `${command}: ${run.stderr}`);
      assert.match(run.stdout, new RegExp(LOOPX_VERSION.replace(/\./g, '\\.')), command);
    }
  });

  it("leaves the user's own loopx first by default, always sets LOOPX_CLI, and follows the setting when it changes", async () => {
    process.env['PATH'] = `${fakeDir}${delimiter}${originalPath ?? ''}`;
    // Any change of the setting re-applies the collection against the host's PATH as it is now.
    await config().update('terminal.cliOnPath', 'always', vscode.ConfigurationTarget.Global);
    const always = await applied('always');
    assert.equal(always.path?.value, `${always.binDir}${delimiter}`, '"always" puts ours first');
    assert.match(sh('loopx --version', terminalEnv(always)).stdout, new RegExp(LOOPX_VERSION.replace(/\./g, '\\.')));

    await config().update('terminal.cliOnPath', 'whenMissing', vscode.ConfigurationTarget.Global);
    const whenMissing = await applied('whenMissing');
    assert.equal(whenMissing.otherLoopx, join(fakeDir, 'loopx'));
    assert.equal(whenMissing.prependPath, false);
    assert.equal(whenMissing.path, undefined, "the user's loopx stays first: no PATH change");
    assert.equal(whenMissing.loopxCli?.value, whenMissing.launcher, 'LOOPX_CLI still names ours');
    const env = terminalEnv(whenMissing);
    assert.equal(sh('loopx doctor', env).stdout.trim(), 'python loopx: doctor', "the user's skills reach their loopx");
    const ours = sh('"${LOOPX_CLI:-loopx}" --version', env);
    assert.equal(ours.status, 0, ours.stderr);
    assert.match(ours.stdout, new RegExp(LOOPX_VERSION.replace(/\./g, '\\.')), 'the installed prompts reach ours');

    await config().update('terminal.cliOnPath', 'never', vscode.ConfigurationTarget.Global);
    process.env['PATH'] = originalPath;
    const never = await applied('never');
    assert.equal(never.path, undefined, '"never" leaves the PATH alone even with no other loopx');
    assert.equal(never.loopxCli?.value, never.launcher);
  });
});
