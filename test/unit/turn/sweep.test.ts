import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../src/cli/program';
import { computeLedger, QUOTA_SLOT_SPENT } from '../../../src/core/quota/ledger';
import { readGoalRuns } from '../../../src/core/runtime/runIndex';
import { sweepGoalLeftovers } from '../../../src/core/runtime/sweep';
import { REPO_ROOT } from '../../support/demoWorkspace';
import {
  AGENT,
  clock,
  removeTempDirs,
  demo,
  lastJson,
  newSpends,
  NOW,
  reservations,
  runNodeScript,
  runTurnProcess,
  TSX_URL,
  type Demo,
} from './helpers';

after(removeTempDirs);

/** Leftovers of real killed processes (test/unit/turn/fixtures/leftoverWorker.ts), then the next run sweeps them. */
const WORKER = path.join(REPO_ROOT, 'test', 'unit', 'turn', 'fixtures', 'leftoverWorker.ts');

const runtimeRoot = (d: Demo): string => path.join(d.workspace, '.loopx', 'runtime');
const runsDir = (d: Demo): string => path.join(d.runtimeGoalDir, 'runs');

async function ledgerOf(d: Demo): Promise<{ spent_slots: number; usage: unknown }> {
  const { rows } = await readGoalRuns(runtimeRoot(d), 'tidy-notes', { projectRoot: d.workspace });
  const ledger = computeLedger({ rows, projectRoot: d.workspace, windowHours: 24, clock });
  return { spent_slots: ledger.spent_slots, usage: ledger.usage };
}

/** Spend artifacts in runs/ that no index line names. */
function unindexedSpendFiles(d: Demo): string[] {
  const index = fs.readFileSync(path.join(runsDir(d), 'index.jsonl'), 'utf8');
  return fs.readdirSync(runsDir(d)).filter((n) => /-quota-slot-spent(-\d+)?\.(json|md)$/.test(n) && !index.includes(n));
}

function lockFiles(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.includes('.loopx-lock')) : [];
}

