/**
 * `npm run fuzz`: seeded fast-check cases over registries, state files, run-index rows, agent
 * results, CLI arguments and HTTP requests. Each case checks: no uncaught exception or stack
 * trace, exit codes as documented (0 ok, 1 failed operation, 2 usage error), valid JSON with
 * `--format json` (`ok` agreeing with the exit code), an error that names the broken file, and no
 * input file changed unless the command succeeded and was meant to write (sha256 before/after).
 * CLI cases run in-process (runCli never calls process.exit); one in SAMPLE_EVERY also runs as a
 * real `node out/cli.js` process; HTTP cases hit a real status server on 127.0.0.1.
 *
 *   npm run fuzz -- [--cases 10000] [--seed 1] [--target registry|state|runindex|agentresult|cliargs|http]
 *   replay one failure: npm run fuzz -- --target T --seed S --path P   (printed with every failure)
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import fc from 'fast-check';
import { fixedClock } from '../../src/core/clock';
import { cliCommands } from '../../src/core/commands/catalog';
import { commandProtocol } from '../../src/core/executors/command';
import { extractObjectFromMessage } from '../../src/core/executors/extract';
import { startStatusServer, type ListeningStatusServer } from '../../src/core/server/statusServer';
import { checkHostResult } from '../../src/core/protocol/contract';
import { buildProgram, runCli } from '../../src/cli/program';
import {
  changedFiles,
  cleanScratch,
  CLI,
  cliEnv,
  demoWorkspace,
  GOAL,
  hashTree,
  hasStackTrace,
  NOW,
  parseArgs,
  runSeedOf,
  writeSummary,
  type Workspace,
} from './common';
import { knownFailure } from './knownFailures';

const SAMPLE_EVERY = 40;
const TARGET_SHARE = {
  registry: 2000,
  state: 2000,
  runindex: 1500,
  agentresult: 2500,
  cliargs: 2000,
  http: 1000,
  caches: 500,
  leases: 500,
  eventlog: 500,
};
type Target = keyof typeof TARGET_SHARE;
const DEFAULT_CASES = 10_000;

// ---------------------------------------------------------------------------------------------
// Running the CLI and checking one run

interface Run {
  argv: string[];
  code: number;
  stdout: string;
  stderr: string;
  threw: string | null;
}

async function cliInProcess(ws: Workspace, argv: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  try {
    const code = await runCli(argv, {
      cwd: ws.root,
      env: cliEnv(ws, env),
      clock: fixedClock(NOW),
      stdout: (t) => (stdout += t),
      stderr: (t) => (stderr += t),
    });
    return { argv, code, stdout, stderr, threw: null };
  } catch (e) {
    return { argv, code: -1, stdout, stderr, threw: e instanceof Error ? (e.stack ?? e.message) : String(e) };
  }
}

function cliProcess(ws: Workspace, argv: string[]): Run {
  const r = spawnSync(process.execPath, [CLI, ...argv], {
    cwd: ws.root,
    env: cliEnv(ws),
    encoding: 'utf8',
    timeout: 30_000,
  });
  return {
    argv,
    code: r.status ?? -1,
    stdout: r.stdout,
    stderr: r.stderr,
    threw: r.signal ? `killed by ${r.signal}` : null,
  };
}

const MUTATION = new Map<string, string>();
for (const spec of cliCommands()) if (spec.cli) MUTATION.set(spec.cli, spec.mutation);

function commandWords(argv: readonly string[]): string {
  const words = argv.filter((a) => !a.startsWith('-'));
  return MUTATION.has(`${words[0]} ${words[1]}`) ? `${words[0]} ${words[1]}` : (words[0] ?? '');
}

function meantToWrite(argv: readonly string[]): boolean {
  const m = MUTATION.get(commandWords(argv));
  if (argv.includes('--dry-run')) return false;
  return m === 'writes' || (m === 'writes_after_preview' && argv.includes('--execute'));
}

class Failure extends Error {
  constructor(
    readonly check: string,
    message: string,
  ) {
    super(`${check}: ${message}`);
  }
}

/** Every check of one CLI run; throws a Failure (fast-check then shrinks and prints seed and path). */
function checkRun(run: Run, changed: string[], brokenFile: string | null): void {
  const show = `loopx ${run.argv.map((a) => JSON.stringify(a)).join(' ')}`;
  if (run.threw !== null) throw new Failure('uncaught_exception', `${show}\n${run.threw}`);
  if (![0, 1, 2].includes(run.code)) throw new Failure('exit_code', `${show} exited ${run.code}`);
  if (hasStackTrace(run.stdout) || hasStackTrace(run.stderr))
    throw new Failure('stack_trace', `${show}\n${(run.stderr || run.stdout).slice(0, 600)}`);
  const json = run.argv.includes('--format') && run.argv[run.argv.indexOf('--format') + 1] === 'json';
  let out: Record<string, unknown> | null = null;
  if (json && run.stdout.trim() !== '') {
    try {
      out = JSON.parse(run.stdout) as Record<string, unknown>;
    } catch {
      throw new Failure('json_output', `${show}: stdout is not one JSON document: ${run.stdout.slice(0, 200)}`);
    }
  }
  if (json && run.code !== 2) {
    if (out === null) throw new Failure('json_output', `${show} exited ${run.code} with no JSON on stdout`);
    if (out['ok'] !== (run.code === 0))
      throw new Failure('json_output', `${show}: ok ${String(out['ok'])} but exit ${run.code}`);
  }
  const error = { code: out?.['error_code'] as string | undefined, message: out?.['error'] as string | undefined };
  if (error.code === 'internal_error')
    throw new Failure(
      'internal_error',
      `${show}: an untyped error reached the user: ${String(error.message).slice(0, 300)}`,
    );
  if (run.code !== 0 && brokenFile !== null) {
    const text = `${run.stdout}\n${run.stderr}`;
    if (!text.includes(brokenFile))
      throw new Failure(
        'error_names_no_file',
        `${show} failed without naming ${brokenFile}: ${(error.message ?? run.stderr).slice(0, 300)}`,
      );
  }
  if (changed.length > 0 && !(run.code === 0 && meantToWrite(run.argv)))
    throw new Failure(
      run.code === 0 ? 'read_only_wrote' : 'wrote_on_failure',
      `${show} (exit ${run.code}) changed ${changed.join(', ')}`,
    );
}

