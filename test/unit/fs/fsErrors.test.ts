import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cli } from '../evidence/helpers';
import { makeWorkspace, type Workspace } from '../quota/helpers';

/**
 * Issue 34, defect 10: a file-system failure reaches users as one `file_system_error` naming the path,
 * the problem and the fix, never as Node's errno text (`ELOOP: too many symbolic links encountered,
 * stat '/…'`). The eight cases the adversarial run found, through the CLI.
 */

const runtime = (ws: Workspace, ...parts: string[]): string => path.join(ws.runtimeRoot, ...parts);
const refresh = ['refresh-state', '--goal-id', 'g', '--classification', 'state_refreshed', '--agent-id', 'agent-a'];

const CASES: { name: string; setup: (ws: Workspace) => string; args: string[] }[] = [
  {
    name: 'a state file that is a symlink loop (status)',
    setup: (ws) => {
      fs.rmSync(ws.statePath);
      fs.symlinkSync(ws.statePath, ws.statePath);
      return ws.statePath;
    },
    args: ['status'],
  },
  {
    name: 'a registry that is a symlink loop',
    setup: (ws) => {
      fs.rmSync(ws.registryPath);
      fs.symlinkSync(ws.registryPath, ws.registryPath);
      return ws.registryPath;
    },
    args: ['status'],
  },
  {
    name: 'a runtime root that is a file',
    setup: (ws) => {
      fs.mkdirSync(path.dirname(ws.runtimeRoot), { recursive: true });
      fs.writeFileSync(ws.runtimeRoot, 'x');
      return ws.runtimeRoot;
    },
    args: refresh,
  },
  {
    name: 'a goals folder that is a file',
    setup: (ws) => {
      fs.mkdirSync(ws.runtimeRoot, { recursive: true });
      fs.writeFileSync(runtime(ws, 'goals'), 'x');
      return runtime(ws, 'goals');
    },
    args: refresh,
  },
  {
    name: 'a runs folder that is a file',
    setup: (ws) => {
      fs.mkdirSync(runtime(ws, 'goals', 'g'), { recursive: true });
      fs.writeFileSync(runtime(ws, 'goals', 'g', 'runs'), 'x');
      return runtime(ws, 'goals', 'g', 'runs');
    },
    args: refresh,
  },
  {
    name: "a goal's runtime folder that is a symlink loop",
    setup: (ws) => {
      fs.mkdirSync(runtime(ws, 'goals'), { recursive: true });
      fs.symlinkSync(runtime(ws, 'goals', 'g'), runtime(ws, 'goals', 'g'));
      return runtime(ws, 'goals', 'g');
    },
    args: refresh,
  },
  {
    name: 'an event log that is a folder (todo add appends to it)',
    setup: (ws) => {
      const log = runtime(ws, 'goals', 'g', 'rollout-event-log.jsonl');
      fs.mkdirSync(log, { recursive: true });
      return log;
    },
    args: ['todo', 'add', '--goal-id', 'g', '--text', 'Write the printer.'],
  },
  {
    name: 'a task-leases folder that is a file',
    setup: (ws) => {
      fs.mkdirSync(runtime(ws, 'goals', 'g'), { recursive: true });
      fs.writeFileSync(runtime(ws, 'goals', 'g', 'task-leases'), 'x');
      return runtime(ws, 'goals', 'g', 'task-leases');
    },
    args: [
      'task-lease',
      'acquire',
      '--goal-id',
      'g',
      '--todo-id',
      'todo_parser',
      '--owner',
      'agent-a',
      '--idempotency-key',
      'k1',
    ],
  },
];

describe('file-system failures reach users as LoopX errors (issue 34, defect 10)', () => {
  for (const { name, setup, args } of CASES) {
    it(name, async () => {
      const ws = makeWorkspace({ domain: 'demo' });
      const culprit = setup(ws);
      const failed = await cli(ws, args);
      assert.equal(failed.code, 1, failed.stdout);
      const { code, message, details } = failed.error();
      assert.equal(code, 'file_system_error', message);
      assert.doesNotMatch(message, /\bE[A-Z]{3,}\b|illegal operation|too many symbolic links encountered/, message);
      assert.ok(
        message.includes(culprit) || String(details['file_in_the_way']) === culprit,
        `${message} does not name ${culprit}`,
      );
      assert.match(message, /; (replace|move|give|point|free|use) /, 'the message says what to do');
      const markdown = await cli(ws, ['--format', 'markdown', ...args]);
      assert.doesNotMatch(markdown.stderr, /\bE[A-Z]{3,}:|\n\s+at /, markdown.stderr);
    });
  }
});
