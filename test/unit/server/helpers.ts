import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';

export const SECRET_GITHUB_TOKEN = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
export const SERVER_TOKEN = 'test-status-token-0123456789abcdef';

export interface SeededWorkspace {
  dir: string;
  registryPath: string;
  statePath: string;
  /** An absolute path outside the workspace that the seed puts into the registry and a todo. */
  foreignPath: string;
}

/**
 * The demo workspace with private data planted where a careless projection would leak it: an
 * absolute path and a GitHub token in a todo of the state file and in the registry entry.
 */
export function seededWorkspace(): SeededWorkspace {
  const dir = materializeDemoWorkspace(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-server-')), 'ws'));
  const foreignPath = path.join(os.tmpdir(), 'private-notes', 'alice', 'plan.md');
  const statePath = path.join(dir, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md');
  const state = fs
    .readFileSync(statePath, 'utf8')
    .replace(
      '- [ ] [P1] Write notes/index.md listing every note by tag.',
      `- [ ] [P1] Write notes/index.md listing every note by tag; copy ${foreignPath} with ${SECRET_GITHUB_TOKEN}.`,
    );
  fs.writeFileSync(statePath, state);
  const registryPath = path.join(dir, '.loopx', 'registry.json');
  const registry = JSON.parse(fs.readFileSync(registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
  const goal = registry.goals[0] as Record<string, unknown>;
  goal['display_name'] = `Tidy the notes folder (see ${foreignPath})`;
  goal['operator_question'] = `token ${SECRET_GITHUB_TOKEN} at ${foreignPath}`;
  fs.writeFileSync(registryPath, JSON.stringify(registry, null, 2));
  return { dir, registryPath, statePath, foreignPath };
}

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body, gunzipped when it came gzipped. */
  text: string;
  json: () => Record<string, unknown>;
}

export function request(
  port: number,
  pathName: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; agent?: http.Agent; host?: string } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: options.host ?? '127.0.0.1',
        port,
        path: pathName,
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
        agent: options.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: () => JSON.parse(text) as Record<string, unknown>,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

export const auth = (token = SERVER_TOKEN): Record<string, string> => ({ Authorization: `Bearer ${token}` });
