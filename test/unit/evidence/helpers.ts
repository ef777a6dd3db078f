import * as fs from 'node:fs';
import { parseRolloutEvents, rolloutEventLogPath, type RolloutEvent } from '../../../src/core/evidence/rolloutLog';
import { runLoopx } from '../cli/run';
import { NOW, type Workspace } from '../quota/helpers';

const PARSER = [
  '- [ ] [P1] Write the parser.',
  '  <!-- loopx:todo todo_id=todo_parser status=open task_class=advancement_task -->',
];
const PRINTER = [
  '- [ ] [P2] Write the printer.',
  '  <!-- loopx:todo todo_id=todo_printer status=open task_class=advancement_task -->',
];
const stateWith = (todos: string[]): string =>
  ['---', 'status: active', '---', '# Goal', '', '## User Todo', '', '## Agent Todo', ...todos, ''].join('\n');

/** A goal state with one open agent todo, `todo_parser`. */
export const ONE_TODO = stateWith(PARSER);
/** A goal state with two open agent todos, `todo_parser` (P1) then `todo_printer` (P2). */
export const TWO_TODOS = stateWith([...PARSER, ...PRINTER]);

/** `loopx --format json …` on the workspace, in-process, at the quota helpers' NOW. */
export function cli(ws: Workspace, args: string[]) {
  return runLoopx(['--registry', ws.registryPath, '--format', 'json', ...args], {
    cwd: ws.dir,
    env: { HOME: ws.dir },
    now: NOW,
  });
}

/** The rollout events of goal `g`, oldest first (none when the log does not exist). */
export function events(ws: Workspace): RolloutEvent[] {
  const file = rolloutEventLogPath(ws.runtimeRoot, 'g');
  return fs.existsSync(file) ? parseRolloutEvents(fs.readFileSync(file, 'utf8')).events : [];
}

/** `quota spend-slot --execute` for agent-a on goal g with this turn id (and any further flags). */
export const spend = (ws: Workspace, turn: string, extra: string[] = []) =>
  cli(ws, [
    'quota',
    'spend-slot',
    '--goal-id',
    'g',
    '--agent-id',
    'agent-a',
    '--turn-instance-id',
    turn,
    '--execute',
    ...extra,
  ]);
