import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateWorkspace } from '../../../bench/workspace/generate';
import { fixedClock } from '../../../src/core/clock';
import {
  DASHBOARD_CONTRACT_FIELDS,
  DashboardStatusSchema,
  parseContractFields,
  type ContractField,
} from '../../../src/core/status/dashboardContract';
import { startStatusServer } from '../../../src/core/server/statusServer';
import { REPO_ROOT } from '../../support/demoWorkspace';
import { auth, request, seededWorkspace, SERVER_TOKEN } from './helpers';

const FIXTURE = path.join(__dirname, 'fixtures', 'status-contract-fields.txt');
/** The spec's copy, beside the repository (present in the project's workspace and in CI). */
const SPEC_COPIES = [
  path.join(REPO_ROOT, '..', 'shared', 'docs', 'loopx-spec', 'status-contract-fields.txt'),
  '/work/shared/docs/loopx-spec/status-contract-fields.txt',
];

type Json = unknown;

function hasType(value: Json, type: string): boolean {
  const literal = /^literal\((.*)\)$/.exec(type);
  if (literal) return value === literal[1];
  switch (type) {
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'object':
    case 'record':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    case 'union':
      return value !== undefined;
    default:
      throw new Error(`unknown type ${type}`);
  }
}

/**
 * Checks a payload against the field list without the zod schema (an independent reading of the
 * contract): each line names the objects its last step lives in (following `[]` into every
 * element); an `always` field must be there; an `if-present` field must be there once its parent
 * is; a `name[]` line types every element of `name` when the array is there.
 */
function contractProblems(payload: Json, fields: readonly ContractField[]): string[] {
  const problems: string[] = [];
  for (const field of fields) {
    const steps = field.path.split('.');
    const last = steps[steps.length - 1] as string;
    let parents: { value: Json; where: string }[] = [{ value: payload, where: '' }];
    for (const step of steps.slice(0, -1)) {
      const name = step.replace(/\[\]$/, '');
      const next: { value: Json; where: string }[] = [];
      for (const parent of parents) {
        if (typeof parent.value !== 'object' || parent.value === null || Array.isArray(parent.value)) continue;
        const child = (parent.value as Record<string, Json>)[name];
        const where = `${parent.where}.${name}`;
        if (child === undefined) {
          if (field.presence === 'always') problems.push(`${where} is missing (needed by ${field.path})`);
          continue;
        }
        if (step.endsWith('[]')) {
          if (!Array.isArray(child)) problems.push(`${where} is not an array`);
          else child.forEach((element, index) => next.push({ value: element, where: `${where}[${index}]` }));
        } else {
          next.push({ value: child, where });
        }
      }
      parents = next;
    }
    const name = last.replace(/\[\]$/, '');
    for (const parent of parents) {
      if (typeof parent.value !== 'object' || parent.value === null || Array.isArray(parent.value)) {
        problems.push(`${parent.where} should be an object holding ${name}`);
        continue;
      }
      const value = (parent.value as Record<string, Json>)[name];
      const where = `${parent.where}.${name}`;
      if (last.endsWith('[]')) {
        if (value === undefined) continue;
        if (!Array.isArray(value)) problems.push(`${where} is not an array`);
        else
          value.forEach((element, index) => {
            if (!hasType(element, field.type)) problems.push(`${where}[${index}] is not ${field.type}`);
          });
      } else if (value === undefined) {
        problems.push(`${where} is missing (${field.presence})`);
      } else if (!hasType(value, field.type)) {
        problems.push(`${where} is not ${field.type}: ${JSON.stringify(value).slice(0, 80)}`);
      }
    }
  }
  return problems;
}

async function servedStatus(registryPath: string, now: string): Promise<Record<string, unknown>> {
  const server = await startStatusServer({
    registryPath,
    homeDir: os.homedir(),
    clock: fixedClock(now),
    token: SERVER_TOKEN,
    port: 0,
    watch: false,
  });
  try {
    const answer = await request(server.port, '/status.json', { headers: auth() });
    assert.equal(answer.status, 200, answer.text.slice(0, 300));
    return answer.json();
  } finally {
    await server.close();
  }
}

