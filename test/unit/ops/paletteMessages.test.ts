import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { installDemoAgent } from '../../../src/core/executors/config';
import type { OperationEnvironment } from '../../../src/core/ops/operation';
import { refreshState } from '../../../src/core/ops/refresh';
import { runOperation } from '../../../src/core/ops/run';
import { turnLoop, turnRunOnce, type LoopResult, type TurnRunResult } from '../../../src/core/ops/turn';
import * as messages from '../../../src/commands/turnMessages';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import { AGENT, DEMO_AGENT_SOURCE_ARGV } from '../turn/helpers';

/** A command-line flag: two dashes, then a letter. */
const FLAG = /--[a-z]/i;

function environment(workspace: string): OperationEnvironment {
  return {
    cwd: workspace,
    env: { PATH: process.env['PATH'] ?? '' },
    clock: fixedClock('2026-11-28T10:00:00Z'),
    homeDir: os.homedir(),
    registryPath: path.join(workspace, '.loopx', 'registry.json'),
  };
}

/** Every message and button the palette's turn and refresh commands build for one turn result. */
function turnTexts(result: TurnRunResult): string[] {
  return [
    messages.noTurnMessage('demo', 'tidy-notes', result),
    messages.confirmTurnQuestion('demo', 'tidy-notes', result),
    messages.confirmTurnDetail(result),
    messages.turnOutcomeMessage(result),
    ...messages.turnButtons(result),
    ...result.next_steps.map((step) => messages.turnProgressTitle('demo', 'tidy-notes', step)),
  ];
}

function loopTexts(result: LoopResult): string[] {
  return [
    messages.confirmLoopQuestion(result.goal_id, result.agent_ids),
    messages.confirmLoopDetail({ remaining_slots: 1, allowed_slots: 2 }),
    messages.loopProgressTitle(result.goal_id),
    messages.loopOutcomeMessage(result),
    ...messages.loopButtons(result),
    ...result.turns.flatMap(turnTexts),
  ];
}

describe('palette turn and refresh messages name no command-line flag (issue 13)', function () {
  this.timeout(120_000);
  const dirs: string[] = [];
  const demo = (): string => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-messages-')));
    dirs.push(dir);
    return materializeDemoWorkspace(path.join(dir, 'ws'));
  };
  let previousDemoAgent: readonly string[] | undefined;
  before(() => {
    previousDemoAgent = installDemoAgent(DEMO_AGENT_SOURCE_ARGV);
  });
  after(() => {
    installDemoAgent(previousDemoAgent);
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('covers previews, committed, failed, resumable, no-turn, loop and refresh outcomes', async () => {
    const texts: string[] = [];
    const kinds = new Set<string>();
    const turn = (result: TurnRunResult): TurnRunResult => {
      kinds.add(result.status);
      for (const step of result.next_steps) kinds.add(`step:${step.kind}`);
      texts.push(...turnTexts(result));
      return result;
    };

    const ws = demo();
    const env = environment(ws);
    turn(await runOperation(turnRunOnce, { goalId: 'tidy-notes', agentId: 'demo' }, env, 'preview'));
    turn(await runOperation(turnRunOnce, { goalId: 'tidy-notes', agentId: 'demo' }, env, 'apply'));
    const loop = await runOperation(turnLoop, { goalId: 'tidy-notes', agentIds: ['demo'] }, env);
    texts.push(...loopTexts(loop));
    turn(await runOperation(turnRunOnce, { goalId: 'tidy-notes', agentId: 'demo' }, env, 'preview'));

    const failing = demo();
    const failEnv = environment(failing);
    const exit1 = [process.execPath, AGENT, 'exit1'];
    const failed = turn(
      await runOperation(
        turnRunOnce,
        { goalId: 'tidy-notes', agentId: 'demo', hostAdapterCommand: exit1 },
        failEnv,
        'apply',
      ),
    );
    turn(
      await runOperation(
        turnRunOnce,
        { goalId: 'tidy-notes', agentId: 'demo', resumeTurnKey: failed.turn_key ?? '' },
        failEnv,
        'preview',
      ),
    );
    const failedLoop = await runOperation(
      turnLoop,
      { goalId: 'tidy-notes', agentIds: ['demo'], hostAdapterCommand: exit1 },
      environment(demo()),
    );
    texts.push(...loopTexts(failedLoop));

    const cancelled = new AbortController();
    cancelled.abort();
    turn(
      await runOperation(
        turnRunOnce,
        { goalId: 'tidy-notes', agentId: 'demo', execute: true },
        { ...environment(demo()), signal: cancelled.signal },
      ),
    );

    const refreshWs = demo();
    const payload = await runOperation(
      refreshState,
      { goalId: 'tidy-notes', classification: 'state_refreshed', agentId: 'demo', progressScope: 'goal' },
      environment(refreshWs),
    );
    texts.push(
      messages.confirmRefreshQuestion('tidy-notes', 'state_refreshed'),
      messages.confirmRefreshDetail(''),
      messages.confirmRefreshDetail('ship it'),
      messages.refreshRecordedMessage(payload),
    );

    for (const kind of ['preview', 'committed', 'failed', 'cancelled', 'step:execute', 'step:retry', 'step:resume'])
      assert.ok(kinds.has(kind), `the scan covers a ${kind} result (got ${[...kinds].join(', ')})`);
    assert.equal(loop.stop_reason, 'user_action');
    assert.equal(failedLoop.stop_reason, 'error');
    const flagged = texts.filter((text) => FLAG.test(text));
    assert.deepEqual(flagged, [], 'palette messages must not name command-line flags');
  });
});
