/**
 * `npm run chaos`: random kill points with real processes. Each case copies the demo workspace,
 * varies its quota and todos (seeded), runs one operation of the built CLI (`node out/cli.js`) —
 * a turn, a loop, two racing turns, refresh-state, a todo edit, configure-goal or the status
 * server — and SIGKILLs it (with its agents) at a seeded crash phase (LOOPX_TEST_CRASH_AT_PHASE)
 * or after a seeded delay. Then it resumes (the turn loop, or the same command again, or a new
 * server) and checks the invariants from the files on disk (invariants.ts).
 *
 *   npm run chaos -- [--cases 1000] [--workers 2] [--seed 1] [--case K] [--op run-once] [--minutes M] [--verbose]
 *
 * Every failure prints its seed and the one-line command that replays that case alone.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { fixedClock } from '../../src/core/clock';
import { runCli } from '../../src/cli/program';
import { withFileLock } from '../../src/core/fs/fileLock';
import { turnsDir } from '../../src/core/turn/journal';
import {
  caseSeed,
  changedFiles,
  cleanScratch,
  buildCrashHookCli,
  CLI,
  cliEnv,
  CRASH_HOOK_MARKER,
  hasCrashHook,
  useCliForProcesses,
  demoWorkspace,
  editRegistryGoal,
  GOAL,
  hashTree,
  hasStackTrace,
  NOW,
  parseArgs,
  Rng,
  runCliProcess,
  runSeedOf,
  writeSummary,
  type ProcResult,
  type Workspace,
} from './common';
import { checkWorkspace, type Violation } from './invariants';
import { knownFailure } from './knownFailures';

const CHECKPOINTS = [
  'admission',
  'host_execute',
  'host_execute:effect',
  'typed_result',
  'typed_result:effect',
  'validation',
  'validation:effect',
  'durable_writeback:effect',
  'durable_writeback',
  'quota_spend:effect',
  'quota_spend',
  'scheduler_apply',
  'scheduler_ack',
];
const OPS = [
  'run-once',
  'run-once',
  'loop',
  'loop',
  'race',
  'refresh-state',
  'todo',
  'configure-goal',
  'server',
  'loop-limits',
] as const;
type Op = (typeof OPS)[number];
const TURN_OPS: ReadonlySet<Op> = new Set(['run-once', 'loop', 'race', 'loop-limits']);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Slots spent (index rows) plus slots reserved by turns in flight: what admission has let through. */
function admittedSlots(ws: Workspace): number {
  let spent = 0;
  if (fs.existsSync(ws.indexPath))
    for (const line of fs.readFileSync(ws.indexPath, 'utf8').split('\n')) {
      try {
        const row = JSON.parse(line) as { classification?: string; slots?: unknown };
        if (row.classification === 'quota_slot_spent') spent += typeof row.slots === 'number' ? row.slots : 1;
      } catch {
        // A torn last line: not a spend (invariants.ts reports any other).
      }
    }
  let reserved = 0;
  try {
    const file = JSON.parse(fs.readFileSync(ws.reservationsPath, 'utf8')) as { reservations?: { slots?: unknown }[] };
    for (const r of file.reservations ?? []) reserved += typeof r.slots === 'number' ? r.slots : 1;
  } catch {
    // No reservations file yet.
  }
  // A turn is admitted when its journal is written (it reserves its slot a little later): each unfinished
  // journal may still spend one slot.
  let unfinished = 0;
  const turns = turnsDir(ws.runtimeGoalDir);
  for (const name of fs.existsSync(turns) ? fs.readdirSync(turns) : []) {
    if (!name.endsWith('.json')) continue;
    try {
      const journal = JSON.parse(fs.readFileSync(path.join(turns, name), 'utf8')) as { status?: string };
      if (journal.status === 'in_progress') unfinished++;
    } catch {
      // Not a journal.
    }
  }
  return spent + Math.max(reserved, unfinished);
}

function spentSlots(ws: Workspace): number {
  const copy = { ...ws, reservationsPath: path.join(ws.root, 'no-such-file') };
  return admittedSlots(copy);
}