// ---------------------------------------------------------------------------------------------
// Mutations (grammar-aware: JSON paths, state-file lines and todo metadata, index rows)

const special = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    true,
    false,
    0,
    -1,
    1.5,
    1e308,
    -1e308,
    '',
    'NaN',
    '1e3',
    '0x10',
    '-0',
    ' 2',
    'Infinity',
    '../../../etc/passwd',
    '\u0000',
    'x'.repeat(5000),
    [],
    {},
    [null],
    { a: 1 },
  ),
  fc.jsonValue({ maxDepth: 2 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.double(),
  fc.integer(),
);

type JsonMutation =
  | { kind: 'set'; at: number; value: unknown }
  | { kind: 'delete'; at: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'bom' };

const jsonMutation: fc.Arbitrary<JsonMutation> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: special }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('insert' as const),
      at: fc.nat(),
      text: fc.constantFrom(',', '}', '"', '{', '\n', ']', '\\', 'null'),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'bom' as const }) },
);

function paths(
  value: unknown,
  prefix: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  if (prefix.length > 0) out.push(prefix);
  if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) paths(v, [...prefix, Array.isArray(value) ? Number(k) : k], out);
  return out;
}

/** Applies mutations to a JSON document; returns the text and whether it still parses. */
function mutateJson(value: unknown, mutations: JsonMutation[]): { text: string; parses: boolean } {
  const doc = structuredClone(value) as Record<string, unknown>;
  const textOps: JsonMutation[] = [];
  for (const m of mutations) {
    if (m.kind !== 'set' && m.kind !== 'delete') {
      textOps.push(m);
      continue;
    }
    const all = paths(doc);
    if (all.length === 0) continue;
    const p = all[m.at % all.length] ?? [];
    let parent: Record<string | number, unknown> = doc;
    for (const key of p.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
    const last = p[p.length - 1] as string | number;
    if (m.kind === 'set') parent[last] = structuredClone(m.value);
    else if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  }
  let text = `${JSON.stringify(doc, null, 2)}\n`;
  for (const m of textOps) {
    if (m.kind === 'truncate') text = text.slice(0, m.at % text.length);
    else if (m.kind === 'insert') {
      const at = m.at % (text.length + 1);
      text = text.slice(0, at) + m.text + text.slice(at);
    } else if (m.kind === 'bom') text = `\uFEFF${text}`;
  }
  let parses = true;
  try {
    // LoopX reads a registry with a BOM (as the Python LoopX does), so a BOM alone does not break it.
    JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    parses = false;
  }
  return { text, parses };
}

type LineMutation =
  | { kind: 'delete' | 'duplicate' | 'swap'; at: number }
  | { kind: 'replace'; at: number; text: string }
  | { kind: 'meta'; at: number; value: string }
  | { kind: 'truncate'; at: number }
  | { kind: 'crlf' | 'empty' };

const lineText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 60 }),
  fc.constantFrom(
    '---',
    '## Agent Todo',
    '- [ ] [P9] x',
    '- [x]',
    '  <!-- loopx:todo todo_id=todo_related status=open -->',
    '<!-- loopx:todo',
    'status: ',
    '- [ ] [P1] dup\n  <!-- loopx:todo todo_id=todo_index status=open task_class=advancement_task -->',
    '{"not":"json"',
  ),
);
const lineMutation: fc.Arbitrary<LineMutation> = fc.oneof(
  fc.record({ kind: fc.constantFrom('delete' as const, 'duplicate' as const, 'swap' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), text: lineText }),
  fc.record({
    kind: fc.constant('meta' as const),
    at: fc.nat(),
    value: fc.constantFrom('', 'bogus', 'done', '%ZZ', 'a b', 'todo_x', '-1', 'P0', '\u202e'),
  }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constantFrom('crlf' as const, 'empty' as const) }),
);

