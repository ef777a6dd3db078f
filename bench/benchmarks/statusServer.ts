import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { SIZES } from '../workspace/generate';
import { requireWorkspace, stateFiles } from '../core/files';
import { freshness } from '../core/statusClient';
import { round, summarize } from '../core/stats';
import type { BenchCase, BenchContext, Prepared, RunnableBenchmark } from '../core/types';

/**
 * The status server under load: `loopx serve-status` (out/cli.js) in its own process on
 * 127.0.0.1, loaded by autocannon from the worker process. One timed run is one burst of a fixed
 * number of requests over 10 connections, so the harness's median time per run gives the request
 * rate (`requests ÷ median`), and each run's latency percentiles come from autocannon. Only
 * loopback addresses are ever targeted; every run is bounded by its request count.
 *
 * autocannon 9 appends every response body to a JS string (`body += chunk`), which costs its
 * client about 1 ms per 70 KB body on the reference machine and caps any server (a bare
 * node:http server replaying the same bytes included) near 1,000 requests/s. The bodies are
 * checked once before the runs, so the load runs switch that capture off (`setupClient`); the raw
 * baseline is loaded the same way.
 */

interface AutocannonResult {
  requests: { total: number };
  latency: { p50: number; p99: number; max: number };
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
}

interface AutocannonClient {
  pipelinedRequests: { addBody: (data: Buffer) => void };
}

interface AutocannonOptions {
  url: string;
  connections: number;
  amount: number;
  headers: Record<string, string>;
  /** Milliseconds between samples; a burst of `amount` requests ends on the first sample after it completes. */
  sampleInt: number;
  setupClient: (client: AutocannonClient) => void;
}

// autocannon ships no type declarations; the fields used here are typed above.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (options: AutocannonOptions) => Promise<AutocannonResult>;

const TOKEN = 'bench-status-token-0123456789abcdef';
const CONNECTIONS = 10;
/** autocannon notices the end of a burst at its next sample; its default of 1 s would round every run up to whole seconds. */
const SAMPLE_INTERVAL_MS = 20;

interface LoadSpec {
  route: '/status.json' | '/healthz';
  /** Requests per timed run. */
  amount: number;
  gzip: boolean;
}

interface Served {
  child: ChildProcess;
  origin: string;
}

/** Starts `node <args>` and resolves once it prints `listening on http://127.0.0.1:<port>` on stderr. */
function startServer(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Served> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server did not start within 60 s: ${stderr.slice(0, 600)}`));
    }, 60_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ child, origin: match[1] });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${String(code)} before listening: ${stderr.slice(0, 600)}`));
    });
  });
}

function stopServer(served: Served): Promise<void> {
  return new Promise((resolve) => {
    if (served.child.exitCode !== null) {
      resolve();
      return;
    }
    served.child.once('exit', () => resolve());
    served.child.kill('SIGTERM');
  });
}

