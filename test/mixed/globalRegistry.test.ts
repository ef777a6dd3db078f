import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { mixedWorkspace, run, stopLeftovers, type MixedWorkspace, type Program, type RunResult } from './helpers';

/**
 * The global registry kept in sync as the original keeps it (issue 30): two workspaces bootstrapped alike; the same
 * `configure-goal` and `register-agent` by each program on its own; after every step the two global registries
 * (and project registries) are the same, line for line, once times and the workspace's own path are set aside. Then
 * the original's status, reading what we wrote, reports no stale source registry.
 */

function ok(result: RunResult, step: string): Record<string, unknown> {
  assert.equal(result.code, 0, `${step}: exit ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result.json;
}

/** A registry file as lines: parsed (so the original's `12.0` and our `12` are one number), times and paths aside. */
function registryLines(file: string, w: MixedWorkspace): string[] {
  const text = fs
    .readFileSync(file, 'utf8')
    .split(w.dir)
    .join('<T>')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?/g, '<TIME>')
    .replace(/"\d{4}-\d{2}-\d{2}"/g, '"<DATE>"');
  return JSON.stringify(JSON.parse(text), null, 2).split('\n');
}

function differingLines(a: string[], b: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++)
    if (a[i] !== b[i]) out.push(`${i + 1}: ${a[i] ?? '∅'} | ${b[i] ?? '∅'}`);
  return out;
}

function globalOf(w: MixedWorkspace): string {
  return path.join(w.home, '.codex', 'loopx', 'registry.global.json');
}

describe('mixed team: the global registry kept in sync by configure-goal and register-agent', () => {
  for (const bootstrapper of ['original', 'ours'] as Program[]) {
    it(`bootstrapped by ${bootstrapper === 'ours' ? 'us' : 'the original'}: the same command by each side leaves the same registries`, () => {
      const byOriginal = mixedWorkspace('global-original');
      const byOurs = mixedWorkspace('global-ours');
      try {
        for (const w of [byOriginal, byOurs]) {
          fs.mkdirSync(path.join(w.ws, '.git'));
          ok(
            run(bootstrapper, w, ['bootstrap', '--project', w.ws, '--goal-id', 'g', '--objective', 'Ship it.'], false),
            `${bootstrapper} bootstrap`,
          );
        }
        const steps = [
          ['configure-goal', '--goal-id', 'g', '--quota-compute', '0.5', '--quota-window-hours', '12', '--execute'],
          ['register-agent', '--goal-id', 'g', '--agent-id', 'codex-a', '--execute'],
          ['register-agent', '--goal-id', 'g', '--agent-id', 'codex-b', '--execute'],
        ];
        for (const step of steps) {
          ok(run('original', byOriginal, step), `original ${step[0]}`);
          ok(run('ours', byOurs, step), `ours ${step[0]}`);
          for (const [name, file] of [
            ['global registry', globalOf],
            ['project registry', (w: MixedWorkspace) => w.registry],
          ] as const) {
            const diff = differingLines(
              registryLines(file(byOriginal), byOriginal),
              registryLines(file(byOurs), byOurs),
            );
            assert.deepEqual(diff, [], `${step.slice(0, 2).join(' ')}: the ${name} differs (original | ours)`);
          }
        }
        // The quota reached the global entry (the original reads it there), and its status finds nothing stale.
        const quotaIn = (file: string) =>
          (JSON.parse(fs.readFileSync(file, 'utf8')) as { goals: Record<string, unknown>[] }).goals.find(
            (g) => g['id'] === 'g',
          )?.['quota'] as Record<string, unknown> | undefined;
        assert.deepEqual(quotaIn(globalOf(byOurs)), quotaIn(byOurs.registry));
        assert.deepEqual(
          [quotaIn(globalOf(byOurs))?.['compute'], quotaIn(globalOf(byOurs))?.['window_hours']],
          [0.5, 12],
        );
        const status = run('original', byOurs, ['status']);
        assert.equal(status.json['goal_count'], 1, `${status.stdout}\n${status.stderr}`);
        assert.doesNotMatch(status.stdout, /stale_source_registry/);
      } finally {
        for (const w of [byOriginal, byOurs]) {
          stopLeftovers(w);
          fs.rmSync(w.dir, { recursive: true, force: true });
        }
      }
    });
  }
});