function mutateLines(text: string, mutations: LineMutation[]): string {
  let lines = text.split('\n');
  for (const m of mutations) {
    const at = 'at' in m ? m.at % Math.max(1, lines.length) : 0;
    switch (m.kind) {
      case 'delete':
        lines.splice(at, 1);
        break;
      case 'duplicate':
        lines.splice(at, 0, lines[at] ?? '');
        break;
      case 'swap':
        [lines[at], lines[(at + 1) % lines.length]] = [lines[(at + 1) % lines.length] ?? '', lines[at] ?? ''];
        break;
      case 'replace':
        lines[at] = m.text;
        break;
      case 'meta': {
        // Change one key=value of a loopx:todo metadata comment (or a frontmatter value).
        const metaLines = lines
          .map((l, i) => [l, i] as const)
          .filter(([l]) => l.includes('loopx:todo') || /^\w+: /.test(l));
        const [line, i] = metaLines[at % Math.max(1, metaLines.length)] ?? ['', -1];
        if (i < 0) break;
        const fields = [...line.matchAll(/(\w+)=(\S+)/g)];
        const f = fields[m.value.length % Math.max(1, fields.length)];
        lines[i] = f ? line.replace(f[0], `${f[1]}=${m.value}`) : line.replace(/: .*/, `: ${m.value}`);
        break;
      }
      case 'truncate':
        lines = lines.slice(0, at);
        break;
      case 'crlf':
        lines = lines.map((l) => `${l}\r`);
        break;
      case 'empty':
        lines = [];
        break;
    }
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Commands the file targets run (each reads the mutated file; the writers write only on success)

const G = ['--goal-id', GOAL];
const FILE_COMMANDS: string[][] = [
  ['status'],
  ['registry'],
  ['quota', 'status', ...G],
  ['quota', 'should-run', ...G, '--agent-id', 'demo'],
  ['todo', 'list', ...G],
  ['turn', 'plan', ...G, '--agent-id', 'demo'],
  ['turn', 'run-once', ...G, '--agent-id', 'demo'],
  ['global-summary'],
  ['global-todos'],
  ['heartbeat-prompt', ...G, '--agent-id', 'demo'],
  ['todo', 'add', ...G, '--role', 'agent', '--text', 'Fuzz todo'],
  ['todo', 'complete', ...G, '--todo-id', 'todo_related', '--evidence', 'fuzz', '--no-follow-up'],
  ['refresh-state', ...G, '--agent-id', 'demo', '--classification', 'state_refreshed'],
  ['configure-goal', ...G, '--quota-compute', '0.25', '--execute'],
  ['register-agent', ...G, '--project-registry', '--agent-id', 'fuzz-agent', '--execute'],
  [
    'quota',
    'spend-slot',
    ...G,
    '--agent-id',
    'demo',
    '--todo-id',
    'todo_related',
    '--turn-instance-id',
    'fuzz-1',
    '--execute',
  ],
];

const LEASE_ACQUIRE = [
  'task-lease',
  'acquire',
  ...G,
  '--todo-id',
  'todo_related',
  '--owner',
  'demo',
  '--idempotency-key',
  'fuzz-lease',
];
/** Read commands whose answers come through the run-index and status caches. */
const CACHE_COMMANDS: string[][] = [
  ['quota', 'should-run', ...G, '--agent-id', 'demo'],
  ['quota', 'status', ...G],
  ['status'],
  ['turn', 'plan', ...G, '--agent-id', 'demo'],
];
/** Commands that read (or write) the task lease of todo_related. */
const LEASE_COMMANDS: string[][] = [
  ['task-lease', 'inspect', ...G, '--todo-id', 'todo_related'],
  LEASE_ACQUIRE,
  ['task-lease', 'acquire', ...G, '--todo-id', 'todo_related', '--owner', 'codex-main', '--idempotency-key', 'other'],
  ['status'],
  ['turn', 'plan', ...G, '--agent-id', 'demo'],
  ['todo', 'complete', ...G, '--todo-id', 'todo_related', '--evidence', 'fuzz', '--no-follow-up'],
];
/** Commands that read (or append to) the rollout event log. */
const EVENT_COMMANDS: string[][] = [
  ['quota', 'should-run', ...G, '--agent-id', 'demo', '--turn-instance-id', 'fuzz-turn-1'],
  [
    'refresh-state',
    ...G,
    '--agent-id',
    'demo',
    '--classification',
    'state_refreshed',
    '--turn-instance-id',
    'fuzz-turn-1',
  ],
  ['evidence-log', ...G],
  ['status'],
];

let caseCounter = 0;

async function fileCase(
  ws: Workspace,
  file: string,
  content: string,
  broken: boolean,
  commandIndex: number,
  json: boolean,
  commands: string[][] = FILE_COMMANDS,
  /** Files a read may rewrite (caches). */
  rewritable: readonly string[] = [],
): Promise<Run> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  const argv = [...(commands[commandIndex % commands.length] ?? ['status']), '--format', json ? 'json' : 'markdown'];
  const before = hashTree(ws.root);
  const run = await cliInProcess(ws, argv);
  const skip = new Set(rewritable.map((f) => path.relative(ws.root, f)));
  const changed = changedFiles(before, hashTree(ws.root)).filter((f) => !skip.has(f));
  checkRun(run, changed, broken ? path.basename(file) : null);
  if (++caseCounter % SAMPLE_EVERY === 0) {
    // The same case as a real process: same exit code, no stack trace.
    fs.writeFileSync(file, content);
    const real = cliProcess(ws, argv);
    if (real.code !== run.code && changed.length === 0)
      throw new Failure(
        'process_differs',
        `${argv.join(' ')}: exit ${real.code} as a process, ${run.code} in-process: ${real.stderr.slice(0, 300)}`,
      );
    checkRun(real, [], broken ? path.basename(file) : null);
  }
  return run;
}

// ---------------------------------------------------------------------------------------------
// Targets

function freshWorkspace(): { ws: Workspace; reset: () => void } {
  const ws = demoWorkspace('fuzz');
  const pristine = new Map<string, Buffer>();
  const snapshot = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) snapshot(full);
      else pristine.set(full, fs.readFileSync(full));
    }
  };
  snapshot(ws.root);
  const reset = (): void => {
    fs.rmSync(ws.root, { recursive: true, force: true });
    fs.rmSync(ws.home, { recursive: true, force: true });
    fs.mkdirSync(ws.home, { recursive: true });
    for (const [file, data] of pristine) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, data);
    }
  };
  return { ws, reset };
}