/** Lowers the goal's allowed_slots as an editor's save would: a new file renamed over the registry. */
function lowerAllowedSlots(ws: Workspace, allowed: number): void {
  const registry = JSON.parse(fs.readFileSync(ws.registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
  const goal = registry.goals[0] as Record<string, unknown>;
  goal['quota'] = { ...(goal['quota'] as Record<string, unknown>), allowed_slots: allowed };
  const temp = `${ws.registryPath}.chaos-edit`;
  fs.writeFileSync(temp, `${JSON.stringify(registry, null, 2)}\n`);
  fs.renameSync(temp, ws.registryPath);
}
const TOKEN = 'chaos-token-0123456789abcdef';

interface CaseResult {
  index: number;
  seed: number;
  op: Op;
  kill: string;
  landed: boolean;
  violations: Violation[];
  ms: number;
}

function replay(runSeed: number, index: number): string {
  return `npm run chaos -- --seed ${runSeed} --case ${index} --verbose`;
}

async function inProcess(ws: Workspace, argv: string[]): Promise<number> {
  return runCli(argv, {
    cwd: ws.root,
    env: cliEnv(ws),
    clock: fixedClock(NOW),
    stdout: () => undefined,
    stderr: () => undefined,
  });
}

function todoCommand(rng: Rng, n: number): string[] {
  const g = ['--goal-id', GOAL];
  switch (rng.int(0, 5)) {
    case 0:
      return [
        'todo',
        'add',
        ...g,
        '--role',
        'agent',
        '--text',
        `Chaos todo ${n}`,
        '--priority',
        rng.pick(['P0', 'P2']),
      ];
    case 1:
      return ['todo', 'complete', ...g, '--todo-id', 'todo_related', '--evidence', 'chaos', '--no-follow-up'];
    case 2:
      return ['todo', 'update', ...g, '--todo-id', 'todo_index', '--priority', rng.pick(['P0', 'P3'])];
    case 3:
      return ['todo', 'claim', ...g, '--todo-id', 'todo_index', '--agent-id', 'demo'];
    case 4:
      return [
        'todo',
        'defer',
        ...g,
        '--todo-id',
        'todo_publish',
        '--reason',
        'chaos',
        '--resume-when',
        'todo_done:todo_index',
      ];
    default:
      return ['todo', 'add', ...g, '--role', 'user', '--text', `Chaos question ${n}`];
  }
}

function get(port: number, p: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = http.get(
      { host: '127.0.0.1', port, path: p, headers: { authorization: `Bearer ${TOKEN}` }, timeout: 5000 },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', () => resolve({ status: -1, body }));
      },
    );
    req.on('error', () => resolve({ status: -1, body: '' }));
    req.on('timeout', () => req.destroy());
  });
}

function portOf(stderr: string): number | null {
  const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr);
  return m ? Number(m[1]) : null;
}

/** Runs serve-status; when it listens, fires requests; killAfterMs (if given) SIGKILLs it, else SIGTERM after the requests. */
async function serverRun(
  ws: Workspace,
  killAfterMs: number | undefined,
  requests: number,
): Promise<{ proc: ProcResult; bad: string[] }> {
  const bad: string[] = [];
  let fired = false;
  const proc = await runCliProcess(['serve-status', '--port', '0'], {
    cwd: ws.root,
    env: cliEnv(ws, { LOOPX_STATUS_TOKEN: TOKEN }),
    killAfterMs,
    timeoutMs: 20_000,
    onStderr: (text, kill) => {
      const port = portOf(text);
      if (port === null || fired) return;
      fired = true;
      void (async () => {
        for (let i = 0; i < requests; i++) {
          const route =
            ['/healthz', '/status.json', `/goals/${GOAL}`, '/quota', `/goals/${GOAL}/projection`][i % 5] ?? '/';
          const res = await get(port, route);
          if (killAfterMs === undefined && res.status !== 200)
            bad.push(`${route} answered ${res.status}: ${res.body.slice(0, 120)}`);
          if (res.status === 200) {
            try {
              JSON.parse(res.body);
            } catch {
              bad.push(`${route} answered 200 with a body that is not JSON`);
            }
          }
        }
        if (killAfterMs === undefined) {
          kill();
        }
      })();
    },
  });
  return { proc, bad };
}

