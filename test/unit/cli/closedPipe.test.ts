import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROLLOUT_EVENT_SCHEMA, rolloutEventLogPath } from '../../../src/core/evidence/rolloutLog';
import { REPO_ROOT } from '../../support/demoWorkspace';
import { makeWorkspace } from '../quota/helpers';

/**
 * Issue 34, defect 9: output over 64 KB piped into a reader that closes early (`| head`) ends
 * quietly with the command's own exit code (0), not an EPIPE stack trace. A real pipe, through bash.
 */

const MAIN = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');

function shell(script: string, cwd: string): { stdout: string; stderr: string; status: number | null } {
  const run = spawnSync('bash', ['-c', script], {
    cwd,
    env: { PATH: process.env['PATH'] ?? '', HOME: cwd, NODE: process.execPath, MAIN, REPO: REPO_ROOT },
    encoding: 'utf8',
  });
  return { stdout: run.stdout, stderr: run.stderr, status: run.status };
}

describe('output into a pipe its reader closes early (issue 34, defect 9)', () => {
  it('`loopx … | head -c 100` ends quietly with exit code 0', () => {
    const ws = makeWorkspace();
    const file = rolloutEventLogPath(ws.runtimeRoot, 'g');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const rows = Array.from({ length: 1000 }, (_, i) =>
      JSON.stringify({
        schema_version: ROLLOUT_EVENT_SCHEMA,
        goal_id: 'g',
        event_kind: 'todo_add',
        recorded_at: '2026-01-15T09:00:00+00:00',
        summary: `row ${i} `.padEnd(120, 'x'),
      }),
    );
    fs.writeFileSync(file, `${rows.join('\n')}\n`);
    // `--import tsx` resolves from the repository, so the CLI runs from there with the workspace's registry.
    const cli = `"$NODE" --import tsx "$MAIN" --registry "${ws.registryPath}" --format json evidence-log --goal-id g --limit 1000`;
    const whole = shell(`cd "$REPO" && ${cli} | wc -c`, ws.dir);
    assert.ok(Number(whole.stdout.trim()) > 64 * 1024, `only ${whole.stdout.trim()} bytes: the pipe would not fill`);
    const cut = shell(`cd "$REPO" && ${cli} | head -c 100 >/dev/null; echo "status=\${PIPESTATUS[0]}"`, ws.dir);
    assert.equal(cut.stdout.trim(), 'status=0', cut.stderr);
    assert.doesNotMatch(cut.stderr, /EPIPE|Error|at /, cut.stderr);
    assert.equal(cut.stderr, '');
  });
});
