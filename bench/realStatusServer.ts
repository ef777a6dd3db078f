import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { freshness, get, steadyLoad, decode } from './core/statusClient';

/**
 * `/status.json` of `loopx serve-status` on a workspace already generated (e.g. real-shaped M from
 * ../shared/bench/gen_workspace.py): the steady rate (gzip, keep-alive, several connections) and
 * the freshness of a one-goal change (state file rewritten; time to the first response showing it).
 *
 *   node --import tsx bench/realStatusServer.ts --dir /tmp/loopx-real-M [--cli out/cli.js] [--runs 5]
 *
 * Prints one JSON line of figures. Only 127.0.0.1 is served and loaded.
 */

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] !== undefined ? (args[at + 1] ?? fallback) : fallback;
};
const dir = path.resolve(option('dir', '/tmp/loopx-real-M'));
const cli = path.resolve(option('cli', 'out/cli.js'));
const runs = Number(option('runs', '5'));
const requests = Number(option('requests', '10000'));
const connections = Number(option('connections', '8'));
const TOKEN = 'bench-status-token-0123456789abcdef';
const HEADERS = { authorization: `Bearer ${TOKEN}`, 'accept-encoding': 'gzip' };

function start(registry: string): Promise<{ child: ChildProcess; origin: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, '--registry', registry, 'serve-status', '--port', '0'], {
      env: { ...process.env, LOOPX_STATUS_TOKEN: TOKEN },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (match?.[1]) resolve({ child, origin: match[1] });
    });
    child.on('exit', (code) => reject(new Error(`server exited ${String(code)}: ${stderr.slice(0, 400)}`)));
  });
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const registry = path.join(dir, '.loopx', 'registry.json');
  const doc = JSON.parse(fs.readFileSync(registry, 'utf8')) as {
    goals: { id: string; repo: string; state_file: string }[];
  };
  const goal = doc.goals[Math.floor(doc.goals.length / 2)];
  if (goal === undefined) throw new Error('no goals');
  const stateFile = path.isAbsolute(goal.state_file) ? goal.state_file : path.join(goal.repo, goal.state_file);
  const original = fs.readFileSync(stateFile, 'utf8');
  if (!original.includes('## Next Action')) throw new Error(`${stateFile} has no Next Action section`);
  const server = await start(registry);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const url = `${server.origin}/status.json`;
  try {
    const first = await get(agent, url, HEADERS, true);
    const goalCount = decode(first.body)['goal_count'];
    await steadyLoad(server.origin, '/status.json', HEADERS, Math.min(2000, requests), connections); // warm-up
    const steady = [];
    const fresh = [];
    for (let i = 0; i < runs; i++) {
      const marker = `bench-marker-${process.pid}-${i}`;
      const text = original.replace('## Next Action\n', `## Next Action\n- ${marker}\n`);
      fresh.push(
        await freshness(agent, url, HEADERS, stateFile, text, (body) =>
          JSON.stringify(body['goals'] ?? body).includes(marker),
        ),
      );
      steady.push(await steadyLoad(server.origin, '/status.json', HEADERS, requests, connections));
    }
    const failed = steady.reduce((sum, run) => sum + run.failed, 0);
    process.stdout.write(
      `${JSON.stringify({
        cli,
        goal_count: goalCount,
        body_gzip_bytes: first.body.length,
        fresh_ms: fresh.map((f) => Math.round(f.ms)),
        fresh_median_ms: Math.round(median(fresh.map((f) => f.ms))),
        stale_responses: fresh.map((f) => f.stale),
        steady_rps: steady.map((s) => Math.round(s.perSecond)),
        steady_median_rps: Math.round(median(steady.map((s) => s.perSecond))),
        failed,
        loadavg: fs.readFileSync('/proc/loadavg', 'utf8').trim(),
      })}\n`,
    );
  } finally {
    agent.destroy();
    fs.writeFileSync(stateFile, original);
    server.child.kill('SIGTERM');
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
