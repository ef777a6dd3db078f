import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { mixedWorkspace, run, stopLeftovers, writeGoal, type MixedWorkspace, type RunResult } from './helpers';

/**
 * The same todo edits by both programs, each on its own copy of one workspace (issue 30): after every step the two
 * state files are byte for byte the same once times are set aside, and the original's own parser (`todo list`) reads
 * the two files the same way.
 */

const STATE = `---
status: active
objective: "Mixed team fixture."
updated_at: 2026-07-03T09:55:53+00:00
---

# Active Goal State

## User Todo / Owner Review Reading Queue


## Agent Todo

- [ ] [P0] Do the work
  <!-- loopx:todo todo_id=todo_aaaaaaaaaaaa status=open task_class=advancement_task -->
- [ ] [P1] Write the docs
  <!-- loopx:todo todo_id=todo_bbbbbbbbbbbb status=open task_class=advancement_task -->
- [ ] [P2] Try the old approach
  <!-- loopx:todo todo_id=todo_cccccccccccc status=open task_class=advancement_task -->
- [ ] [P3] Polish later
  <!-- loopx:todo todo_id=todo_dddddddddddd status=open task_class=advancement_task -->

## Next Action

- Do the work.

## Progress Ledger

- Fixture initialized.
`;

const AGENT = 'codex-a';
const OTHER = 'codex-b';

/**
 * Each step: one command both programs run on their own copy (the goal is `g`); `original` when the original spells
 * the same edit otherwise (it has no `todo defer`: its deferral is `todo update --status deferred`). `refused`: both
 * must refuse it (exit 1) and write nothing.
 */
interface Step {
  name: string;
  args: string[];
  original?: string[];
  refused?: boolean;
}

const ONE_AGENT_STEPS: Step[] = [
  {
    name: 'user gate',
    args: ['todo', 'add', '--role', 'user', '--task-class', 'user_gate', '--text', 'Approve the release plan'],
  },
  {
    name: 'user action',
    args: ['todo', 'add', '--role', 'user', '--task-class', 'user_action', '--text', 'Rotate the deploy key'],
  },
  {
    name: 'claim',
    args: ['todo', 'claim', '--todo-id', 'todo_aaaaaaaaaaaa', '--claimed-by', AGENT, '--agent-id', AGENT],
  },
  {
    name: 'complete with a successor',
    args: [
      'todo',
      'complete',
      '--todo-id',
      'todo_aaaaaaaaaaaa',
      '--agent-id',
      AGENT,
      '--evidence',
      'tests pass',
      '--next-agent-todo',
      'Follow up on the work',
    ],
  },
  {
    name: 'blocked, with its reason',
    args: [
      'todo',
      'update',
      '--todo-id',
      'todo_bbbbbbbbbbbb',
      '--status',
      'blocked',
      '--reason',
      'waits for the API key',
    ],
  },
  {
    name: 'our defer, the original deferral (a resume condition, spelt in capitals)',
    args: [
      'todo',
      'defer',
      '--todo-id',
      'todo_dddddddddddd',
      '--reason',
      'after the docs',
      '--resume-when',
      'TODO_DONE:todo_bbbbbbbbbbbb',
    ],
    original: [
      'todo',
      'update',
      '--todo-id',
      'todo_dddddddddddd',
      '--status',
      'deferred',
      '--reason',
      'after the docs',
      '--resume-when',
      'TODO_DONE:todo_bbbbbbbbbbbb',
    ],
  },
  {
    name: 'resume',
    args: ['todo', 'update', '--todo-id', 'todo_dddddddddddd', '--status', 'open'],
  },
  {
    name: 'defer again by the original spelling (the resume condition kept on the todo)',
    args: ['todo', 'update', '--todo-id', 'todo_dddddddddddd', '--status', 'deferred', '--reason', 'still later'],
  },
  {
    name: 'a deferral without a resume condition',
    args: ['todo', 'defer', '--todo-id', 'todo_cccccccccccc', '--reason', 'some day'],
    original: ['todo', 'update', '--todo-id', 'todo_cccccccccccc', '--status', 'deferred', '--reason', 'some day'],
    refused: true,
  },
  {
    name: 'a resume condition the original does not support',
    args: ['todo', 'defer', '--todo-id', 'todo_cccccccccccc', '--reason', 'x', '--resume-when', 'capacity_available'],
    original: [
      'todo',
      'update',
      '--todo-id',
      'todo_cccccccccccc',
      '--status',
      'deferred',
      '--reason',
      'x',
      '--resume-when',
      'capacity_available',
    ],
    refused: true,
  },
  {
    name: 'supersede with a replacement (inherits the priority, both linked)',
    args: [
      'todo',
      'supersede',
      '--todo-id',
      'todo_cccccccccccc',
      '--reason',
      'a better approach',
      '--next-agent-todo',
      'Try the new approach',
    ],
  },
];

