import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOOPX_CLI_COMMAND, viaLoopxCli } from '../../../src/core/protocol/cliInvocation';
import { heartbeatSteps } from '../../../src/core/protocol/heartbeat';
import { plannedSlashFiles } from '../../../src/core/slash/install';

/**
 * The installed prompts run `"${LOOPX_CLI:-loopx}" …`: in a VS Code terminal (LOOPX_CLI set) that is
 * LoopX for VS Code's CLI even when the Python `loopx` comes first on the PATH; elsewhere it is the
 * `loopx` on the PATH. Run in `sh` as an agent's shell tool would.
 */
describe('"${LOOPX_CLI:-loopx}" in the installed prompts', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'loopx-cli-invocation-'));
    for (const [folder, says] of [
      ['python-bin', 'python loopx'],
      ['vscode-bin', 'loopx for vs code'],
    ] as const) {
      mkdirSync(join(dir, folder));
      writeFileSync(join(dir, folder, 'loopx'), `#!/bin/sh\necho "${says}: $*"\n`, { mode: 0o755 });
    }
    env = { PATH: `${join(dir, 'python-bin')}:/usr/bin:/bin` };
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The command of the installed Claude Code `/loopx-status`, `$ARGUMENTS` empty, run in sh. */
  function runStatusPrompt(extra: NodeJS.ProcessEnv): string {
    const file = plannedSlashFiles(['claude-code']).find((f) => f.relativePath.endsWith('/loopx-status.md'));
    const command = /Run `([^`]*) \$ARGUMENTS`/.exec(file?.content ?? '')?.[1];
    assert.equal(command, `${LOOPX_CLI_COMMAND} status`);
    const run = spawnSync('sh', ['-c', `${command} --format json`], { env: { ...env, ...extra }, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    return run.stdout.trim();
  }

  it('runs LOOPX_CLI when a VS Code terminal sets it, though the Python loopx is first on the PATH', () => {
    assert.equal(
      runStatusPrompt({ LOOPX_CLI: join(dir, 'vscode-bin', 'loopx') }),
      'loopx for vs code: status --format json',
    );
  });

  it('runs the loopx on the PATH where LOOPX_CLI is unset or empty', () => {
    assert.equal(runStatusPrompt({}), 'python loopx: status --format json');
    assert.equal(runStatusPrompt({ LOOPX_CLI: '' }), 'python loopx: status --format json');
  });

  it('rewrites every loopx of a chain, and the heartbeat steps too', () => {
    assert.equal(
      viaLoopxCli("loopx bootstrap --goal-id g && loopx todo add --text 'loopx it'"),
      `${LOOPX_CLI_COMMAND} bootstrap --goal-id g && ${LOOPX_CLI_COMMAND} todo add --text 'loopx it'`,
    );
    const steps = heartbeatSteps({ goalId: 'g', agentId: 'a', todoId: 't' });
    assert.ok(steps.length > 3);
    for (const step of steps) assert.ok(step.command.startsWith(`${LOOPX_CLI_COMMAND} `), step.command);
  });
  it('the heartbeat steps take the CLI invocation as a value: any invocation comes first in every command, nothing rewritten', () => {
    const cli = "'/opt/my tools/loopx'";
    const steps = heartbeatSteps({ goalId: 'g', agentId: 'a', todoId: 't' }, cli);
    assert.ok(steps.length > 3);
    for (const step of steps) {
      assert.ok(step.command.startsWith(`${cli} `), step.command);
      assert.ok(!step.command.includes(LOOPX_CLI_COMMAND), step.command);
    }
  });
});