async function runCase(runSeed: number, index: number, verbose: boolean): Promise<CaseResult> {
  const started = Date.now();
  const seed = caseSeed(runSeed, index);
  const rng = new Rng(seed);
  const op = rng.pick(OPS);
  const violations: Violation[] = [];
  const add = (check: string, detail: string): void => {
    violations.push({ check, detail });
  };

  // The workspace: the demo, with seeded quota limits and extra todos.
  const ws = demoWorkspace(`chaos-${index}`);
  const allowedSlots = rng.pick([undefined, 2, 3, 5]);
  const maxCostUsd = rng.pick([undefined, 0.008, 0.012, 0.03]);
  editRegistryGoal(ws, (goal) => {
    const quota = goal['quota'] as Record<string, unknown>;
    if (allowedSlots !== undefined) quota['allowed_slots'] = allowedSlots;
    if (maxCostUsd !== undefined) quota['max_cost_usd'] = maxCostUsd;
  });
  const extraTodos = rng.int(0, 2);
  for (let i = 0; i < extraTodos; i++) {
    await inProcess(ws, ['todo', 'add', '--goal-id', GOAL, '--role', 'agent', '--text', `Extra chaos todo ${i}`]);
  }

  // loop-limits kills by delay only: a crash checkpoint would end the loop before its limit changes.
  const usePhase = TURN_OPS.has(op) && op !== 'loop-limits' && rng.chance(0.5);
  const phase = usePhase ? rng.pick(CHECKPOINTS) : undefined;
  const delay = TURN_OPS.has(op) ? rng.int(0, 1200) : op === 'server' ? rng.int(0, 700) : rng.int(0, 450);
  const kill = phase !== undefined ? `phase=${phase}` : `after=${delay}ms`;
  const env = cliEnv(ws, phase !== undefined ? { LOOPX_TEST_CRASH_AT_PHASE: phase } : {});
  const killAfterMs = phase !== undefined ? undefined : delay;
  const checkOutput = (label: string, r: ProcResult): void => {
    if (hasStackTrace(r.stderr) || hasStackTrace(r.stdout)) add('stack_trace', `${label}: ${r.stderr.slice(0, 400)}`);
    if (r.signal === 'SIGKILL' && !r.killed && phase === undefined) add('hang', `${label} ran past 60 s`);
  };

  let landed = false;
  let limitChange: { change: 'lower' | 'pause'; lowered: number; admittedAtChange: number } | null = null;
  const g = ['--goal-id', GOAL];
  let before: Map<string, string> | null = null;
  const turnArgs = ['turn', 'run-once', ...g, '--agent-id', 'demo', '--execute', '--format', 'json'];
  if (op === 'run-once' || op === 'loop') {
    const args =
      op === 'loop' ? ['turn', 'loop', ...g, '--agent-id', 'demo', '--max-turns', '4', '--format', 'json'] : turnArgs;
    const r = await runCliProcess(args, { cwd: ws.root, env, killAfterMs });
    landed = r.signal === 'SIGKILL';
    checkOutput(op, r);
  } else if (op === 'loop-limits') {
    // A running loop whose limit is lowered, or whose goal is paused, mid-run (issue 34, defect 1): a turn in
    // flight may finish, no new one may start past the new limit or after the pause. Killed later still.
    editRegistryGoal(ws, (goal) => {
      const quota = goal['quota'] as Record<string, unknown>;
      quota['allowed_slots'] = 100;
      delete quota['max_cost_usd'];
    });
    const change = rng.pick(['lower', 'pause'] as const);
    const lowered = rng.int(1, 3);
    const changeAfter = rng.int(100, 1500);
    const loopRun = runCliProcess(
      ['turn', 'loop', ...g, '--agent-id', 'demo', '--max-turns', '6', '--format', 'json'],
      {
        cwd: ws.root,
        env,
        killAfterMs: changeAfter + rng.int(200, 2500),
      },
    );
    await sleep(changeAfter);
    if (change === 'pause') {
      const paused = await inProcess(ws, ['goal', 'pause', ...g, '--execute']);
      if (paused !== 0) add('exit_code', `goal pause exited ${paused}`);
    } else lowerAllowedSlots(ws, lowered);
    // Read under the turn admission lock: an admission that read the registry before the change has then
    // written its journal (admission re-reads the registry and writes the journal in one hold of this lock).
    const admittedAtChange = await withFileLock(
      path.join(turnsDir(ws.runtimeGoalDir), '.admission'),
      { operation: 'chaos_snapshot' },
      () => admittedSlots(ws),
    );
    limitChange = { change, lowered, admittedAtChange };
    const r = await loopRun;
    landed = r.signal === 'SIGKILL';
    checkOutput('loop-limits', r);
  } else if (op === 'race') {
    // Two turns at once; one is killed, the other runs to its end.
    const [a, b] = await Promise.all([
      runCliProcess(turnArgs, { cwd: ws.root, env, killAfterMs }),
      runCliProcess(turnArgs, { cwd: ws.root, env: cliEnv(ws) }),
    ]);
    landed = a.signal === 'SIGKILL';
    checkOutput('race killed', a);
    checkOutput('race survivor', b);
    if (b.code !== 0 && b.code !== 1) add('exit_code', `racing run-once exited ${b.code}: ${b.stderr.slice(0, 200)}`);
  } else if (op === 'server') {
    before = hashTree(ws.root);
    const { proc } = await serverRun(ws, delay, 50);
    landed = proc.signal === 'SIGKILL';
    checkOutput('serve-status', proc);
  } else {
    const args =
      op === 'refresh-state'
        ? [
            'refresh-state',
            ...g,
            '--agent-id',
            'demo',
            '--classification',
            'state_refreshed',
            ...(rng.chance(0.5) ? ['--progress-scope', 'goal', '--next-action', `Chaos next action ${index}`] : []),
          ]
        : op === 'todo'
          ? todoCommand(rng, index)
          : [
              'configure-goal',
              ...g,
              '--quota-compute',
              rng.pick(['0.25', '0.5', '1']),
              '--registered-agent',
              `chaos-agent-${rng.int(1, 3)}`,
              '--execute',
            ];
    const r = await runCliProcess([...args, '--format', 'json'], { cwd: ws.root, env, killAfterMs });
    landed = r.signal === 'SIGKILL';
    checkOutput(op, r);
    // Resume: the same command again runs to its end, and the workspace still reads.
    const again = await runCliProcess([...args, '--format', 'json'], { cwd: ws.root, env: cliEnv(ws) });
    checkOutput(`${op} again`, again);
    if (again.code !== 0 && again.code !== 1) add('exit_code', `${op} again exited ${again.code}`);
    try {
      JSON.parse(again.stdout);
    } catch {
      add(
        'json_output',
        `${op} again: stdout is not JSON: ${again.stdout.slice(0, 200)} ${again.stderr.slice(0, 200)}`,
      );
    }
  }

  if (TURN_OPS.has(op)) {
    // Resume: the loop finishes the interrupted turn first, then runs on to a stop.
    const r = await runCliProcess(
      ['turn', 'loop', ...g, '--agent-id', 'demo', '--max-turns', '5', '--format', 'json'],
      {
        cwd: ws.root,
        env: cliEnv(ws),
      },
    );
    checkOutput('resume loop', r);
    let out: Record<string, unknown> = {};
    try {
      out = JSON.parse(r.stdout) as Record<string, unknown>;
    } catch {
      add('json_output', `resume loop: stdout is not JSON (exit ${r.code}): ${r.stderr.slice(0, 300)}`);
    }
    if (r.code !== 0)
      add('resume_failed', `resume loop exited ${r.code}: ${String(out['message'] ?? r.stderr).slice(0, 300)}`);
  } else if (op === 'server') {
    // The server is read-only: the crash changed nothing, and a new one serves at once.
    const changed = changedFiles(before ?? new Map(), hashTree(ws.root));
    if (changed.length > 0) add('server_wrote', `a killed status server changed ${changed.join(', ')}`);
    const { proc, bad } = await serverRun(ws, undefined, 5);
    checkOutput('serve-status again', proc);
    for (const b of bad) add('server_restart', b);
    if (portOf(proc.stderr) === null)
      add('server_restart', `the status server did not start again: ${proc.stderr.slice(0, 300)}`);
  } else {
    const r = await runCliProcess(['quota', 'status', ...g, '--format', 'json'], { cwd: ws.root, env: cliEnv(ws) });
    checkOutput('quota status', r);
    if (r.code !== 0) add('resume_failed', `quota status after the crash exited ${r.code}: ${r.stderr.slice(0, 300)}`);
  }

  if (limitChange !== null) {
    // After the change (and the resume loop): nothing admitted past what was admitted when it landed, or past
    // the lowered limit.
    const { change, lowered, admittedAtChange } = limitChange;
    const bound = change === 'pause' ? admittedAtChange : Math.max(lowered, admittedAtChange);
    const spent = spentSlots(ws);
    if (spent > bound)
      add(
        'limit_change_exceeded',
        `${spent} slots spent; ${change === 'pause' ? 'the goal was paused' : `allowed_slots lowered to ${lowered}`} when ${admittedAtChange} were spent or reserved`,
      );
  }
  violations.push(
    ...checkWorkspace(
      ws,
      op === 'loop-limits' ? { allowedSlots: undefined, maxCostUsd: undefined } : { allowedSlots, maxCostUsd },
    ),
  );
  if (violations.length === 0 || !verbose) fs.rmSync(path.dirname(ws.root), { recursive: true, force: true });
  else console.log(`  workspace kept: ${ws.root}`);
  return { index, seed, op, kill, landed, violations, ms: Date.now() - started };
}