/** Peak resident set of a running process (Linux `VmHWM`), in MB; 0 elsewhere. */
function peakRssMb(pid: number | undefined): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${String(pid)}/status`, 'utf8'));
    return match?.[1] ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

async function fetchChecked(url: string, headers: Record<string, string>): Promise<Record<string, unknown>> {
  const answer = await fetch(url, { headers });
  if (answer.status !== 200) throw new Error(`${url} answered ${answer.status}`);
  return (await answer.json()) as Record<string, unknown>;
}

function headersOf(spec: LoadSpec): Record<string, string> {
  return { authorization: `Bearer ${TOKEN}`, ...(spec.gzip ? { 'accept-encoding': 'gzip' } : {}) };
}

/** Runs bursts against `served` and reports rate and latency figures in `verify`. */
function loadRuns(served: Served, spec: LoadSpec, goals: number): Prepared {
  const runs: { rate: number; p99: number; p50: number; max: number }[] = [];
  let failures = 0;
  let requests = 0;
  return {
    run: async () => {
      const result = await autocannon({
        url: `${served.origin}${spec.route}`,
        connections: CONNECTIONS,
        amount: spec.amount,
        headers: headersOf(spec),
        sampleInt: SAMPLE_INTERVAL_MS,
        setupClient: (client) => {
          client.pipelinedRequests.addBody = () => undefined;
        },
      });
      failures += result.errors + result.timeouts + result.non2xx;
      requests += result.requests.total;
      runs.push({
        rate: result.requests.total / result.duration,
        p99: result.latency.p99,
        p50: result.latency.p50,
        max: result.latency.max,
      });
      return { childPeakRssMb: peakRssMb(served.child.pid) };
    },
    verify: async () => {
      if (failures > 0) throw new Error(`${failures} of ${requests} requests failed (errors, timeouts or non-2xx)`);
      // The first run is the case's warm-up.
      const measured = runs.length > 1 ? runs.slice(1) : runs;
      const rate = summarize(measured.map((r) => r.rate)).median_ms;
      const p99 = summarize(measured.map((r) => r.p99)).median_ms;
      const worstP99 = Math.max(...measured.map((r) => r.p99));
      const p50 = summarize(measured.map((r) => r.p50)).median_ms;
      return `${spec.route}${spec.gzip ? ' (gzip)' : ''} with ${goals.toLocaleString('en-US')} goals: ${Math.round(rate).toLocaleString('en-US')} requests/s (median of runs), latency p50 ${round(p50, 1)} ms, p99 ${round(p99, 1)} ms (worst run ${round(worstP99, 1)} ms), ${requests.toLocaleString('en-US')} requests over ${CONNECTIONS} connections, none failed`;
    },
    cleanup: () => stopServer(served),
  };
}

/** The subject: out/cli.js serve-status on the case's workspace, its read model built before the runs. */
async function prepareServer(ctx: BenchContext, spec: LoadSpec): Promise<Prepared> {
  const workspace = requireWorkspace(ctx.workspace);
  const served = await startServer([ctx.cliPath, '--registry', workspace.registryPath, 'serve-status', '--port', '0'], {
    LOOPX_STATUS_TOKEN: TOKEN,
    LOOPX_NOW: workspace.now,
  });
  try {
    const status = await fetchChecked(`${served.origin}/status.json`, headersOf(spec));
    if (status['goal_count'] !== workspace.goalIds.length)
      throw new Error(
        `/status.json listed ${String(status['goal_count'])} goals, expected ${workspace.goalIds.length}`,
      );
    if (JSON.stringify(status).includes(workspace.root)) throw new Error('/status.json leaked the workspace path');
  } catch (error) {
    await stopServer(served);
    throw error;
  }
  return loadRuns(served, spec, workspace.goalIds.length);
}

const RAW_SERVER = `
const http = require('node:http');
const fs = require('node:fs');
const zlib = require('node:zlib');
const body = fs.readFileSync(process.argv[2]);
const gzip = zlib.gzipSync(body);
http.createServer((req, res) => {
  const zipped = /gzip/.test(req.headers['accept-encoding'] || '');
  const bytes = zipped ? gzip : body;
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': bytes.length, ...(zipped ? { 'Content-Encoding': 'gzip' } : {}) });
  res.end(bytes);
}).listen(0, '127.0.0.1', function () { process.stderr.write('listening on http://127.0.0.1:' + this.address().port + '\\n'); });
`;

/** The raw limit: a bare node:http server replaying the subject's exact response bytes from memory. */
async function prepareRawServer(ctx: BenchContext, spec: LoadSpec): Promise<Prepared> {
  const workspace = requireWorkspace(ctx.workspace);
  const bodyFile = path.join(ctx.tmpDir, 'body.json');
  const subject = await startServer(
    [ctx.cliPath, '--registry', workspace.registryPath, 'serve-status', '--port', '0'],
    { LOOPX_STATUS_TOKEN: TOKEN, LOOPX_NOW: workspace.now },
  );
  try {
    fs.writeFileSync(bodyFile, JSON.stringify(await fetchChecked(`${subject.origin}${spec.route}`, headersOf(spec))));
  } finally {
    await stopServer(subject);
  }
  const script = path.join(ctx.tmpDir, 'rawServer.cjs');
  fs.writeFileSync(script, RAW_SERVER);
  return loadRuns(await startServer([script, bodyFile], {}), spec, workspace.goalIds.length);
}

function loadCase(label: string, size: 'M' | 'L', runs: number): BenchCase {
  return { label, size, shape: SIZES[size], runs, warmup: 1 };
}

const STATUS_JSON: LoadSpec = { route: '/status.json', amount: 20_000, gzip: true };
const HEALTHZ: LoadSpec = { route: '/healthz', amount: 30_000, gzip: false };

export const statusServerStatusJson: RunnableBenchmark = {
  kind: 'process',
  name: 'status-server-status-json',
  title: 'Status server under load: `GET /status.json` (gzip, as dashboards fetch it)',
  description: `one burst of GET /status.json (Authorization: Bearer, Accept-Encoding: gzip) over ${CONNECTIONS} connections against \`loopx serve-status\` on 127.0.0.1 (${STATUS_JSON.amount.toLocaleString('en-US')} requests); peak RSS is the server's`,
  baselineDescription:
    'the same bursts against a bare node:http server that replays the same response bytes from memory',
  requiresCli: 'serve-status',
  cases: [loadCase('M', 'M', 5), loadCase('L', 'L', 3)],
  unitLabel: 'goals',
  units: (shape) => shape?.goals ?? 0,
  targets: [
    {
      caseLabel: 'M',
      metric: 'median_ms',
      limit: (STATUS_JSON.amount / 2_000) * 1000,
      text: `\`GET /status.json\` on M at least 2,000 requests/s (${STATUS_JSON.amount.toLocaleString('en-US')} requests in under ${STATUS_JSON.amount / 2_000} s; p99 latency in the checked line)`,
    },
  ],
  prepare: async (ctx) => prepareServer(ctx, STATUS_JSON),
  prepareBaseline: async (ctx) => prepareRawServer(ctx, STATUS_JSON),
};

