import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { createExtensionApi, type ApiWorkspaceModel } from '../../../src/api/extensionApi';
import type { LoopxQuotaChanged, LoopxTurnEnded } from '../../../src/api/types';
import { getGoalStatus, isLoopxError, version } from '../../../src/core/index';
import { fixedClock } from '../../../src/core/clock';
import type { GoalStatusItem } from '../../../src/core/status/goalStatus';
import { LiveStatusModel } from '../../../src/core/status/liveStatus';
import { loadRegistrySnapshot, type GoalSummary } from '../../../src/core/ops/goalRows';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';

/** A minimal stand-in for vscode.EventEmitter (the API only needs the Event function shape). */
class TestEmitter<T> {
  private listeners: ((value: T) => void)[] = [];
  readonly event: vscode.Event<T> = (listener, thisArgs) => {
    const bound = (value: T): void => {
      listener.call(thisArgs, value);
    };
    this.listeners.push(bound);
    return {
      dispose: () => {
        this.listeners = this.listeners.filter((l) => l !== bound);
      },
    };
  };
  fire(value: T): void {
    for (const listener of [...this.listeners]) listener(value);
  }
  get listenerCount(): number {
    return this.listeners.length;
  }
}

/** The demo workspace loaded the way WorkspaceModel loads it, with a reload the test controls. */
class TestModel implements ApiWorkspaceModel {
  goals: GoalSummary[] = [];
  private readonly changed = new TestEmitter<void>();
  readonly onDidChange = this.changed.event;
  /** The live status model the editor keeps per registry; `statusReads` counts the API's asks. */
  readonly live: LiveStatusModel;
  statusReads = 0;
  constructor(readonly registryPath: string) {
    this.live = new LiveStatusModel({
      registryPath,
      homeDir: os.homedir(),
      clock: fixedClock('2026-11-29T10:00:00Z'),
      watch: false,
      persistentCache: false,
    });
  }
  async statusItem(goal: GoalSummary): Promise<GoalStatusItem | undefined> {
    this.statusReads += 1;
    const snapshot = await this.live.current();
    return snapshot.ok ? snapshot.items.get(goal.goalId) : undefined;
  }
  async reload(): Promise<void> {
    const snapshot = await loadRegistrySnapshot(this.registryPath, { homeDir: os.homedir() });
    assert.ok(snapshot.ok);
    this.goals = snapshot.goals;
    this.changed.fire();
  }
  get subscriptions(): number {
    return this.changed.listenerCount;
  }
}