let keepScratch = false;

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const runSeed = runSeedOf(args);
  const cases = Number(args['cases'] ?? 1000);
  const workers = Math.max(1, Number(args['workers'] ?? 2));
  const verbose = args['verbose'] !== undefined;
  // --minutes M: start no new case after M minutes (the summary then says how many ran).
  const deadline = args['minutes'] !== undefined ? Date.now() + Number(args['minutes']) * 60_000 : Infinity;
  // Half of the turn kills are crash checkpoints: the CLI must have the hook live, or those kills
  // never happen and the cases pass without testing anything.
  const cli = process.env['LOOPX_RELIABILITY_CLI'] !== undefined ? CLI : await buildCrashHookCli();
  if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
  if (!hasCrashHook(cli))
    throw new Error(
      `${cli} has no crash hook (${CRASH_HOOK_MARKER}): shipped bundles compile it out, so chaos's phase kills would never fire. Point LOOPX_RELIABILITY_CLI at a bundle built without the LOOPX_SHIPPED_BUILD define.`,
    );
  useCliForProcesses(cli);
  const opFilter = args['op'];
  const only = (
    args['case'] !== undefined ? [Number(args['case'])] : Array.from({ length: cases }, (_, i) => i)
  ).filter((i) => opFilter === undefined || new Rng(caseSeed(runSeed, i)).pick(OPS) === opFilter);
  console.log(`chaos: ${only.length} case(s), seed ${runSeed}, ${workers} worker(s)`);
  const started = Date.now();
  const results: CaseResult[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < only.length && Date.now() < deadline) {
      const index = only[next++] as number;
      const r = await runCase(runSeed, index, verbose);
      results.push(r);
      if (verbose || r.violations.length > 0) {
        console.log(
          `case ${r.index} (seed ${r.seed}) ${r.op} ${r.kill}${r.landed ? ' [killed]' : ' [exited first]'} ${r.ms} ms`,
        );
      }
      if (results.length % 50 === 0)
        console.log(`  ${results.length}/${only.length} cases, ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
  };
  await Promise.all(Array.from({ length: workers }, () => worker()));

  const failures: { title: string; message: string }[] = [];
  const known: string[] = [];
  const byOp = new Map<string, { cases: number; landed: number }>();
  for (const r of results.sort((a, b) => a.index - b.index)) {
    const s = byOp.get(r.op) ?? { cases: 0, landed: 0 };
    s.cases++;
    if (r.landed) s.landed++;
    byOp.set(r.op, s);
    for (const v of r.violations) {
      const k = knownFailure('chaos', v.check, r.op, v.detail);
      const line = `case ${r.index} ${r.op} ${r.kill}: ${v.check}: ${v.detail}\n    replay: ${replay(runSeed, r.index)}`;
      if (k) known.push(`${line}\n    known: ${k.defect}`);
      else
        failures.push({ title: `chaos case ${r.index} (seed ${runSeed}) ${r.op} ${r.kill} ${v.check}`, message: line });
    }
  }
  const landed = results.filter((r) => r.landed).length;
  const failedCases = new Set(failures.map((f) => f.title.split(' ')[2])).size;
  const seconds = (Date.now() - started) / 1000;
  console.log(
    `\nchaos summary (seed ${runSeed}): ${results.length} cases, ${landed} kills landed mid-run, ${seconds.toFixed(1)} s`,
  );
  for (const [op, s] of [...byOp].sort())
    console.log(`  ${op.padEnd(15)} ${String(s.cases).padStart(5)} cases ${String(s.landed).padStart(5)} killed`);
  if (known.length > 0) {
    const byCheck = new Map<string, number>();
    for (const k of known) {
      const check = /: ([a-z_]+): /.exec(k)?.[1] ?? '?';
      byCheck.set(check, (byCheck.get(check) ?? 0) + 1);
    }
    console.log(
      `\n${known.length} KNOWN failure(s) (test/reliability/knownFailures.ts): ${[...byCheck].map(([c, n]) => `${c} ${n}`).join(', ')}`,
    );
    for (const k of known.slice(0, 20)) console.log(`  ${k}`);
  }
  if (failures.length > 0) {
    console.log(`\n${failures.length} FAILURE(S):`);
    for (const f of failures.slice(0, 50)) console.log(`  ${f.message}`);
  }
  console.log(
    `chaos: ${results.length - failedCases} passed, ${failedCases} failed, ${new Set(known.map((k) => k.split(' ')[1])).size} case(s) with known failures`,
  );
  writeSummary(results.length - failedCases, failedCases, failures);
  keepScratch = verbose && (failures.length > 0 || known.length > 0);
  process.exitCode = failures.length > 0 ? 1 : 0;
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => {
    if (!keepScratch) cleanScratch();
  });