describe('sweeping kill -9 leftovers (real killed processes)', function () {
  this.timeout(90_000);

  it('a live writer keeps its temp file and lock; once it is killed, the next sweep removes both', async () => {
    const d = demo();
    const dir = d.runtimeGoalDir;
    fs.mkdirSync(dir, { recursive: true });
    const child = spawn(process.execPath, ['--import', TSX_URL, WORKER, 'hold', dir], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    while (!fs.existsSync(path.join(dir, 'ready'))) await new Promise((r) => setTimeout(r, 20));
    const temps = (): string[] => fs.readdirSync(dir).filter((n) => n.endsWith('.tmp'));
    assert.equal(temps().length, 1);
    assert.match(temps()[0] as string, new RegExp(`^\\.state\\.json\\.[0-9a-f]{8}-${child.pid}\\.[0-9a-f]{12}\\.tmp$`));
    // Not ours to judge: another host's temp file, and one without a pid (older naming).
    fs.writeFileSync(path.join(dir, '.state.json.00000000-999999.0123456789ab.tmp'), '');
    fs.writeFileSync(path.join(dir, '.state.json.0123456789ab.tmp'), '');

    const whileAlive = await sweepGoalLeftovers(runtimeRoot(d), 'tidy-notes', { clock });
    assert.deepEqual(whileAlive, { temp_files: [], locks: [], orphan_artifacts: [] });
    assert.equal(temps().length, 3, "a live writer's temp file is never removed");
    assert.deepEqual(lockFiles(dir), ['held.loopx-lock']);

    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
    const swept = await sweepGoalLeftovers(runtimeRoot(d), 'tidy-notes', { clock });
    assert.equal(swept.temp_files.length, 1);
    assert.equal(swept.locks.length, 1);
    assert.deepEqual(temps().sort(), ['.state.json.00000000-999999.0123456789ab.tmp', '.state.json.0123456789ab.tmp']);
    assert.deepEqual(lockFiles(dir), []);
  });

  it('a turn lock left empty by a killed process no longer makes every later turn "busy"', async () => {
    const d = demo();
    const lock = path.join(d.runtimeGoalDir, 'turns', '.agent-demo.loopx-lock');
    fs.mkdirSync(path.dirname(lock), { recursive: true });
    const killed = await runNodeScript([WORKER, 'empty-lock', lock]);
    assert.equal(killed.signal, 'SIGKILL');
    assert.equal(fs.readFileSync(lock, 'utf8'), '', 'the holder died before writing its record');
    // Its creator is gone; age the file past the unreadable-lock grace instead of waiting for it.
    const past = new Date(Date.now() - 60_000);
    fs.utimesSync(lock, past, past);

    const turn = await runTurnProcess({
      registryPath: d.registryPath,
      hostAdapterCommand: [process.execPath, AGENT, 'successor'],
    });
    assert.equal(turn.code, 0, turn.stderr);
    assert.equal(lastJson(turn.stdout)['status'], 'committed', turn.stdout);
    assert.equal((await newSpends(d)).length, 1);
    assert.deepEqual(lockFiles(path.dirname(lock)), []);
  });

  it("the next turn removes a killed writer's lock on the goal's state file, and keeps a live one", async () => {
    const d = demo();
    const lock = `${d.statePath}.loopx-lock`;
    const killed = await runNodeScript([WORKER, 'empty-lock', lock]);
    assert.equal(killed.signal, 'SIGKILL');
    const past = new Date(Date.now() - 60_000);
    fs.utimesSync(lock, past, past);
    // An agent that answers "wait": the turn never writes the state file, so only the sweep can free it.
    const turn = await runTurnProcess({
      registryPath: d.registryPath,
      hostAdapterCommand: [process.execPath, AGENT, 'wait'],
    });
    assert.equal(turn.code, 0, turn.stderr);
    assert.equal(lastJson(turn.stdout)['status'], 'stopped', turn.stdout);
    assert.deepEqual(lockFiles(path.dirname(d.statePath)), []);

    // A live holder of the state file's lock is never touched.
    const child = spawn(process.execPath, ['--import', TSX_URL, WORKER, 'hold', path.dirname(d.statePath)], {
      stdio: 'ignore',
    });
    const ready = path.join(path.dirname(d.statePath), 'ready');
    while (!fs.existsSync(ready)) await new Promise((r) => setTimeout(r, 20));
    const heldTarget = path.join(path.dirname(d.statePath), 'held');
    const swept = await sweepGoalLeftovers(runtimeRoot(d), 'tidy-notes', { clock, files: [heldTarget] });
    assert.deepEqual(swept.locks, []);
    assert.deepEqual(lockFiles(path.dirname(d.statePath)), ['held.loopx-lock']);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('exit', resolve));
  });

  it('an empty run record left by a writer killed after reserving its name is removed under the index lock; records are kept', async () => {
    const d = demo();
    const dir = runsDir(d);
    const before = await ledgerOf(d);
    // What a SIGKILL between reserveArtifactPair (O_EXCL create) and the atomic write leaves: an empty,
    // unindexed runs/<stamp>.json, for any kind of run (here a delivery record), not only spends.
    const empty = path.join(dir, '20261128T100000-validated-completion.json');
    fs.writeFileSync(empty, '');
    // Kept: an unindexed record with content (not a name reservation), and every indexed artifact.
    const kept = path.join(dir, '20261128T100001-notes.json');
    fs.writeFileSync(kept, '{"classification":"note"}\n');
    const indexed = fs.readdirSync(dir).filter((n) => n !== path.basename(empty));
    const swept = await sweepGoalLeftovers(runtimeRoot(d), 'tidy-notes', { clock });
    assert.deepEqual(swept.orphan_artifacts, [empty]);
    assert.equal(fs.existsSync(empty), false);
    assert.deepEqual(fs.readdirSync(dir).sort(), indexed.sort());
    assert.deepEqual(await ledgerOf(d), before, 'the ledger never counted it');
    // `loopx status` and `quota status` read on with one present (they read runs through the index).
    fs.writeFileSync(empty, '');
    for (const argv of [['status'], ['quota', 'status', '--goal-id', 'tidy-notes']]) {
      let out = '';
      const code = await runCli([...argv, '--registry', d.registryPath, '--format', 'json'], {
        cwd: d.workspace,
        env: { HOME: d.workspace },
        clock,
        stdout: (text) => (out += text),
        stderr: () => undefined,
      });
      assert.equal(code, 0, `${argv.join(' ')}: ${out.slice(0, 300)}`);
      assert.equal((JSON.parse(out) as { ok?: unknown }).ok, true);
    }
  });

  it('the pre-check keeps its index names between sweeps: appended, torn and rewritten index lines decide as the whole text does', async () => {
    const d = demo();
    const dir = runsDir(d);
    const index = path.join(dir, 'index.jsonl');
    const sweep = async (): Promise<string[]> =>
      (await sweepGoalLeftovers(runtimeRoot(d), 'tidy-notes', { clock })).orphan_artifacts;
    assert.deepEqual(await sweep(), [], 'the demo goal has no leftovers (the names are now kept)');
    const row = (name: string): string =>
      `${JSON.stringify({ generated_at: String(NOW), classification: 'note', json_path: `.loopx/runtime/goals/tidy-notes/runs/${name}` })}\n`;
    // Appended whole line: read as a tail, the file it names is kept.
    const appended = path.join(dir, '20261128T100002-appended.json');
    fs.writeFileSync(appended, '');
    fs.appendFileSync(index, row(path.basename(appended)));
    assert.deepEqual(await sweep(), []);
    // A torn last line (no newline yet) naming a file: not in the kept names, the whole text keeps it.
    const torn = path.join(dir, '20261128T100003-torn.json');
    fs.writeFileSync(torn, '');
    fs.appendFileSync(index, row(path.basename(torn)).slice(0, -3));
    assert.deepEqual(await sweep(), []);
    assert.ok(fs.existsSync(appended) && fs.existsSync(torn));
    // The index replaced (rename) without the appended line: the kept names are dropped, so that file
    // is an orphan again (a stale name would have kept it without taking the lock).
    const text = fs.readFileSync(index, 'utf8');
    const without = text
      .split('\n')
      .filter((line) => !line.includes('-appended.json'))
      .join('\n');
    fs.writeFileSync(`${index}.new`, without.endsWith('\n') ? without : `${without}\n`);
    fs.renameSync(`${index}.new`, index);
    assert.deepEqual(await sweep(), [appended]);
    assert.ok(fs.existsSync(torn), 'the torn line, now whole, still names its file');
  });

  it('a spend killed between its artifacts and its index line: the sweep removes the orphan, keeps the totals, and the resumed turn spends once', async () => {
    const d = demo();
    const input = {
      registryPath: d.registryPath,
      goalId: 'tidy-notes',
      agentId: 'demo',
      now: NOW,
      hostAdapterCommand: [process.execPath, AGENT, 'successor'],
    };
    // One settled spend of ours first: the sweep must keep its artifacts.
    const settled = await runTurnProcess(input);
    assert.equal(lastJson(settled.stdout)['status'], 'committed', settled.stderr);
    const crashed = await runNodeScript([WORKER, 'spend-crash', JSON.stringify(input)]);
    assert.equal(crashed.signal, 'SIGKILL', crashed.stderr);
    const orphans = unindexedSpendFiles(d);
    assert.equal(orphans.length, 2, `the spend's .json and .md, never indexed: ${orphans.join(', ')}`);
    assert.ok(lockFiles(runsDir(d)).includes('index.jsonl.loopx-lock'), 'the killed writer held the index lock');
    const settledArtifacts = fs.readdirSync(runsDir(d)).filter((n) => /\.(json|md)$/.test(n) && !orphans.includes(n));

    const before = await ledgerOf(d);
    const swept = await sweepGoalLeftovers(runtimeRoot(d), 'tidy-notes', { clock });
    assert.deepEqual(swept.orphan_artifacts.map((f) => path.basename(f)).sort(), [...orphans].sort());
    assert.deepEqual(await ledgerOf(d), before, "the sweep never changes the ledger's totals");
    assert.deepEqual(unindexedSpendFiles(d), []);
    for (const name of settledArtifacts) assert.ok(fs.existsSync(path.join(runsDir(d), name)), `${name} kept`);
    assert.deepEqual(lockFiles(runsDir(d)), []);

    // The next run resumes the turn: its reservation still holds, and it spends exactly once.
    const resumed = await runTurnProcess(input);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(lastJson(resumed.stdout)['status'], 'committed');
    const spends = await newSpends(d);
    assert.equal(spends.length, 2, 'the settled turn and the resumed one, each spent once');
    assert.equal((await ledgerOf(d)).spent_slots, before.spent_slots + 1);
    assert.deepEqual(reservations(d), []);
    assert.ok(
      spends.every(
        (r) => r.classification === QUOTA_SLOT_SPENT && fs.existsSync(path.join(d.workspace, r.json_path ?? '')),
      ),
    );
  });
});
