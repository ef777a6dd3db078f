import assert from 'node:assert/strict';
import Ajv2020 from 'ajv/dist/2020';
import { AGENT_TOOLS, EXCLUDED_OPERATIONS, toolArgumentSchema } from '../../../src/core/agentTools';
import { commandByKey } from '../../../src/core/commands/catalog';
import { argumentFields } from '../../../src/core/ops/fields';
import { OPERATIONS } from '../../../src/core/ops/index';

/** The operations a person decides: none of them may ever be an agent tool (issue 29, "human-only actions"). */
const HUMAN_ONLY = [
  'todoUpdate',
  'todoSupersede',
  'todoDefer',
  'handoffModeSet',
  'quotaVoidSlot',
  'createGoal',
  'registerAgent',
  'configureGoal',
  'configureAgent',
  'removeAgent',
  'agentOnboard',
  'syncGlobal',
  'slashCommands',
  'archiveRuntime',
  'pauseGoal',
  'resumeGoal',
  'goalLifecycle',
  'turnRunOnce',
  'turnLoop',
];

/** The agent writes issue 29 names; every other tool must be read-only in the catalog. */
const AGENT_WRITES = [
  'todo_add',
  'todo_claim',
  'todo_complete',
  'refresh_state',
  'spend_slot',
  'task_lease_acquire',
  'task_lease_renew',
  'task_lease_transfer',
  'task_lease_release',
];

describe('agent tool catalog', () => {
  it('covers every operation: each is a tool or excluded with a reason, never both', () => {
    const tools = new Set(AGENT_TOOLS.map((tool) => tool.op as string));
    const excluded = EXCLUDED_OPERATIONS as Record<string, string>;
    for (const key of Object.keys(OPERATIONS)) {
      const isTool = tools.has(key);
      const reason = excluded[key];
      assert.ok(
        isTool !== (reason !== undefined),
        `${key}: ${isTool ? 'a tool and excluded' : 'neither a tool nor excluded'}`,
      );
      if (reason !== undefined) assert.ok(reason.trim().length > 10, `${key}: its exclusion needs a reason`);
    }
    for (const key of Object.keys(excluded)) assert.ok(key in OPERATIONS, `${key} is excluded but is no operation`);
    assert.equal(new Set(AGENT_TOOLS.map((tool) => tool.name)).size, AGENT_TOOLS.length, 'tool names are unique');
  });

  it('makes no human-only operation a tool, and says so for each', () => {
    for (const key of HUMAN_ONLY) {
      assert.ok(!AGENT_TOOLS.some((tool) => tool.op === key), `${key} must not be a tool`);
      assert.match((EXCLUDED_OPERATIONS as Record<string, string>)[key] ?? '', /human-only|a person/, key);
    }
  });

  it('writes only through the agent writes; every other tool is read-only in the catalog', () => {
    for (const tool of AGENT_TOOLS) {
      const mutation = commandByKey(tool.op).mutation;
      assert.equal(tool.readOnly, mutation === 'read_only', tool.name);
      if (!AGENT_WRITES.includes(tool.name)) assert.equal(mutation, 'read_only', `${tool.name} writes`);
    }
    assert.deepEqual(
      AGENT_TOOLS.filter((tool) => !tool.readOnly)
        .map((tool) => tool.name)
        .sort(),
      [...AGENT_WRITES].sort(),
    );
  });

  it('withholds the gate decision from todo_complete: deciding a gate is a person’s', () => {
    const tool = AGENT_TOOLS.find((candidate) => candidate.name === 'todo_complete');
    assert.ok(tool);
    assert.ok(!('decisionOutcome' in (tool.inputSchema.properties ?? {})));
    assert.ok('decisionOutcome' in OPERATIONS.todoComplete.args.shape, 'the operation itself still takes it');
    assert.equal(
      toolArgumentSchema('todo_complete').safeParse({ goalId: 'g', todoId: 't', decisionOutcome: 'approve' }).success,
      false,
    );
  });

  it('gives every tool a valid JSON Schema of its operation’s arguments (ajv, strict)', () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    for (const tool of AGENT_TOOLS) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      const validate = ajv.compile(tool.inputSchema);
      const fields = argumentFields(toolArgumentSchema(tool.name));
      assert.deepEqual(
        Object.keys(tool.inputSchema.properties ?? {}),
        fields.map((field) => field.key),
        tool.name,
      );
      const required = fields.filter((field) => field.required && field.kind !== 'boolean').map((field) => field.key);
      assert.deepEqual(
        [...((tool.inputSchema['required'] as string[] | undefined) ?? [])].sort(),
        required.sort(),
        tool.name,
      );
      // The schema refuses what the operation refuses at the boundary: an unknown argument.
      assert.equal(validate({ goalId: 'g', notAnArgument: 1 }), false, tool.name);
      assert.ok(tool.description.length > 20, tool.name);
    }
  });
});
