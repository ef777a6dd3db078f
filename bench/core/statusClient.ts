import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { gunzipSync } from 'node:zlib';

/**
 * A small HTTP client for the status server benchmarks: keep-alive agents, several concurrent
 * loops, every body read to the end (and counted) but not kept. Only loopback origins are used.
 * It replaces autocannon for the steady-rate and freshness figures because it must also read the
 * ETag and, for freshness, decode one body to check what it says.
 */

export interface Fetched {
  status: number;
  etag: string | undefined;
  body: Buffer;
}

function assertLoopback(origin: string): void {
  const host = new URL(origin).hostname;
  if (host !== '127.0.0.1' && host !== '[::1]' && host !== '::1')
    throw new Error(`refusing to load ${origin}: loopback only`);
}

/** One GET on a keep-alive agent; the body is collected only when `keep` is true. */
export function get(
  agent: http.Agent,
  url: string,
  headers: Record<string, string>,
  keep: boolean,
): Promise<Fetched & { bytes: number }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (keep) chunks.push(chunk);
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          etag: typeof res.headers.etag === 'string' ? res.headers.etag : undefined,
          body: Buffer.concat(chunks),
          bytes,
        }),
      );
      res.on('error', reject);
    });
    request.on('error', reject);
  });
}

export interface SteadyResult {
  requests: number;
  ms: number;
  perSecond: number;
  bytes: number;
  failed: number;
}

/** `total` GETs of `url` over `connections` keep-alive connections, as fast as they answer. */
export async function steadyLoad(
  origin: string,
  route: string,
  headers: Record<string, string>,
  total: number,
  connections: number,
): Promise<SteadyResult> {
  assertLoopback(origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  let issued = 0;
  let failed = 0;
  let bytes = 0;
  const started = performance.now();
  const loop = async (): Promise<void> => {
    while (issued < total) {
      issued += 1;
      const answer = await get(agent, `${origin}${route}`, headers, false);
      bytes += answer.bytes;
      if (answer.status !== 200) failed += 1;
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  const ms = performance.now() - started;
  agent.destroy();
  return { requests: total, ms, perSecond: (total / ms) * 1000, bytes, failed };
}

/** The decoded JSON of a response (gunzipped when it is gzip). */
export function decode(body: Buffer): Record<string, unknown> {
  const text = body[0] === 0x1f && body[1] === 0x8b ? gunzipSync(body).toString('utf8') : body.toString('utf8');
  return JSON.parse(text) as Record<string, unknown>;
}

/**
 * Freshness of one change: writes `file` (atomically, as LoopX does: temp file + rename) with
 * `text`, then polls `url` back to back on one keep-alive connection until a response with a new
 * ETag whose body `reflects` the change arrives. Returns the milliseconds from the rename to that
 * response, and how many responses were stale before it.
 */
export async function freshness(
  agent: http.Agent,
  url: string,
  headers: Record<string, string>,
  file: string,
  text: string,
  reflects: (body: Record<string, unknown>) => boolean,
  timeoutMs = 30_000,
): Promise<{ ms: number; stale: number }> {
  const before = await get(agent, url, headers, false);
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.bench-${process.pid}.tmp`);
  fs.writeFileSync(temp, text);
  fs.renameSync(temp, file);
  const written = performance.now();
  let stale = 0;
  let etag = before.etag;
  for (;;) {
    const answer = await get(agent, url, headers, true);
    if (answer.status !== 200) throw new Error(`${url} answered ${answer.status}`);
    if (answer.etag !== etag) {
      etag = answer.etag;
      if (reflects(decode(answer.body))) return { ms: performance.now() - written, stale };
    }
    stale += 1;
    if (performance.now() - written > timeoutMs)
      throw new Error(`${url} did not reflect the change within ${timeoutMs} ms`);
  }
}
