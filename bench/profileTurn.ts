/**
 * Profiles turns on a goal with a long run history, in process (issue 19): seeds the goal as the
 * `turn-at-10000` benchmark does, then times `TURNS` turns. Run with
 * `node --cpu-prof --import tsx bench/profileTurn.ts [turns-of-history] [turns] [--rollout]`.
 * `--rollout` also gives the goal's rollout event log the events of as many earlier turns (the
 * benchmark seeds the run index only): each real turn's events cloned with a fresh `run_id`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { rolloutEventLogOf } from '../src/core/evidence/rolloutLog';
import { benchGoalForProfile, oneTurnForProfile, seedTurnsForProfile } from './benchmarks/turn';

function seedRollout(goalDir: string, turns: number, realTurns: number): void {
  const log = rolloutEventLogOf(goalDir);
  const own = fs
    .readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  const perTurn = Math.max(1, Math.round(own.length / realTurns));
  const seeded: string[] = [];
  for (let turn = 0; turn < turns; turn++)
    for (const line of own.slice(0, perTurn)) {
      const row = JSON.parse(line) as Record<string, unknown>;
      seeded.push(JSON.stringify({ ...row, run_id: `seed-${turn}` }));
    }
  fs.writeFileSync(log, `${[...seeded, ...own].join('\n')}\n`);
  console.log(`rollout log: ${own.length} own events, ${seeded.length} seeded`);
}

async function main(): Promise<void> {
  const history = Number(process.argv[2] ?? '10000');
  const turns = Number(process.argv[3] ?? '20');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'profile-turn-'));
  const options = benchGoalForProfile(tmp);
  for (let i = 0; i < 10; i++) await oneTurnForProfile(options);
  const rows = seedTurnsForProfile(options, history, 10);
  if (process.argv.includes('--rollout')) seedRollout(options.goal.runtimeDir, history, 10);
  const times: number[] = [];
  for (let i = 0; i < turns; i++) {
    const started = performance.now();
    await oneTurnForProfile(options);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${rows} rows; turn ms: min ${times[0]?.toFixed(1)} median ${times[Math.floor(times.length / 2)]?.toFixed(1)}`,
  );
  fs.rmSync(tmp, { recursive: true, force: true });
}

void main();