const BASE_RESULT = {
  schema_version: 'loopx_turn_result_v0',
  turn_key: 'sha256:a0ab8fa242eed7d57485f8ac3a21c003fbc2aac6494cc5966f7766b187f9360c',
  result_kind: 'validated_completion',
  summary: 'Added the Related sections.',
  classification: 'notes_related_linked',
  recommended_action: 'Run the next turn on the next open todo of the goal.',
  next_action: 'Run the next turn on the next open todo of the goal.',
  delivery_batch_scale: 'multi_surface',
  delivery_outcome: 'outcome_progress',
  evidence: ['3 notes end with a Related section'],
  todo: {
    todo_id: 'todo_related',
    disposition: 'done',
    evidence: '3 notes end with a Related section',
    no_follow_up: true,
  },
  changed_files: ['notes/bikes.md'],
  usage: { input_tokens: 1130, output_tokens: 147, cost_usd: 0.005595, estimated: true },
};

interface Prop {
  arb: fc.Arbitrary<unknown>;
  body: (v: unknown) => Promise<void>;
}

async function properties(ws: Workspace, reset: () => void): Promise<Record<Exclude<Target, 'http'>, Prop>> {
  const registryDoc = JSON.parse(fs.readFileSync(ws.registryPath, 'utf8')) as unknown;
  const stateText = fs.readFileSync(ws.statePath, 'utf8');
  const indexLines = fs
    .readFileSync(ws.indexPath, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown);
  const program = await buildProgram(
    { cwd: ws.root, env: {}, clock: fixedClock(NOW), stdout: () => undefined, stderr: () => undefined },
    () => undefined,
  );
  const leaves: { words: string[]; options: { flag: string; takesValue: boolean }[] }[] = [];
  const walk = (cmd: typeof program, words: string[]): void => {
    for (const sub of cmd.commands) {
      const w = [...words, sub.name()];
      if (sub.commands.length > 0) walk(sub, w);
      else
        leaves.push({
          words: w,
          options: sub.options.map((o) => ({ flag: o.long ?? o.short ?? '', takesValue: o.required || o.optional })),
        });
    }
  };
  walk(program, []);
  // Commands that block (the servers: serve-status, mcp on stdin), run agents (turns with --execute, loops) or change the test host are left to chaos.
  const fuzzable = leaves.filter(
    (l) => !['serve-status', 'mcp', 'turn loop', 'help'].includes(l.words.join(' ')) && l.words[0] !== 'help',
  );

  const value = fc.oneof(
    fc.constantFrom(
      'tidy-notes',
      'demo',
      'codex-main',
      'todo_related',
      'todo_gate_publish',
      'P0',
      'P9',
      '0',
      '1',
      '-1',
      '1.5',
      '1e3',
      '0x10',
      'NaN',
      'Infinity',
      '',
      ' ',
      '../..',
      '/etc/passwd',
      'approve',
      'json',
      '2026-11-28T10:00:00Z',
      '["node","-e","1"]',
      '{}',
      'a'.repeat(600),
    ),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.integer({ min: -1e6, max: 1e6 }).map(String),
    fc.double().map(String),
  );
  const argvArb = fc
    .record({
      leaf: fc.nat(),
      picks: fc.array(fc.record({ opt: fc.nat(), value }), { maxLength: 6 }),
      extra: fc.option(fc.constantFrom('--bogus', 'stray', '--', '-x', '--format=json', '--registry'), {
        nil: undefined,
      }),
      json: fc.boolean(),
      execute: fc.boolean(),
    })
    .map(({ leaf, picks, extra, json, execute }) => {
      const l = fuzzable[leaf % fuzzable.length] ?? { words: ['status'], options: [] };
      const argv = [...l.words];
      for (const p of picks) {
        const o = l.options[p.opt % Math.max(1, l.options.length)];
        if (!o || o.flag === '--help' || o.flag === '--install' || o.flag === '--uninstall') continue;
        if (o.flag === '--execute' && l.words[0] === 'turn') continue;
        argv.push(o.flag);
        if (o.takesValue) argv.push(p.value);
      }
      if (execute && l.options.some((o) => o.flag === '--execute') && l.words[0] !== 'turn') argv.push('--execute');
      if (extra !== undefined) argv.push(extra);
      if (json) argv.push('--format', 'json');
      return argv;
    });

  // The persistent cache, a lease and the rollout event log as LoopX writes them: made once on the pristine workspace.
  const turnGuard = ['quota', 'should-run', ...G, '--agent-id', 'demo', '--turn-instance-id', 'fuzz-turn-1'];
  await cliInProcess(ws, ['status']);
  await cliInProcess(ws, [...turnGuard, '--format', 'json']);
  await cliInProcess(ws, [...LEASE_ACQUIRE, '--format', 'json']);
  const statusCache = path.join(ws.runtimeGoalDir, '..', '..', 'cache', 'status-cache.json');
  const leaseFile = path.join(ws.runtimeGoalDir, 'task-leases', 'todo_related.json');
  const eventLog = path.join(ws.runtimeGoalDir, 'rollout-event-log.jsonl');
  const made = [statusCache, leaseFile, eventLog].filter((f) => !fs.existsSync(f));
  if (made.length > 0) throw new Error(`fuzz set-up: LoopX did not write ${made.join(', ')}`);
  const statusCacheText = fs.readFileSync(statusCache, 'utf8');
  const leaseDoc = JSON.parse(fs.readFileSync(leaseFile, 'utf8')) as unknown;
  const eventLines = fs
    .readFileSync(eventLog, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown);
  reset();
  /** What admission answers, the part a cache must never change. */
  const decisionOf = (run: Run): string => {
    try {
      const out = JSON.parse(run.stdout) as Record<string, unknown>;
      return JSON.stringify([run.code, out['should_run'], out['state'], out['decision'], out['spent_slots']]);
    } catch {
      return JSON.stringify([run.code, run.stdout.slice(0, 200)]);
    }
  };

  const withReset = <T>(arb: fc.Arbitrary<T>, body: (v: T) => Promise<void>): Prop => ({
    arb,
    body: async (v) => {
      reset();
      await body(v as T);
    },
  });
  const plain = <T>(arb: fc.Arbitrary<T>, body: (v: T) => Promise<void>): Prop => ({
    arb,
    body: (v) => body(v as T),
  });

  return {
    registry: withReset(
      fc.record({ muts: fc.array(jsonMutation, { minLength: 1, maxLength: 3 }), cmd: fc.nat(), json: fc.boolean() }),
      async ({ muts, cmd, json }) => {
        const m = mutateJson(registryDoc, muts);
        await fileCase(ws, ws.registryPath, m.text, !m.parses, cmd, json);
      },
    ),
    state: withReset(
      fc.record({ muts: fc.array(lineMutation, { minLength: 1, maxLength: 4 }), cmd: fc.nat(), json: fc.boolean() }),
      async ({ muts, cmd, json }) => {
        await fileCase(ws, ws.statePath, mutateLines(stateText, muts), false, cmd, json);
      },
    ),
    runindex: withReset(
      fc.record({
        rows: fc.array(fc.record({ row: fc.nat(), muts: fc.array(jsonMutation, { maxLength: 2 }) }), {
          minLength: 1,
          maxLength: 5,
        }),
        lineMuts: fc.array(lineMutation, { maxLength: 2 }),
        cmd: fc.nat(),
        json: fc.boolean(),
      }),
      async ({ rows, lineMuts, cmd, json }) => {
        const lines = rows.map(({ row, muts }) => {
          const base = indexLines[row % indexLines.length];
          return muts.length === 0 ? JSON.stringify(base) : mutateJson(base, muts).text.replace(/\n/g, ' ').trim();
        });
        await fileCase(ws, ws.indexPath, `${mutateLines(lines.join('\n'), lineMuts)}\n`, false, cmd, json);
      },
    ),
    caches: withReset(
      fc.record({
        lineMuts: fc.array(lineMutation, { maxLength: 2 }),
        // A same-length edit (one character changed in place), or the file cut short.
        poke: fc.option(fc.record({ at: fc.nat(), char: fc.constantFrom('0', '9', 'x', '"', '}', ' ') }), {
          nil: undefined,
        }),
        cut: fc.option(fc.nat(), { nil: undefined }),
        cmd: fc.nat(),
      }),
      async ({ lineMuts, poke, cut, cmd }) => {
        // A forged, stale or truncated cache may cost a re-read, never change an answer: the same
        // command with the caches off answers the same.
        const file = statusCache;
        let content = mutateLines(statusCacheText, lineMuts);
        if (poke !== undefined && content.length > 0) {
          const at = poke.at % content.length;
          content = content.slice(0, at) + poke.char + content.slice(at + 1);
        }
        if (cut !== undefined) content = content.slice(0, cut % (content.length + 1));
        const cached = await fileCase(ws, file, content, false, cmd, true, CACHE_COMMANDS, [statusCache]);
        reset();
        const uncached = await cliInProcess(ws, cached.argv, { LOOPX_STATUS_CACHE: 'off' });
        if (decisionOf(cached) !== decisionOf(uncached))
          throw new Failure(
            'cache_decided',
            `${cached.argv.join(' ')} with a mutated ${path.basename(file)} answered ${decisionOf(cached)}, without caches ${decisionOf(uncached)}`,
          );
      },
    ),
    leases: withReset(
      fc.record({ muts: fc.array(jsonMutation, { minLength: 1, maxLength: 3 }), cmd: fc.nat(), json: fc.boolean() }),
      async ({ muts, cmd, json }) => {
        const m = mutateJson(leaseDoc, muts);
        await fileCase(ws, leaseFile, m.text, !m.parses, cmd, json, LEASE_COMMANDS);
      },
    ),
    eventlog: withReset(
      fc.record({
        rows: fc.array(fc.record({ row: fc.nat(), muts: fc.array(jsonMutation, { maxLength: 2 }) }), {
          minLength: 1,
          maxLength: 4,
        }),
        lineMuts: fc.array(lineMutation, { maxLength: 2 }),
        cmd: fc.nat(),
        json: fc.boolean(),
      }),
      async ({ rows, lineMuts, cmd, json }) => {
        const lines = rows.map(({ row, muts }) => {
          const base = eventLines[row % eventLines.length];
          return muts.length === 0 ? JSON.stringify(base) : mutateJson(base, muts).text.replace(/\n/g, ' ').trim();
        });
        // A heartbeat step appends its receipt or step event (even after a broken line); the log is
        // append-only: what was there stays byte for byte, and a failed step appends nothing.
        const content = `${mutateLines(lines.join('\n'), lineMuts)}\n`;
        const run = await fileCase(ws, eventLog, content, false, cmd, json, EVENT_COMMANDS, [eventLog]);
        const after = fs.existsSync(eventLog) ? fs.readFileSync(eventLog, 'utf8') : '';
        if (!after.startsWith(content) || (run.code !== 0 && after !== content))
          throw new Failure(
            'event_log_rewritten',
            `${run.argv.join(' ')} (exit ${run.code}) ${after.startsWith(content) ? 'appended to' : 'rewrote'} the rollout event log`,
          );
      },
    ),
    agentresult: plain(
      fc.record({
        muts: fc.array(jsonMutation, { maxLength: 4 }),
        wrap: fc.constantFrom('line', 'logs', 'fence', 'raw', 'twice', 'none'),
        noise: fc.string({ unit: 'grapheme', maxLength: 40 }),
      }),
      async ({ muts, wrap, noise }) => {
        const { text } = mutateJson(BASE_RESULT, muts);
        const line = text.replace(/\n\s*/g, ' ');
        const stdout =
          wrap === 'line'
            ? line
            : wrap === 'logs'
              ? `${noise}\nstarting\n${line}\n`
              : wrap === 'fence'
                ? `${noise}\n\`\`\`json\n${text}\`\`\`\n`
                : wrap === 'raw'
                  ? text
                  : wrap === 'twice'
                    ? `${line}\n${line}`
                    : noise;
        let read;
        try {
          read = commandProtocol(['agent']).read(stdout);
          extractObjectFromMessage(stdout);
        } catch (e) {
          throw new Failure('uncaught_exception', `reading agent output threw: ${String(e)}`);
        }
        if (read.candidate === null) {
          if (!read.missing) throw new Failure('unclear_error', 'no result object and no reason');
          return;
        }
        let check;
        try {
          check = checkHostResult(read.candidate, {
            turn_key: BASE_RESULT.turn_key,
            selected_todo: { todo_id: 'todo_related' },
          });
        } catch (e) {
          throw new Failure('uncaught_exception', `checkHostResult threw: ${String(e)}`);
        }
        if (!check.ok) {
          if (check.problems.length === 0)
            throw new Failure('unclear_error', 'a rejected result with no problem listed');
          for (const p of check.problems)
            if (!/^[\w.()[\]-]+: ./.test(p)) throw new Failure('unclear_error', `a problem that names no field: ${p}`);
        } else {
          const usage = (check.result.usage ?? {}) as Record<string, unknown>;
          for (const [k, u] of Object.entries(usage))
            if (typeof u === 'number' && (!Number.isFinite(u) || u < 0))
              throw new Failure('accepted_bad_number', `usage.${k} = ${u} accepted`);
        }
      },
    ),
    cliargs: withReset(argvArb, async (argv) => {
      const before = hashTree(ws.root);
      const run = await cliInProcess(ws, argv);
      checkRun(run, changedFiles(before, hashTree(ws.root)), null);
      if (++caseCounter % SAMPLE_EVERY === 0) {
        reset();
        const real = cliProcess(ws, argv);
        checkRun(real, [], null);
        if (real.code !== run.code)
          throw new Failure(
            'process_differs',
            `${argv.join(' ')}: exit ${real.code} as a process, ${run.code} in-process`,
          );
      }
    }),
  };
}

