import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AGENT_TOOLS } from '../../../src/core/agentTools';
import { LOOPX_VERSION } from '../../../src/core/version';
import { materializeDemoWorkspace, REPO_ROOT } from '../../support/demoWorkspace';
import { call, cliJson, connectInMemory, connectStdio, TSX_LOADER, type Project } from './helpers';

/**
 * `loopx mcp` with the SDK's own client: the handshake and tools/list over a real stdio process,
 * then every tool on a copy of the demo workspace through the in-process server (the same server
 * object `loopx mcp` connects to stdio): results are the CLI's JSON, failures are isError with the
 * LoopxError code naming the field, writes keep the mutation policy.
 */

const NOW = '2026-11-28T10:00:00Z';
const GOAL = 'tidy-notes';
const dirs: string[] = [];

function demo(): Project {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-mcp-demo-'));
  dirs.push(dir);
  return { dir: materializeDemoWorkspace(path.join(dir, 'ws')), now: NOW };
}

after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('loopx mcp over stdio (a real process, the SDK client)', function () {
  this.timeout(60_000);
  let project: Project;
  let client: Client;

  before(async () => {
    project = demo();
    // Started from another folder: --project-root chooses the project, as cwd does for other commands.
    client = await connectStdio({ ...project, dir: os.tmpdir() }, ['--project-root', project.dir]);
  });
  after(async () => {
    await client?.close();
  });

  it('initializes as loopx with tools, resources and prompts', () => {
    assert.deepEqual(client.getServerVersion()?.name, 'loopx');
    assert.equal(client.getServerVersion()?.version, LOOPX_VERSION);
    const capabilities = client.getServerCapabilities() ?? {};
    assert.ok(capabilities.tools && capabilities.resources && capabilities.prompts, JSON.stringify(capabilities));
    assert.match(client.getInstructions() ?? '', /should_run/);
  });

  it('lists exactly the catalog’s tools, each with a valid JSON Schema and its read-only hint', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      AGENT_TOOLS.map((tool) => tool.name),
    );
    const ajv = new Ajv2020({ strict: true });
    for (const tool of tools) {
      ajv.compile(tool.inputSchema);
      const row = AGENT_TOOLS.find((candidate) => candidate.name === tool.name);
      assert.equal(tool.annotations?.readOnlyHint, row?.readOnly, tool.name);
    }
    for (const human of ['todo_update', 'gate_approve', 'quota_void_slot', 'configure_goal', 'archive_runtime'])
      assert.ok(!tools.some((tool) => tool.name === human), human);
  });

  it('answers a tool call from the project --project-root names', async () => {
    const result = await call(client, 'todo_list', { goalId: GOAL });
    assert.equal(result.isError, undefined, JSON.stringify(result.content));
    assert.deepEqual(result.structured, await cliJson(project, ['todo', 'list', '--goal-id', GOAL]));
  });

  it('refuses a --project-root that is not a folder with a usage error (exit 2), before serving', () => {
    const run = spawnSync(
      process.execPath,
      [
        '--import',
        TSX_LOADER,
        path.join(REPO_ROOT, 'src/cli/main.ts'),
        'mcp',
        '--project-root',
        '/nonexistent/project',
      ],
      { encoding: 'utf8', input: '' },
    );
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /--project-root "\/nonexistent\/project": not a folder/);
    assert.equal(run.stdout, '');
  });
});