export const statusServerHealthz: RunnableBenchmark = {
  kind: 'process',
  name: 'status-server-healthz',
  title: 'Status server under load: `GET /healthz`',
  description: `one burst of ${HEALTHZ.amount.toLocaleString('en-US')} GET /healthz over ${CONNECTIONS} connections against \`loopx serve-status\` on 127.0.0.1 (workspace M); peak RSS is the server's`,
  baselineDescription:
    'the same burst against a bare node:http server that replays the same response bytes from memory',
  requiresCli: 'serve-status',
  cases: [loadCase('M', 'M', 5)],
  unitLabel: 'goals',
  units: (shape) => shape?.goals ?? 0,
  targets: [
    {
      caseLabel: 'M',
      metric: 'median_ms',
      limit: (HEALTHZ.amount / 10_000) * 1000,
      text: `\`GET /healthz\` at least 10,000 requests/s (${HEALTHZ.amount.toLocaleString('en-US')} requests in under ${HEALTHZ.amount / 10_000} s)`,
    },
  ],
  prepare: async (ctx) => prepareServer(ctx, HEALTHZ),
  prepareBaseline: async (ctx) => prepareRawServer(ctx, HEALTHZ),
};

/** The state file of the goal in the middle of the workspace, and a text that puts `marker` first in its Next Action. */
function probeState(ctx: BenchContext): { file: string; original: string; withMarker: (marker: string) => string } {
  const files = stateFiles(requireWorkspace(ctx.workspace));
  const file = files[Math.floor(files.length / 2)];
  if (file === undefined) throw new Error('the workspace has no state file');
  const original = fs.readFileSync(file, 'utf8');
  if (!original.includes('## Next Action\n')) throw new Error(`${file} has no Next Action section`);
  return {
    file,
    original,
    withMarker: (marker) => original.replace('## Next Action\n', `## Next Action\n- ${marker}\n`),
  };
}

/**
 * Freshness of `/status.json` after a one-goal change: each run rewrites one goal's state file
 * (temp file + rename, as LoopX writes it) and polls `/status.json` (gzip, one keep-alive
 * connection, back to back) until a response with a new ETag shows the change; the run's figure
 * is the time from the rename to that response (watcher latency + rebuild of one goal + serializing).
 */
export const statusServerFreshness: RunnableBenchmark = {
  kind: 'process',
  name: 'status-server-freshness',
  title: 'Status server: `/status.json` fresh after a one-goal change',
  description:
    "rewrite one goal's state file, then poll GET /status.json (gzip) until the body shows the change; time from the rename to that response (the figure is measured by the client, not the harness)",
  baselineDescription:
    'fs.watch on the same folder: time from the same rename to the watch event and a re-read of the file (the watcher floor)',
  requiresCli: 'serve-status',
  cases: [loadCase('M', 'M', 7)],
  unitLabel: 'goals',
  units: (shape) => shape?.goals ?? 0,
  targets: [
    {
      caseLabel: 'M',
      metric: 'median_ms',
      limit: 100,
      text: '`/status.json` on M fresh within 100 ms of a one-goal change',
    },
  ],
  prepare: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    const probe = probeState(ctx);
    const served = await startServer(
      [ctx.cliPath, '--registry', workspace.registryPath, 'serve-status', '--port', '0'],
      {
        LOOPX_STATUS_TOKEN: TOKEN,
        LOOPX_NOW: workspace.now,
      },
    );
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const headers = headersOf(STATUS_JSON);
    let runs = 0;
    let stale = 0;
    return {
      run: async () => {
        const marker = `bench-fresh-${process.pid}-${runs++}`;
        const fresh = await freshness(
          agent,
          `${served.origin}/status.json`,
          headers,
          probe.file,
          probe.withMarker(marker),
          (body) => JSON.stringify(body['attention_queue'] ?? {}).includes(marker),
        );
        stale += fresh.stale;
        return { measuredMs: fresh.ms, childPeakRssMb: peakRssMb(served.child.pid) };
      },
      verify: async () =>
        `${runs} changes, each seen in /status.json; ${stale} stale response(s) served while rebuilding`,
      cleanup: async () => {
        agent.destroy();
        fs.writeFileSync(probe.file, probe.original);
        await stopServer(served);
      },
    };
  },
  prepareBaseline: async (ctx) => {
    const probe = probeState(ctx);
    let runs = 0;
    return {
      run: async () => {
        const text = probe.withMarker(`bench-fresh-raw-${runs++}`);
        const seen = new Promise<void>((resolve) => {
          const watcher = fs.watch(path.dirname(probe.file), () => {
            watcher.close();
            resolve();
          });
        });
        const temp = `${probe.file}.raw-${process.pid}.tmp`;
        fs.writeFileSync(temp, text);
        fs.renameSync(temp, probe.file);
        const written = performance.now();
        await seen;
        if (!fs.readFileSync(probe.file, 'utf8').includes('bench-fresh-raw-'))
          throw new Error('re-read missed the change');
        return { measuredMs: performance.now() - written };
      },
      cleanup: async () => fs.writeFileSync(probe.file, probe.original),
    };
  },
};