describe('the /status.json contract of LoopX dashboards (status-contract-fields.txt)', function () {
  this.timeout(60_000);
  const fields = parseContractFields(fs.readFileSync(FIXTURE, 'utf8'));

  it("our copy of the field list is the spec's, and the schema is generated from exactly that list", () => {
    const spec = SPEC_COPIES.find((file) => fs.existsSync(file));
    if (spec !== undefined) assert.equal(fs.readFileSync(FIXTURE, 'utf8'), fs.readFileSync(spec, 'utf8'));
    assert.deepEqual(parseContractFields(DASHBOARD_CONTRACT_FIELDS), fields);
    assert.ok(fields.length > 150);
    assert.ok(fields.some((f) => f.presence === 'always' && f.path === 'attention_queue.items[].recommended_action'));
  });

  it('the demo workspace as served passes every field check and the generated schema', async () => {
    const payload = await servedStatus(seededWorkspace().registryPath, '2026-11-28T09:30:00Z');
    assert.deepEqual(contractProblems(payload, fields), []);
    assert.equal(DashboardStatusSchema.safeParse(payload).success, true);
    // The checks reach the if-present blocks: they are there on the demo goal.
    const item = (payload['attention_queue'] as { items: Record<string, unknown>[] }).items[0] ?? {};
    for (const key of ['project_asset', 'goal_channel_projection', 'user_todos', 'agent_todos', 'quota'])
      assert.ok(key in item, key);
    assert.equal(item['activation_state'], 'active');
    assert.deepEqual(payload['status_contract'], {
      schema_version: 2,
      minimum_dashboard_schema_version: 2,
      producer: 'loopx status',
      reload_hint: 'restart `loopx serve-status`, or turn the loopx.statusServer.enabled setting off and on',
    });
    const asset = item['project_asset'] as Record<string, unknown>;
    // The open user gate holds the goal for the controller (the state `loopx status` shows too).
    assert.deepEqual(asset['quota'], {
      state: 'operator_gate',
      compute: 0.5,
      reason: 'operator gate blocks gated delivery; safe non-gated steering may continue',
      window_hours: 24,
      slot_minutes: 30,
      allowed_slots: 24,
      spent_slots: 1,
    });
    // The original's block (projection/projectAsset.ts): who acts, the gate code, how to support, when to stop.
    assert.deepEqual(
      [asset['owner'], asset['gate'], asset['support_mode'], asset['stop_condition']],
      [
        'controller',
        'active_state_user_gate',
        'decision_support',
        'stop until the controller or owner resolves this gate',
      ],
    );
    const goals = (payload['run_history'] as { goals: Record<string, unknown>[] }).goals;
    assert.equal(goals[0]?.['display_name'], item['display_name'] as string);
    assert.equal((goals[0]?.['quota'] as Record<string, unknown>)['allowed_slots'], 24);
  });

  it('a generated workspace (10 goals, todos, gates, runs) passes too', async () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-contract-')), 'ws');
    const workspace = generateWorkspace({ goals: 10, todos: 20, runs: 50, seed: 3, out });
    const payload = await servedStatus(workspace.registryPath, workspace.now);
    assert.equal(payload['goal_count'], 10);
    assert.deepEqual(contractProblems(payload, fields), []);
    assert.equal(DashboardStatusSchema.safeParse(payload).success, true);
  });

  it('the checks fail when an always field is missing or any field has the wrong type', async () => {
    const payload = await servedStatus(seededWorkspace().registryPath, '2026-11-28T09:30:00Z');
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const broken = (edit: (copy: Record<string, any>) => void): Record<string, unknown> => {
      const copy = JSON.parse(JSON.stringify(payload)) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
      edit(copy);
      return copy;
    };
    const cases = [
      broken((p) => {
        delete p['contract'].summary.errors;
      }),
      broken((p) => {
        p['goal_count'] = '1';
      }),
      broken((p) => {
        delete p['attention_queue'].items[0].severity;
      }),
      broken((p) => {
        p['attention_queue'].items[0].project_asset.owner = null;
      }),
      broken((p) => {
        p['attention_queue'].items[0].goal_channel_projection.mode = 'writable';
      }),
      broken((p) => {
        p['attention_queue'].items[0].goal_channel_projection.decision_frame.quiet_noop_allowed = 'no';
      }),
      broken((p) => {
        p['run_history'].goals[0].latest_runs[0].generated_at = null;
      }),
      broken((p) => {
        p['attention_queue'].items[0].agent_todos.items[0].index = '2';
      }),
    ];
    for (const [index, copy] of cases.entries()) {
      assert.notDeepEqual(contractProblems(copy, fields), [], `case ${index}`);
      assert.equal(DashboardStatusSchema.safeParse(copy).success, false, `case ${index}`);
    }
  });
});