// HTTP: raw requests against a real server, so malformed ones reach it too.
const TOKEN = 'fuzz-token-0123456789abcdef';
const httpArb = fc.record({
  method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'DELETE', 'TRACE', 'FOO', 'get'),
  route: fc.constantFrom(
    '/',
    '/healthz',
    '/status.json',
    `/goals/${GOAL}`,
    `/goals/${GOAL}/projection`,
    '/quota',
    '/goals/',
    '/goals/nope',
    '/goals/../registry.json',
    '/%2e%2e/%2e%2e/etc/passwd',
    '//status.json',
    '/status.json/',
    '/goals/%00',
    '/quota?x=1&x=2',
    '*',
  ),
  suffix: fc.oneof(
    fc.constant(''),
    fc.string({ maxLength: 20 }).map((s) => encodeURIComponent(s)),
    fc.constantFrom('?token=', `?token=${TOKEN}`, '?token=wrong', '#x', '?a=%ZZ', '/../..'),
  ),
  auth: fc.constantFrom('valid', 'none', 'wrong', 'empty', 'basic', 'query'),
  host: fc.constantFrom('ok', 'ok', 'evil.example', 'none', 'localhost', '127.0.0.1:1'),
  origin: fc.constantFrom(undefined, 'http://127.0.0.1:1', 'https://evil.example', 'null'),
  body: fc.oneof(fc.constant(''), fc.string({ maxLength: 200 })),
  raw: fc.option(
    fc.constantFrom(
      'GET / HTTP/1.1\r\n\r\n',
      'GARBAGE\r\n\r\n',
      'GET /status.json HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n',
      `GET /${'a'.repeat(20000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
      'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: ' + 'y'.repeat(20000) + '\r\n\r\n',
      '\u0000\u0001\u0002',
    ),
    { nil: undefined },
  ),
});

function rawRequest(port: number, text: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let data = '';
    socket.setTimeout(8000, () => socket.destroy());
    socket.on('data', (c: Buffer) => (data += c.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const [head = '', ...rest] = data.split('\r\n\r\n');
      let body = rest.join('\r\n\r\n');
      if (/transfer-encoding: chunked/i.test(head)) {
        let out = '';
        let s = body;
        for (;;) {
          const nl = s.indexOf('\r\n');
          const n = parseInt(s.slice(0, nl), 16);
          if (!(n > 0)) break;
          out += s.slice(nl + 2, nl + 2 + n);
          s = s.slice(nl + 2 + n + 2);
        }
        body = out;
      }
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, headers: head, body });
    });
    socket.write(text, 'latin1');
  });
}

function httpProperty(server: ListeningStatusServer, ws: Workspace): Prop {
  const before = hashTree(ws.root);
  let n = 0;
  return {
    arb: httpArb,
    body: async (v) => {
      const r = v as typeof httpArb extends fc.Arbitrary<infer T> ? T : never;
      const port = server.port;
      const target =
        r.route === '*'
          ? '*'
          : `${r.route}${r.auth === 'query' ? `${r.route.includes('?') ? '&' : '?'}token=${TOKEN}` : ''}${r.suffix}`;
      const headers = [`${r.method} ${target} HTTP/1.1`];
      if (r.host !== 'none') headers.push(`Host: ${r.host === 'ok' ? `127.0.0.1:${port}` : r.host}`);
      const auth = {
        valid: `Bearer ${TOKEN}`,
        wrong: 'Bearer nope-nope-nope-nope',
        empty: '',
        basic: 'Basic dXNlcjpwYXNz',
        none: null,
        query: null,
      }[r.auth];
      if (auth !== null) headers.push(`Authorization: ${auth}`);
      if (r.origin !== undefined) headers.push(`Origin: ${r.origin}`);
      headers.push('Connection: close');
      if (r.body !== '') headers.push(`Content-Length: ${Buffer.byteLength(r.body, 'latin1')}`);
      const text = r.raw ?? `${headers.join('\r\n')}\r\n\r\n${r.body}`;
      const res = await rawRequest(port, text);
      const show = JSON.stringify(text.slice(0, 200));
      if (res.status >= 500) throw new Failure('http_5xx', `${show} answered ${res.status}: ${res.body.slice(0, 200)}`);
      if (hasStackTrace(res.body)) throw new Failure('stack_trace', `${show}: ${res.body.slice(0, 300)}`);
      if (/content-type: application\/json/i.test(res.headers) && r.method !== 'HEAD' && res.body !== '') {
        try {
          JSON.parse(res.body);
        } catch {
          throw new Failure('json_output', `${show} answered JSON content-type with a body that does not parse`);
        }
      }
      if (res.body.includes(ws.root)) throw new Failure('path_leak', `${show} answered with the workspace path`);
      // Behaviour that must hold: a well-formed GET of a protected route with the right token and a
      // loopback Host and no body succeeds; without a token it is refused. (A body is refused first,
      // with 413, before the token is looked at: docs/status-server.md.)
      const protectedRoute =
        ['/status.json', '/quota', `/goals/${GOAL}`].includes(r.route) &&
        r.suffix === '' &&
        r.raw === undefined &&
        (r.body === undefined || r.body === '');
      if (protectedRoute && r.method === 'GET' && r.host === 'ok' && r.origin === undefined) {
        if ((r.auth === 'valid' || r.auth === 'query') && res.status !== 200)
          throw new Failure('http_contract', `${show} answered ${res.status}, expected 200`);
        if (['none', 'wrong', 'empty', 'basic'].includes(r.auth) && res.status !== 401)
          throw new Failure('http_contract', `${show} answered ${res.status} without a valid token, expected 401`);
      }
      if (++n % 50 === 0) {
        const changed = changedFiles(before, hashTree(ws.root));
        if (changed.length > 0) throw new Failure('read_only_wrote', `the status server changed ${changed.join(', ')}`);
        const health = await rawRequest(
          port,
          `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
        );
        if (health.status !== 200)
          throw new Failure('http_dead', `/healthz answered ${health.status} after ${n} fuzz requests`);
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const seed = runSeedOf(args);
  // Without --cases: the 10,000 of docs/reliability.md ("How to run").
  const total = Number(args['cases'] ?? DEFAULT_CASES);
  const only = args['target'] as Target | undefined;
  const replayPath = args['path'];
  const targets = (Object.keys(TARGET_SHARE) as Target[]).filter((t) => only === undefined || t === only);
  const scale = total / targets.reduce((a, t) => a + TARGET_SHARE[t], 0);
  console.log(
    `fuzz: seed ${seed}, ${targets.map((t) => `${t} ${Math.max(1, Math.round(TARGET_SHARE[t] * scale))}`).join(', ')}`,
  );
  const started = Date.now();
  let passed = 0;
  let failed = 0;
  const failures: { title: string; message: string }[] = [];
  const known: string[] = [];
  const rows: string[] = [];
  for (const target of targets) {
    const t0 = Date.now();
    const numRuns =
      only !== undefined && args['cases'] === undefined
        ? TARGET_SHARE[target]
        : Math.max(1, Math.round(TARGET_SHARE[target] * scale));
    const { ws, reset } = freshWorkspace();
    let server: ListeningStatusServer | null = null;
    let property: Prop;
    if (target === 'http') {
      server = await startStatusServer({
        registryPath: ws.registryPath,
        homeDir: ws.home,
        clock: fixedClock(NOW),
        token: TOKEN,
        port: 0,
        watch: false,
      });
      property = httpProperty(server, ws);
    } else property = (await properties(ws, reset))[target];
    // Known failures are counted and skipped so one known defect does not hide the others.
    let knownHits = 0;
    let firstKnown = '';
    const wrapped = fc.asyncProperty(property.arb, async (v: unknown) => {
      try {
        await property.body(v);
      } catch (e) {
        if (e instanceof Failure && knownFailure('fuzz', e.check, target, e.message)) {
          knownHits++;
          if (firstKnown === '') firstKnown = e.message.slice(0, 400);
          return;
        }
        throw e;
      }
    });
    const details = await fc.check(wrapped, {
      seed,
      numRuns,
      path: replayPath,
      endOnFailure: false,
      markInterruptAsFailure: true,
    });
    await server?.close();
    const ran = details.numRuns;
    const seconds = (Date.now() - t0) / 1000;
    if (details.failed) {
      const err =
        details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      const replay = `npm run fuzz -- --target ${target} --seed ${details.seed} --path ${details.counterexamplePath}`;
      const message = `${target}: ${err.slice(0, 1200)}\n    counterexample: ${JSON.stringify(details.counterexample).slice(0, 600)}\n    replay: ${replay}`;
      failures.push({ title: `fuzz ${target} (seed ${details.seed})`, message });
      failed++;
      passed += Math.max(0, ran - 1);
    } else passed += ran;
    rows.push(
      `  ${target.padEnd(12)} ${String(ran).padStart(6)} cases ${knownHits > 0 ? `(${knownHits} known)` : ''.padEnd(0)} ${seconds.toFixed(1)} s${details.failed ? '  FAILED' : ''}`,
    );
    if (knownHits > 0) known.push(`${target}: ${knownHits} case(s), e.g. ${firstKnown}`);
  }
  console.log(
    `\nfuzz summary (seed ${seed}): ${passed + failed} cases, ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  for (const r of rows) console.log(r);
  if (known.length > 0) {
    console.log(`\nKNOWN failures (test/reliability/knownFailures.ts):`);
    for (const k of known) console.log(`  ${k}`);
  }
  if (failures.length > 0) {
    console.log(`\nFAILURES (each shrunk by fast-check):`);
    for (const f of failures) console.log(`  ${f.message}`);
  }
  console.log(`fuzz: ${passed} passed, ${failed} failed`);
  writeSummary(passed, failed, failures);
  process.exitCode = failed > 0 ? 1 : 0;
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(cleanScratch);
