/**
 * Profiles turns on a goal with a long run history, in process (issue 19): seeds the goal as the
 * `turn-at-10000` benchmark does, then times `TURNS` turns. Run with
 * `node --cpu-prof --import tsx bench/profileTurn.ts [turns-of-history] [turns]`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { benchGoalForProfile, oneTurnForProfile, seedTurnsForProfile } from './benchmarks/turn';

async function main(): Promise<void> {
  const history = Number(process.argv[2] ?? '10000');
  const turns = Number(process.argv[3] ?? '20');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'profile-turn-'));
  const options = benchGoalForProfile(tmp);
  for (let i = 0; i < 10; i++) await oneTurnForProfile(options);
  const rows = seedTurnsForProfile(options, history, 10);
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
