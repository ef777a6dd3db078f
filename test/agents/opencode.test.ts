/**
 * The real opencode CLI (pinned in support/agentClis.ts) in LoopX turns, against the scripted
 * Anthropic Messages API (opencode's anthropic provider, its baseURL set in an opencode config file named
 * by OPENCODE_CONFIG), each scenario in its own loopback-only network namespace. See
 * docs/agents-conformance.md for what each scenario proves.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptedAnswer } from './support/modelServer';
import {
  describeReport,
  finalText,
  jsonOf,
  newWorkspace,
  RELATED_NOTE,
  runOnceCommand,
  scenario,
  steps,
  text,
  type Workspace,
} from './support/scenario';
import { agentClis } from './support/setup';

const AGENT = 'opencode';

interface OpencodeWorkspace extends Workspace {
  files: Record<string, string>;
  env: Record<string, string>;
}

function opencodeWorkspace(executor: Record<string, unknown> = {}): OpencodeWorkspace {
  const ws = newWorkspace(AGENT, {
    preset: 'opencode',
    command: [agentClis().opencode],
    args: ['--model', 'anthropic/claude-sonnet-4-5'],
    timeout_minutes: 2,
    ...executor,
  });
  const configFile = join(ws.root, 'opencode-config.json');
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    permission: { edit: 'allow', bash: 'allow' },
    provider: {
      anthropic: {
        options: { baseURL: '{{BASE_URL}}/v1', apiKey: 'sk-ant-scripted-test-key' },
        models: { 'claude-sonnet-4-5': { name: 'Claude Sonnet 4.5 (scripted)' } },
      },
    },
  };
  return {
    ...ws,
    files: { [configFile]: JSON.stringify(config, null, 2) },
    env: { OPENCODE_CONFIG: configFile },
  };
}

function write(ws: Workspace): ScriptedAnswer {
  return {
    kind: 'tool',
    name: 'write',
    input: { filePath: join(ws.project, 'notes', 'related.md'), content: RELATED_NOTE },
  };
}
function bash(command: string): ScriptedAnswer {
  return { kind: 'tool', name: 'bash', input: { command, description: 'run a command' } };
}

describe('opencode 1.18.33 in LoopX turns (real CLI, scripted Anthropic API, loopback-only namespace)', function () {
  this.timeout(5 * 60_000);
  before(() => {
    agentClis();
  });

  it('a good turn: the model writes a file with write, runs bash, and the turn commits with usage and session from opencode', async () => {
    const ws = opencodeWorkspace();
    const report = await scenario(
      steps(write(ws), bash('wc -l notes/related.md'), text(finalText())),
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    const run = report.commands[0];
    const out = jsonOf(run);
    assert.equal(out['status'], 'committed', describeReport(report));
    assert.equal(readFileSync(join(ws.project, 'notes', 'related.md'), 'utf8'), RELATED_NOTE);
    assert.ok(
      report.toolResults.some((t) => /3 notes\/related\.md/.test(t)),
      describeReport(report),
    );
    const usage = out['usage'] as Record<string, unknown>;
    assert.equal(usage['tokens'], 3300);
    assert.deepEqual(run?.survivors, []);
  });

  it('no JSON result: the turn fails malformed_result; nothing committed', async () => {
    const ws = opencodeWorkspace();
    const report = await scenario(
      steps(write(ws), text('All done, the notes are linked now.')),
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    const out = jsonOf(report.commands[0]);
    assert.equal(report.commands[0]?.code, 1, describeReport(report));
    assert.equal((out['failure'] as Record<string, unknown>)['reason'], 'malformed_result', describeReport(report));
  });

  it('kill -9 of opencode mid-tool: the turn fails and the command it started does not survive', async () => {
    const ws = opencodeWorkspace();
    const marker = join(ws.root, 'tool-started');
    const report = await scenario(
      steps(bash(`echo $$ > ${marker}; sleep 300`), text(finalText())),
      [runOnceCommand(ws, AGENT, { env: ws.env, kill: { whenFile: marker, processPattern: 'opencode(\\.exe)? run' } })],
      ws.files,
    );
    const run = report.commands[0];
    assert.ok((run?.killed.length ?? 0) >= 1, describeReport(report));
    assert.notEqual(jsonOf(run)['status'], 'committed');
    assert.deepEqual(
      run?.survivors.filter((p) => /sleep 300/.test(p.cmdline)),
      [],
      `processes that outlived the turn: ${JSON.stringify(run?.survivors)}`,
    );
  });
});