describe('extension API (createExtensionApi)', () => {
  let scratch: string;
  let model: TestModel;
  const turns = new TestEmitter<LoopxTurnEnded>();
  const quotaSpend = new TestEmitter<LoopxQuotaChanged>();

  beforeEach(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-extapi-'));
    const workspace = materializeDemoWorkspace(path.join(scratch, 'workspace'));
    model = new TestModel(path.join(workspace, '.loopx', 'registry.json'));
    await model.reload();
  });
  afterEach(() => {
    model.live.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  const api = () => createExtensionApi(model, { onDidEndTurn: turns.event, onDidChangeQuota: quotaSpend.event });

  it('is versioned', () => {
    assert.equal(api().apiVersion, 1);
    assert.equal(api().version, version);
  });

  it('lists the demo goal with its agents and quota', () => {
    const goals = api().getGoals();
    assert.deepEqual(
      goals.map((g) => [g.goalId, g.agents]),
      [['tidy-notes', ['demo', 'codex-main']]],
    );
    assert.equal(api().getGoal('tidy-notes', model.registryPath)?.displayName, 'Tidy the notes folder');
    assert.equal(api().getGoal('tidy-notes', '/elsewhere/registry.json'), undefined);
    assert.deepEqual(api().getQuota('tidy-notes'), {
      compute: 0.5,
      window_hours: 24,
      slot_minutes: 30,
      allowed_slots: 24,
    });
  });

  it('reads todos, gates and status through the core', async () => {
    const todos = await api().getTodos('tidy-notes', { role: 'agent', claimedBy: 'codex-main' });
    assert.deepEqual(
      todos.todos.map((t) => t.todo_id),
      ['todo_links'],
    );
    const gates = await api().getGates('tidy-notes');
    assert.deepEqual(
      gates.open_gates.map((g) => g.todo_id),
      ['todo_gate_publish'],
    );
    const status = await api().getGoalStatus('tidy-notes');
    assert.equal(status.state?.open_gate_count, 1);
  });

  it("getGoalStatus is the live status model's item, read as the library's summary", async () => {
    const status = await api().getGoalStatus('tidy-notes');
    assert.equal(model.statusReads, 1, 'read from the live model');
    const snapshot = await model.live.current();
    assert.ok(snapshot.ok);
    const item = snapshot.items.get('tidy-notes');
    assert.ok(item !== undefined);
    assert.equal(status.state?.next_action, item.active_state_next_action);
    assert.equal(status.state?.todos.agent.open_count, item.agent_todos?.open_count);
    assert.equal(status.runs.count, item.unique_runs);
    assert.deepEqual(
      status.warnings.map((w) => w.id),
      item.projection_warnings.map((w) => w.id),
    );
    // The same summary the library computes from the `status` operation.
    const library = await getGoalStatus({
      registryPath: model.registryPath,
      goalId: 'tidy-notes',
    });
    assert.deepEqual(status, library);
  });

  it('getGoalStatus follows the item the live model holds, not a second read of the files', async () => {
    const real = await model.statusItem(model.goals[0]!);
    assert.ok(real !== undefined);
    model.statusItem = async () => ({ ...real, active_state_next_action: 'from the live item' });
    const status = await api().getGoalStatus('tidy-notes');
    assert.equal(status.state?.next_action, 'from the live item');
  });

  it('rejects an unknown goal with code goal_not_found', async () => {
    await assert.rejects(api().getTodos('nope'), (error: unknown) => isLoopxError(error, 'goal_not_found'));
  });

  it('fires onDidChangeGoals with the goals after each reload, until disposed', async () => {
    const seen: string[][] = [];
    const subscription = api().onDidChangeGoals((goals) => seen.push(goals.map((g) => g.goalId)));
    await model.reload();
    subscription.dispose();
    await model.reload();
    assert.deepEqual(seen, [['tidy-notes']]);
    assert.equal(model.subscriptions, 0);
  });

  it('passes onDidChangeQuota through from the status model (test/unit/status/liveStatus.test.ts derives it)', () => {
    const seen: LoopxQuotaChanged[] = [];
    const subscription = api().onDidChangeQuota((change) => seen.push(change));
    quotaSpend.fire({
      goalId: 'tidy-notes',
      registryPath: model.registryPath,
      quota: { compute: 0.25, window_hours: 24, slot_minutes: 30, allowed_slots: 12, spent_slots: 1 },
    });
    assert.equal(seen.length, 1);
    subscription.dispose();
    assert.equal(quotaSpend.listenerCount, 0);
  });

  it('passes onDidEndTurn through from the status model', () => {
    const seen: string[] = [];
    const subscription = api().onDidEndTurn((turn) => seen.push(`${turn.goalId}:${turn.classification}`));
    turns.fire({
      goalId: 'tidy-notes',
      registryPath: model.registryPath,
      agentId: 'demo',
      todoId: 'todo_related',
      classification: 'validated_progress',
      generatedAt: '2026-11-29T10:00:00+00:00',
    });
    subscription.dispose();
    assert.deepEqual(seen, ['tidy-notes:validated_progress']);
  });

  it('offers no operation that writes', () => {
    const names = Object.keys(api()).sort();
    assert.deepEqual(names, [
      'apiVersion',
      'getGates',
      'getGoal',
      'getGoalStatus',
      'getGoals',
      'getQuota',
      'getTodos',
      'onDidChangeGoals',
      'onDidChangeQuota',
      'onDidEndTurn',
      'version',
    ]);
  });

  it('src/api/types.ts imports nothing but vscode types, so other extensions can copy it', () => {
    const source = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'src', 'api', 'types.ts'), 'utf8');
    const imports = [...source.matchAll(/^import\s.*?from\s+'([^']+)';$/gm)].map((m) => m[0]);
    assert.deepEqual(imports, ["import type * as vscode from 'vscode';"]);
  });
});
