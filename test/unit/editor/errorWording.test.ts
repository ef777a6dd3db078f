import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  asksForAgent,
  asksToConfigureAgent,
  EDITOR_ERROR_WORDING,
  editorErrorText,
  editorRefusalText,
  withoutCliFlags,
} from '../../../src/common/errorWording';
import { LOOPX_ERROR_CODES, type LoopxErrorCode } from '../../../src/core/errorCodes';
import { LoopxError } from '../../../src/core/errors';
import { goalConfigProblem } from '../../../src/core/ops/configureGoal';

const CLI_FLAG = /(^|[^\w-])--[a-z]/;

/** A message worded for the CLI the way the core words many: options bare, in asides, in lists. */
const CLI_WORDED =
  "goal 'g' requires --agent-id; pass --allow-registered only after confirming (--quota-compute), or --execute, --expected-version or --lease-key";

/** Every `new LoopxError('<code>', …)` in src/core whose call names a CLI option, by code. */
function codesWhoseCoreMessageNamesAnOption(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const visit = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(file);
      else if (entry.name.endsWith('.ts')) {
        const source = fs.readFileSync(file, 'utf8');
        for (const match of source.matchAll(/new LoopxError\(\s*'([a-z_]+)'/g)) {
          // The call's text, up to its closing parenthesis.
          let depth = 1;
          let end = (match.index ?? 0) + match[0].length;
          while (end < source.length && depth > 0) {
            if (source[end] === '(') depth += 1;
            else if (source[end] === ')') depth -= 1;
            end += 1;
          }
          const call = source.slice(match.index, end);
          const flags = call.match(/--[a-z][a-z-]+/g);
          if (flags !== null) found.set(match[1] as string, [...(found.get(match[1] as string) ?? []), ...flags]);
        }
      }
    }
  };
  visit(path.join(__dirname, '../../../src/core'));
  return found;
}

describe('editor wording by error code', function () {
  it('has an entry for every code, and no other', function () {
    assert.deepEqual(Object.keys(EDITOR_ERROR_WORDING).sort(), [...LOOPX_ERROR_CODES].sort());
  });

  it('shows no CLI option for any code the palette, tree, webviews or chat can meet', function () {
    for (const code of LOOPX_ERROR_CODES) {
      const error = new LoopxError(code, CLI_WORDED, { goal_id: 'tidy-notes', todo_id: 'todo_a' });
      const shown = editorErrorText(error);
      assert.ok(shown.trim() !== '', `${code}: says something`);
      assert.doesNotMatch(shown, CLI_FLAG, `${code}: "${shown}"`);
      // The same refusal returned as data (archive-runtime's `ok: false`) reads the same.
      assert.equal(editorRefusalText(code, CLI_WORDED, { goal_id: 'tidy-notes', todo_id: 'todo_a' }), shown);
    }
  });

  it('gives its own sentence to every code whose core message names a CLI option', function () {
    const named = codesWhoseCoreMessageNamesAnOption();
    assert.ok(
      named.has('goal_registered') && named.has('refresh_multi_agent_requires_agent_id'),
      'the scan finds them',
    );
    const shownAsIs = [...named.keys()].filter((code) => EDITOR_ERROR_WORDING[code as LoopxErrorCode] === 'asIs');
    assert.deepEqual(shownAsIs, [], 'these codes name CLI options in src/core and are shown as is');
  });

  it('asks which agent for a multi-agent refusal, and not for others', function () {
    const multiAgent = new LoopxError(
      'refresh_multi_agent_requires_agent_id',
      "multi-agent refresh-state requires --agent-id; text inference is disabled. Goal 'tidy-notes' registers demo, codex-main",
      { goal_id: 'tidy-notes' },
    );
    assert.equal(asksForAgent(multiAgent), true);
    assert.equal(editorErrorText(multiAgent), '"tidy-notes" has several agents: choose the agent this is for.');
    assert.equal(asksForAgent(new LoopxError('goal_not_found', 'no goal')), false);
    assert.equal(asksForAgent(new Error('requires --agent-id')), false);
  });

  it('offers Configure Agent for an agent with no executor, in words without the CLI command', function () {
    // The core's own text (turn/context.ts): the CLI command that configures the executor.
    const missing = new LoopxError(
      'executor_missing',
      'agent codex-main has no executor; configure one with loopx agent configure --goal-id tidy-notes --agent-id codex-main --preset <claude-code|codex|opencode|command|demo> --execute (LoopX: Configure Agent…), which sets coordination.agent_profiles.codex-main.executor in /x/registry.json (see docs/executors.md)',
      { agent_id: 'codex-main' },
    );
    assert.equal(asksToConfigureAgent(missing), true);
    assert.equal(asksForAgent(missing), false);
    const shown = editorErrorText(missing);
    assert.equal(
      shown,
      'Agent "codex-main" has no executor to run its turns: set one up with "LoopX: Configure Agent…".',
    );
    assert.doesNotMatch(shown, /loopx agent configure|preset|execute/);
    assert.equal(asksToConfigureAgent(new LoopxError('goal_not_found', 'no goal')), false);
    assert.equal(asksToConfigureAgent(new Error('has no executor')), false);
  });

  it("words the archive refusal in the dialog's terms", function () {
    const shown = editorRefusalText(
      'goal_registered',
      'goal exists in registry; pass --allow-registered only after confirming it is obsolete',
      { goal_id: 'tidy-notes' },
    );
    assert.match(shown, /still registered/);
    assert.doesNotMatch(shown, /allow/);
  });

  it('words Configure Goal prompts without the CLI option', function () {
    for (const input of [
      { quotaCompute: '-1' },
      { quotaCompute: '2' },
      { quotaWindowHours: '0' },
      { quotaCompute: 'x' },
    ]) {
      const problem = goalConfigProblem(input);
      assert.ok(problem !== null, JSON.stringify(input));
      assert.doesNotMatch(problem, CLI_FLAG, problem);
    }
    assert.equal(goalConfigProblem({ quotaCompute: '-1' }), 'Must be greater than or equal to 0, got -1');
  });

  it('takes options out of messages it shows as is', function () {
    assert.equal(withoutCliFlags('must be at most 1 (--quota-compute), got 2'), 'must be at most 1, got 2');
    assert.equal(withoutCliFlags('pass --agent-id or --lease-key'), 'pass agent id or lease key');
    assert.equal(
      withoutCliFlags('a range like 2026-01-01--2026-02-01 stays'),
      'a range like 2026-01-01--2026-02-01 stays',
    );
    assert.equal(editorErrorText(new Error('plain failure')), 'plain failure');
  });
});