/** A goal with two agents: user todos name the lane they are for, an unscoped one is refused by both. */
const TWO_AGENT_STEPS: Step[] = [
  {
    name: 'a gate for one lane',
    args: ['todo', 'add', '--role', 'user', '--task-class', 'user_gate', '--text', 'Approve', '--blocks-agent', OTHER],
  },
  {
    name: 'an action bound to an agent',
    args: ['todo', 'add', '--role', 'user', '--task-class', 'user_action', '--text', 'Rotate', '--bound-agent', AGENT],
  },
  {
    name: 'an unscoped gate',
    args: ['todo', 'add', '--role', 'user', '--task-class', 'user_gate', '--text', 'Approve all'],
    refused: true,
  },
  {
    name: 'an unbound action',
    args: ['todo', 'add', '--role', 'user', '--task-class', 'user_action', '--text', 'Unbound'],
    refused: true,
  },
  {
    name: 'complete without --agent-id',
    args: ['todo', 'complete', '--todo-id', 'todo_bbbbbbbbbbbb', '--evidence', 'done'],
    refused: true,
  },
  {
    name: 'a final without evidence',
    args: ['todo', 'complete', '--todo-id', 'todo_bbbbbbbbbbbb', '--agent-id', AGENT, '--no-follow-up'],
    refused: true,
  },
  {
    name: 'complete by its agent',
    args: [
      'todo',
      'complete',
      '--todo-id',
      'todo_bbbbbbbbbbbb',
      '--agent-id',
      AGENT,
      '--no-follow-up',
      '--evidence',
      'docs merged',
    ],
  },
];

/**
 * Times are not compared, nor their zone's spelling: the original writes `+00:00` (`%2B00:00` in todo metadata),
 * ours `Z`, the same instant. Nor the workspace's own path.
 */
function normalize(text: string, w: MixedWorkspace): string {
  return text
    .split(w.dir)
    .join('<T>')
    .replace(
      /\d{4}-\d{2}-\d{2}T\d{2}(?::|%3A)\d{2}(?::|%3A)\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}(?::|%3A)\d{2}|%2B\d{2}(?::|%3A)\d{2})?/gi,
      '<TIME>',
    );
}

function listed(result: RunResult, w: MixedWorkspace): unknown {
  assert.equal(result.code, 0, `todo list: ${result.stdout}\n${result.stderr}`);
  return JSON.parse(normalize(result.stdout, w));
}

function compareSteps(label: string, agents: readonly string[], steps: readonly Step[]): void {
  const theirs = mixedWorkspace(`${label}-original`);
  const ours = mixedWorkspace(`${label}-ours`);
  const stateOf: Record<'theirs' | 'ours', string> = {
    theirs: writeGoal(theirs, 'g', { compute: 1, window_hours: 24 }, agents, STATE),
    ours: writeGoal(ours, 'g', { compute: 1, window_hours: 24 }, agents, STATE),
  };
  const withGoal = (args: readonly string[]) => [...args.slice(0, 2), '--goal-id', 'g', ...args.slice(2)];
  try {
    for (const step of steps) {
      const before = fs.readFileSync(stateOf.ours, 'utf8');
      const byOriginal = run('original', theirs, withGoal(step.original ?? step.args));
      const byOurs = run('ours', ours, withGoal(step.args));
      const both = `ours ${byOurs.stdout}${byOurs.stderr}\noriginal ${byOriginal.stdout}${byOriginal.stderr}`;
      assert.equal(
        byOurs.code,
        byOriginal.code,
        `${step.name}: exit ${byOurs.code} (ours) vs ${byOriginal.code}\n${both}`,
      );
      if (step.refused === true) {
        assert.equal(byOurs.code, 1, `${step.name}: both refuse it\n${both}`);
        assert.equal(fs.readFileSync(stateOf.ours, 'utf8'), before, `${step.name}: ours wrote nothing`);
      } else assert.equal(byOurs.code, 0, `${step.name}\n${both}`);
      const originalFile = normalize(fs.readFileSync(stateOf.theirs, 'utf8'), theirs);
      const ourFile = normalize(fs.readFileSync(stateOf.ours, 'utf8'), ours);
      assert.equal(ourFile, originalFile, `${step.name}: the state files differ (times aside)`);
      // The original's parser reads our file as it reads its own.
      const list = ['todo', 'list', '--goal-id', 'g'];
      assert.deepEqual(
        listed(run('original', ours, list), ours),
        listed(run('original', theirs, list), theirs),
        `${step.name}: the original reads our file differently`,
      );
    }
    assert.equal(path.basename(stateOf.ours), 'ACTIVE_GOAL_STATE.md', 'the comparison ran on the goal state files');
  } finally {
    for (const w of [theirs, ours]) {
      stopLeftovers(w);
      fs.rmSync(w.dir, { recursive: true, force: true });
    }
  }
}

describe('mixed team: one todo edit by each program gives the same file, read the same by the original', () => {
  it('one agent: user gate and action, claim, complete with a successor, blocked, defer and resume, supersede', () => {
    compareSteps('bytes', [AGENT], ONE_AGENT_STEPS);
  });

  it('two agents: user todos bound to a lane (--blocks-agent, --bound-agent), unscoped ones refused, complete by its agent', () => {
    compareSteps('bytes2', [AGENT, OTHER], TWO_AGENT_STEPS);
  });
});
