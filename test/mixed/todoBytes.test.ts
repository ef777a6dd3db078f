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

/** Each step: one command both programs run on their own copy (the goal is `g`, its only agent `codex-a`). */
const STEPS: { name: string; args: string[] }[] = [
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

describe('mixed team: one todo edit by each program gives the same file, read the same by the original', () => {
  it('user gate, user action, claim, complete with a successor', () => {
    const theirs = mixedWorkspace('bytes-original');
    const ours = mixedWorkspace('bytes-ours');
    const stateOf: Record<'theirs' | 'ours', string> = {
      theirs: writeGoal(theirs, 'g', { compute: 1, window_hours: 24 }, [AGENT], STATE),
      ours: writeGoal(ours, 'g', { compute: 1, window_hours: 24 }, [AGENT], STATE),
    };
    try {
      for (const step of STEPS) {
        const args = [...step.args.slice(0, 2), '--goal-id', 'g', ...step.args.slice(2)];
        const byOriginal = run('original', theirs, args);
        const byOurs = run('ours', ours, args);
        assert.equal(
          byOurs.code,
          byOriginal.code,
          `${step.name}: exit ${byOurs.code} (ours) vs ${byOriginal.code} (original)\nours ${byOurs.stdout}${byOurs.stderr}\noriginal ${byOriginal.stdout}${byOriginal.stderr}`,
        );
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
      assert.equal(
        path.basename(stateOf.ours),
        'ACTIVE_GOAL_STATE.md',
        'the comparison ran on the goal state files themselves',
      );
    } finally {
      for (const w of [theirs, ours]) {
        stopLeftovers(w);
        fs.rmSync(w.dir, { recursive: true, force: true });
      }
    }
  });
});