describe('loopx mcp tools on the demo workspace (in-process server)', () => {
  let project: Project;
  let client: Client;

  beforeEach(async () => {
    project = demo();
    client = await connectInMemory(project);
  });
  afterEach(async () => {
    await client.close();
  });

  const READS: [string, Record<string, unknown>, string[]][] = [
    ['status', {}, ['status']],
    ['should_run', { goalId: GOAL, agentId: 'demo' }, ['quota', 'should-run', '--goal-id', GOAL, '--agent-id', 'demo']],
    [
      'heartbeat_prompt',
      { goalId: GOAL, agentId: 'demo' },
      ['heartbeat-prompt', '--goal-id', GOAL, '--agent-id', 'demo'],
    ],
    ['evidence_log', { goalId: GOAL }, ['evidence-log', '--goal-id', GOAL]],
    ['todo_list', { goalId: GOAL }, ['todo', 'list', '--goal-id', GOAL]],
    ['quota_status', { goalId: GOAL }, ['quota', 'status', '--goal-id', GOAL]],
    [
      'task_lease_inspect',
      { goalId: GOAL, todoId: 'todo_related' },
      ['task-lease', 'inspect', '--goal-id', GOAL, '--todo-id', 'todo_related'],
    ],
  ];

  for (const [tool, args, argv] of READS) {
    it(`${tool}: structuredContent is loopx ${argv.slice(0, 2).join(' ')} --format json, with a short text`, async () => {
      const result = await call(client, tool, args);
      assert.equal(result.isError, undefined, JSON.stringify(result.content));
      assert.deepEqual(result.structured, await cliJson(project, argv));
      const text = (result.content as { type: string; text: string }[])[0]?.text ?? '';
      assert.match(text, new RegExp(`^${tool}: ok=true`));
    });
  }

  it('runs the agent writes: add, claim, the lease verbs with compare-and-swap, complete, record', async () => {
    const added = await call(client, 'todo_add', { goalId: GOAL, text: 'Check the MCP tools.', priority: 'P1' });
    assert.equal(added.structured['ok'], true, JSON.stringify(added.content));
    const todoId = String(added.structured['todo_id']);
    const claimed = await call(client, 'todo_claim', { goalId: GOAL, todoId, claimedBy: 'demo', agentId: 'demo' });
    assert.equal(claimed.structured['ok'], true, JSON.stringify(claimed.content));

    // The lease verbs on a second todo nobody claimed (a soft claim by another agent refuses a transfer).
    const other = await call(client, 'todo_add', { goalId: GOAL, text: 'Lease the MCP docs.', priority: 'P2' });
    const lease = { goalId: GOAL, todoId: String(other.structured['todo_id']), owner: 'demo', idempotencyKey: 'k1' };
    const acquired = await call(client, 'task_lease_acquire', lease);
    assert.equal(acquired.structured['ok'], true, JSON.stringify(acquired.content));
    const version = (acquired.structured['lease'] as { version: number }).version;
    const renewed = await call(client, 'task_lease_renew', { ...lease, expectedVersion: version });
    assert.equal(renewed.structured['ok'], true, JSON.stringify(renewed.content));
    // Compare-and-swap: the version renew replaced is refused, nothing written.
    const stale = await call(client, 'task_lease_release', { ...lease, expectedVersion: version });
    assert.equal(stale.isError, true);
    const renewedVersion = (renewed.structured['lease'] as { version: number }).version;
    const transferred = await call(client, 'task_lease_transfer', {
      ...lease,
      expectedVersion: renewedVersion,
      newOwner: 'codex-main',
      newIdempotencyKey: 'k2',
    });
    assert.equal(transferred.structured['ok'], true, JSON.stringify(transferred.content));
    const released = await call(client, 'task_lease_release', {
      ...lease,
      owner: 'codex-main',
      idempotencyKey: 'k2',
      expectedVersion: (transferred.structured['lease'] as { version: number }).version,
    });
    assert.equal(released.structured['ok'], true, JSON.stringify(released.content));

    const completed = await call(client, 'todo_complete', {
      goalId: GOAL,
      todoId,
      agentId: 'demo',
      evidence: 'tools listed',
      noFollowUp: true,
    });
    assert.equal(completed.structured['ok'], true, JSON.stringify(completed.content));
    const recorded = await call(client, 'refresh_state', {
      goalId: GOAL,
      agentId: 'demo',
      classification: 'validated_progress',
    });
    assert.equal(recorded.structured['ok'], true, JSON.stringify(recorded.content));
  });

  it('refuses a gate decision: todo_complete takes no decisionOutcome, and the gate stays open', async () => {
    const state = path.join(project.dir, '.codex/goals', GOAL, 'ACTIVE_GOAL_STATE.md');
    const before = fs.readFileSync(state, 'utf8');
    const result = await call(client, 'todo_complete', {
      goalId: GOAL,
      todoId: 'todo_gate_publish',
      agentId: 'demo',
      decisionOutcome: 'approve',
    });
    assert.equal(result.isError, true);
    assert.equal(result.structured['error_code'], 'invalid_argument');
    assert.match(String(result.structured['error']), /unknown argument decisionOutcome/);
    const plain = await call(client, 'todo_complete', { goalId: GOAL, todoId: 'todo_gate_publish', agentId: 'demo' });
    assert.equal(plain.isError, true);
    assert.equal(plain.structured['error_code'], 'gate_decision_outcome_required');
    assert.equal(fs.readFileSync(state, 'utf8'), before);
  });

  it('answers bad arguments of every tool with isError naming the field, writing nothing', async () => {
    const state = path.join(project.dir, '.codex/goals', GOAL, 'ACTIVE_GOAL_STATE.md');
    const before = fs.readFileSync(state, 'utf8');
    for (const tool of AGENT_TOOLS) {
      const unknown = await call(client, tool.name, { goalId: GOAL, notAnArgument: 1 });
      assert.equal(unknown.isError, true, tool.name);
      assert.equal(unknown.structured['error_code'], 'invalid_argument', tool.name);
      assert.equal((unknown.structured['error_details'] as { argument: string }).argument, 'notAnArgument', tool.name);
      const wrongType = await call(client, tool.name, { goalId: 42 });
      assert.equal(wrongType.isError, true, tool.name);
      assert.equal((wrongType.structured['error_details'] as { argument: string }).argument, 'goalId', tool.name);
      const text = (wrongType.content as { text: string }[])[0]?.text ?? '';
      assert.match(
        text,
        new RegExp(`^${tool.name} failed: invalid_argument: ${tool.name}: goalId must be `),
        tool.name,
      );
    }
    const missing = await call(client, 'no_such_tool', {});
    assert.equal(missing.isError, true);
    assert.equal(fs.readFileSync(state, 'utf8'), before);
  });

  it('reports an operation’s own failure with its LoopxError code (a goal that is not there)', async () => {
    const result = await call(client, 'quota_status', { goalId: 'no-such-goal' });
    assert.equal(result.isError, true);
    assert.equal(result.structured['ok'], false);
    const cli = await cliJson(project, ['quota', 'status', '--goal-id', 'no-such-goal']);
    assert.equal(result.structured['error_code'], cli['error_code']);
    assert.equal(result.structured['error'], cli['error']);
  });

  it('serves each goal’s status and warnings as resources, and the heartbeat as a prompt', async () => {
    const { resources } = await client.listResources();
    assert.deepEqual(
      resources.map((resource) => resource.uri),
      [`loopx://goals/${GOAL}/status`, `loopx://goals/${GOAL}/warnings`],
    );
    const status = await cliJson(project, ['status', '--goal-id', GOAL]);
    const item = (status['attention_queue'] as { items: Record<string, unknown>[] }).items[0];
    const read = await client.readResource({ uri: `loopx://goals/${GOAL}/status` });
    assert.deepEqual(JSON.parse(String((read.contents[0] as { text: string }).text)), item);
    const warnings = await client.readResource({ uri: `loopx://goals/${GOAL}/warnings` });
    const body = JSON.parse(String((warnings.contents[0] as { text: string }).text)) as Record<string, unknown>;
    assert.deepEqual(body['projection_warnings'], item?.['projection_warnings']);
    assert.ok((body['projection_warnings'] as unknown[]).length > 0, 'the demo has a drift warning');
    await assert.rejects(client.readResource({ uri: 'loopx://goals/nope/status' }), /nope/);

    const { prompts } = await client.listPrompts();
    assert.deepEqual(
      prompts.map((prompt) => prompt.name),
      ['heartbeat'],
    );
    const prompt = await client.getPrompt({ name: 'heartbeat', arguments: { goalId: GOAL, agentId: 'demo' } });
    const cli = await cliJson(project, ['heartbeat-prompt', '--goal-id', GOAL, '--agent-id', 'demo']);
    assert.equal((prompt.messages[0]?.content as { text: string }).text, cli['prompt']);
    await assert.rejects(client.getPrompt({ name: 'heartbeat', arguments: { goalId: GOAL, agentId: 'nobody' } }));
  });
});
