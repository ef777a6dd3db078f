import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { isLoopxError } from '../../../src/core/errors';
import { startStatusServer, StatusServer, type ListeningStatusServer } from '../../../src/core/server/statusServer';
import { listeningAddresses } from '../../support/listeningAddresses';
import { runLoopx } from '../cli/run';
import { auth, request, SECRET_GITHUB_TOKEN, seededWorkspace, SERVER_TOKEN, type SeededWorkspace } from './helpers';
import { waitUntil } from '../../support/waitFor';

const NOW = '2026-11-28T09:30:00Z';

describe('status server over HTTP (127.0.0.1)', function () {
  this.timeout(30_000);
  let ws: SeededWorkspace;
  let server: ListeningStatusServer;
  let homeDir: string;

  before(async () => {
    ws = seededWorkspace();
    homeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-home-'));
    server = await startStatusServer({
      registryPath: ws.registryPath,
      homeDir,
      clock: fixedClock(NOW),
      token: SERVER_TOKEN,
      port: 0,
    });
  });

  after(async () => {
    await server.close();
  });

  it("listens on 127.0.0.1 only (the kernel's listening socket for its port)", () => {
    assert.deepEqual(listeningAddresses(server.port), ['127.0.0.1']);
  });

  it('case H2: /healthz answers without a token; CORS headers only for loopback origins; OPTIONS answers 204', async () => {
    const plain = await request(server.port, '/healthz');
    assert.equal(plain.status, 200);
    assert.deepEqual(plain.json(), { ok: true });
    assert.equal(plain.headers['access-control-allow-origin'], undefined);
    const foreign = await request(server.port, '/healthz', { headers: { Origin: 'https://evil.example' } });
    assert.equal(foreign.status, 200);
    assert.equal(foreign.headers['access-control-allow-origin'], undefined);
    const local = await request(server.port, '/healthz', { headers: { Origin: 'http://127.0.0.1:5173' } });
    assert.equal(local.headers['access-control-allow-origin'], 'http://127.0.0.1:5173');
    const preflightForeign = await request(server.port, '/status.json', {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example' },
    });
    assert.equal(preflightForeign.status, 204);
    assert.equal(preflightForeign.headers['access-control-allow-origin'], undefined);
    const preflightLocal = await request(server.port, '/status.json', {
      method: 'OPTIONS',
      headers: { Origin: 'http://localhost:3000' },
    });
    assert.equal(preflightLocal.status, 204);
    assert.equal(preflightLocal.headers['access-control-allow-origin'], 'http://localhost:3000');
    assert.equal(preflightLocal.headers['access-control-allow-headers'], 'Authorization, Content-Type');
  });

  it('case H3: GET / names the routes and the runtime identity; /status.json carries local_dashboard_api and no presentation_surfaces', async () => {
    const index = await request(server.port, '/', { headers: auth() });
    assert.equal(index.status, 200);
    const body = index.json();
    assert.equal(body['source'], 'serve-status');
    assert.deepEqual(Object.keys(body['runtime_identity'] as object).sort(), [
      'package_version',
      'release_id',
      'schema_version',
      'source_revision',
    ]);
    assert.equal((body['runtime_identity'] as Record<string, unknown>)['schema_version'], 'loopx_runtime_identity_v1');
    assert.deepEqual(body['routes'], {
      index: '/',
      healthz: '/healthz',
      status: '/status.json',
      goal: '/goals/{goal_id}',
      goal_projection: '/goals/{goal_id}/projection',
      quota: '/quota',
    });
    const status = (await request(server.port, '/status.json', { headers: auth() })).json();
    assert.equal((status['local_dashboard_api'] as Record<string, unknown>)['source'], 'serve-status');
    assert.equal('ok' in (status['local_dashboard_api'] as object), false);
    assert.equal('presentation_surfaces' in status, false);
  });

  it('case H6: an unknown route is a JSON 404, another method a JSON 405, a body 413', async () => {
    const missing = await request(server.port, '/nope', { headers: auth() });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json(), { ok: false, error: 'unknown path: /nope', status_url: '/status.json' });
    assert.match(missing.headers['content-type'] ?? '', /^application\/json/);
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const answer = await request(server.port, '/reward/dry-run', { method, headers: auth() });
      assert.equal(answer.status, 405, method);
      assert.equal(answer.headers['allow'], 'GET, HEAD, OPTIONS');
      assert.equal(answer.json()['ok'], false);
    }
    const withBody = await request(server.port, '/status.json', {
      method: 'GET',
      headers: { ...auth(), 'Content-Type': 'application/json', 'Content-Length': '7' },
      body: '{"a":1}',
    });
    assert.equal(withBody.status, 413);
    const chunked = await request(server.port, '/status.json', {
      method: 'POST',
      headers: { ...auth(), 'Transfer-Encoding': 'chunked' },
      body: 'x',
    });
    assert.equal(chunked.status, 400);
  });

  it('requires the token on every route but /healthz: missing and wrong are 401, header and query both work', async () => {
    for (const route of ['/', '/status.json', '/goals/tidy-notes', '/goals/tidy-notes/projection', '/quota', '/nope']) {
      const missing = await request(server.port, route);
      assert.equal(missing.status, 401, route);
      assert.equal(missing.headers['www-authenticate'], 'Bearer realm="loopx-status"');
      assert.match(String(missing.json()['error']), /token is required/);
      const wrong = await request(server.port, route, { headers: auth(`${SERVER_TOKEN}x`) });
      assert.equal(wrong.status, 401, route);
      assert.match(String(wrong.json()['error']), /not valid/);
      const wrongQuery = await request(server.port, `${route}?token=nope`);
      assert.equal(wrongQuery.status, 401, route);
    }
    for (const route of ['/', '/status.json', '/goals/tidy-notes', '/goals/tidy-notes/projection', '/quota']) {
      assert.equal((await request(server.port, route, { headers: auth() })).status, 200, route);
      assert.equal((await request(server.port, `${route}?token=${SERVER_TOKEN}`)).status, 200, route);
      assert.equal(
        (await request(server.port, route, { headers: { Authorization: `bearer ${SERVER_TOKEN}` } })).status,
        200,
        route,
      );
    }
  });

  it('refuses a Host port out of range or other than the listening one, and loopback spellings but the three', async () => {
    const otherPort = server.port === 65535 ? 1 : server.port + 1;
    for (const host of [
      '127.0.0.1:99999',
      '127.0.0.1:0',
      `127.0.0.1:0${server.port}`,
      `localhost:${otherPort}`,
      `127.1:${server.port}`,
      `0x7f.0.0.1:${server.port}`,
      `2130706433:${server.port}`,
      `[0:0::1]:${server.port}`,
    ]) {
      const answer = await request(server.port, '/healthz', { headers: { Host: host } });
      assert.equal(answer.status, 403, host);
    }
    assert.equal((await request(server.port, '/healthz', { headers: { Host: '127.0.0.1' } })).status, 200);
    for (const origin of [
      'http://127.1',
      'http://0x7f.0.0.1',
      'http://2130706433',
      'http://[0:0::1]',
      'http://127.0.0.1:99999',
    ]) {
      const preflight = await request(server.port, '/status.json', { method: 'OPTIONS', headers: { Origin: origin } });
      assert.equal(preflight.headers['access-control-allow-origin'], undefined, origin);
      const page = await request(server.port, '/status.json', { headers: { ...auth(), Origin: origin } });
      assert.equal(page.status, 403, origin);
      assert.equal(page.headers['access-control-allow-origin'], undefined, origin);
    }
  });

  it('accepts the host an editor handed its URL out under (asExternalUri, a proxy keeping the public Host), only that one', async () => {
    const own = await startStatusServer({
      registryPath: ws.registryPath,
      homeDir,
      clock: fixedClock(NOW),
      token: SERVER_TOKEN,
      port: 0,
    });
    try {
      const proxied = { ...auth(), Host: 'ide.example.com:8443' };
      assert.equal(
        (await request(own.port, '/status.json', { headers: proxied })).status,
        403,
        'before it is handed out',
      );
      own.allowExternalHost('IDE.example.com:8443');
      assert.equal((await request(own.port, '/status.json', { headers: proxied })).status, 200);
      for (const host of ['ide.example.com', 'ide.example.com:8444', 'evil.example:8443'])
        assert.equal(
          (await request(own.port, '/status.json', { headers: { ...auth(), Host: host } })).status,
          403,
          host,
        );
    } finally {
      await own.close();
    }
  });

  it('refuses forged Host headers (DNS rebinding) and browser pages from other origins', async () => {
    for (const host of [
      'evil.example',
      `evil.example:${server.port}`,
      `127.0.0.1.evil.example:${server.port}`,
      'localhost.attacker.test',
    ]) {
      const answer = await request(server.port, '/status.json', { headers: { ...auth(), Host: host } });
      assert.equal(answer.status, 403, host);
      assert.match(String(answer.json()['error']), /Host header/);
      assert.equal((await request(server.port, '/healthz', { headers: { Host: host } })).status, 403, host);
    }
    for (const host of [`localhost:${server.port}`, `127.0.0.1:${server.port}`, `[::1]:${server.port}`]) {
      assert.equal(
        (await request(server.port, '/status.json', { headers: { ...auth(), Host: host } })).status,
        200,
        host,
      );
    }
    const foreignPage = await request(server.port, '/status.json', {
      headers: { ...auth(), Origin: 'https://evil.example' },
    });
    assert.equal(foreignPage.status, 403);
    const localPage = await request(server.port, '/status.json', {
      headers: { ...auth(), Origin: `http://127.0.0.1:${server.port}` },
    });
    assert.equal(localPage.status, 200);
    assert.equal(localPage.headers['access-control-allow-origin'], `http://127.0.0.1:${server.port}`);
  });

  it('refuses an HTTP/1.0 request without a Host header', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(server.port, '127.0.0.1', () => socket.write('GET /healthz HTTP/1.0\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8');
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(raw, /^HTTP\/1\.[01] 403/);
  });

  it('reads a request target starting with // as a path, never as a host: 404 or 400, never 500', async () => {
    const raw = (target: string): Promise<string> =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(server.port, '127.0.0.1', () =>
          socket.write(
            `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${SERVER_TOKEN}\r\nConnection: close\r\n\r\n`,
          ),
        );
        let text = '';
        socket.on('data', (chunk) => {
          text += chunk.toString('utf8');
        });
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
    // `//status.json%20` used to be read as the host "status.json%20" (500), and `//evil/status.json`
    // as the path /status.json of host "evil" (200).
    for (const target of ['//status.json%20', '//evil/status.json', '//', '//127.0.0.1/healthz']) {
      const answer = await raw(target);
      assert.match(answer, /^HTTP\/1\.1 404 /, `${target}: ${answer.slice(0, 200)}`);
      assert.match(answer, /"unknown path: \/\//, target);
    }
  });

  it("serves every route with the goal's todos, gates, quota, recent runs, warnings and projection", async () => {
    const detail = (await request(server.port, '/goals/tidy-notes', { headers: auth() })).json();
    assert.equal(detail['goal_id'], 'tidy-notes');
    const todos = detail['todos'] as { user: { todo_id: string }[]; agent: { todo_id: string; status: string }[] };
    assert.deepEqual(
      todos.agent.map((t) => t.todo_id),
      ['todo_titles', 'todo_related', 'todo_index', 'todo_links', 'todo_publish'],
    );
    assert.deepEqual(
      todos.user.map((t) => t.todo_id),
      ['todo_gate_publish', 'todo_review_index'],
    );
    assert.deepEqual(
      (detail['gates'] as { open: { todo_id: string }[] }).open.map((g) => g.todo_id),
      ['todo_gate_publish'],
    );
    assert.equal((detail['quota'] as Record<string, unknown>)['allowed_slots'], 24);
    assert.equal((detail['recent_runs'] as unknown[]).length, 3);
    assert.deepEqual(
      (detail['warnings'] as { kind: string }[]).map((w) => w.kind),
      ['stale_latest_run_projection'],
    );
    const projection = (await request(server.port, '/goals/tidy-notes/projection', { headers: auth() })).json();
    const channel = projection['goal_channel_projection'] as Record<string, unknown>;
    assert.equal(channel['schema_version'], 'goal_channel_projection_v0');
    assert.equal(channel['mode'], 'read_only');
    // The original's rule: one entry for the open user gates of the projection's todos (each gate's title and scope
    // are the detail's `gates.open` above).
    assert.deepEqual(channel['open_gates'], [
      {
        gate_id: 'project_asset_user_gate_todos',
        kind: 'user_todo',
        status: 'action_required',
        blocks: ['todo_gate_publish'],
      },
    ]);
    const quota = (await request(server.port, '/quota', { headers: auth() })).json();
    assert.deepEqual(
      (quota['goals'] as { goal_id: string; spent_slots: number; state: string }[]).map((g) => [
        g.goal_id,
        g.spent_slots,
        g.state,
      ]),
      // The open user gate holds the goal for the controller: the same state `loopx status` shows.
      [['tidy-notes', 1, 'operator_gate']],
    );
    const unknown = await request(server.port, '/goals/other', { headers: auth() });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json()['error'], 'unknown goal: other');
    const invalid = await request(server.port, '/goals/a%2Fb', { headers: auth() });
    assert.equal(invalid.status, 400);
  });

  it('one status model: /status.json items equal `loopx status` items field by field (quota state at an operator gate included)', async () => {
    const served = (await request(server.port, '/status.json', { headers: auth() })).json();
    const cli = await runLoopx(['--registry', ws.registryPath, '--format', 'json', 'status'], {
      cwd: ws.dir,
      env: { HOME: homeDir },
      now: NOW,
    });
    assert.equal(cli.code, 0, cli.stderr);
    const itemsOf = (payload: Record<string, unknown>) =>
      (payload['attention_queue'] as { items: Record<string, unknown>[] }).items.filter(
        (i) => i['goal_id'] !== undefined,
      );
    const [fromServer] = itemsOf(served);
    const [fromCli] = itemsOf(JSON.parse(cli.stdout) as Record<string, unknown>);
    assert.ok(fromServer !== undefined && fromCli !== undefined);
    assert.equal((fromServer['quota'] as { state: string }).state, 'operator_gate');
    // The server scrubs paths and secrets; every field the kit and the dashboard compare is the same value.
    for (const field of [
      'goal_id',
      'status',
      'waiting_on',
      'severity',
      'recommended_action',
      'source',
      'active_state_next_action',
      'latest_run_recommended_action',
      'latest_run_recommended_action_source',
      'next_action_projection_warning',
      'user_todos',
      'agent_todos',
      'quota',
    ])
      assert.deepEqual(
        fromServer[field],
        fromCli[field] === undefined
          ? undefined
          : JSON.parse(JSON.stringify(fromCli[field]).replaceAll(`${path.dirname(ws.foreignPath)}/`, '<abs>/')),
        field,
      );
  });

  it('leaks no absolute path and no secret in any response (case H3/H6 adapted)', async () => {
    const routes = [
      '/',
      '/healthz',
      '/status.json',
      '/goals/tidy-notes',
      '/goals/tidy-notes/projection',
      '/quota',
      '/nope',
      '/goals/other',
    ];
    const forbidden = [
      ws.dir,
      ws.foreignPath,
      path.dirname(ws.foreignPath),
      homeDir,
      os.tmpdir() + path.sep,
      SECRET_GITHUB_TOKEN,
      SERVER_TOKEN,
      'ghp_',
    ];
    for (const route of routes) {
      for (const encoding of ['identity', 'gzip']) {
        const answer = await request(server.port, route, { headers: { ...auth(), 'Accept-Encoding': encoding } });
        for (const needle of forbidden)
          assert.equal(answer.text.includes(needle), false, `${route} (${encoding}) contains ${needle}`);
      }
    }
    const status = (await request(server.port, '/status.json', { headers: auth() })).json();
    assert.equal(status['registry'], '<project>/.loopx/registry.json');
    assert.equal(status['runtime_root'], '<runtime>');
    const text = JSON.stringify(status);
    assert.ok(text.includes('[redacted:github_token]'), 'the planted token is redacted, not dropped silently');
    assert.ok(text.includes('<abs>/plan.md'), 'the planted path is labelled');
  });

  it('serves gzip to clients that take it, and 304 for a current ETag', async () => {
    const plain = await request(server.port, '/status.json', { headers: auth() });
    const zipped = await request(server.port, '/status.json', {
      headers: { ...auth(), 'Accept-Encoding': 'gzip, deflate, br' },
    });
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(zipped.text, plain.text);
    assert.equal(plain.headers['cache-control'], 'no-store');
    const etag = plain.headers['etag'];
    assert.ok(etag);
    const again = await request(server.port, '/status.json', { headers: { ...auth(), 'If-None-Match': etag } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
  });

  it('answers 200 concurrent clients without an error, from one cached snapshot', async () => {
    const agent = new http.Agent({ keepAlive: false, maxSockets: 1000 });
    const before = server.source.rebuilds;
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        request(server.port, i % 4 === 0 ? '/healthz' : '/status.json', { headers: auth(), agent }),
      ),
    );
    agent.destroy();
    assert.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
    const bodies = new Set(answers.filter((_, i) => i % 4 !== 0).map((a) => a.text));
    assert.equal(bodies.size, 1);
    assert.equal(server.source.rebuilds, before, 'no rebuild: nothing changed');
  });

  it('rebuilds after a watched file changes, and only then', async () => {
    const before = (await request(server.port, '/status.json', { headers: auth() })).json();
    const firstRebuilds = server.source.rebuilds;
    const item = (payload: Record<string, unknown>) =>
      (payload['attention_queue'] as { items: Record<string, unknown>[] }).items[0] ?? {};
    assert.equal((item(before)['agent_todos'] as { open_count: number }).open_count, 4);
    const text = fs
      .readFileSync(ws.statePath, 'utf8')
      .replace(
        '## Next Action',
        '- [ ] [P2] Check the spelling of every title.\n  <!-- loopx:todo todo_id=todo_spelling status=open task_class=advancement_task -->\n\n## Next Action',
      );
    fs.writeFileSync(ws.statePath, text);
    await waitUntil(async () => {
      const now = (await request(server.port, '/status.json', { headers: auth() })).json();
      return (item(now)['agent_todos'] as { open_count: number }).open_count === 5;
    }, 'the new todo to show up');
    assert.ok(server.source.rebuilds > firstRebuilds);
  });

  it('a port in use is a clear port_in_use error; a non-loopback host is refused', async () => {
    const other = new StatusServer({
      registryPath: ws.registryPath,
      homeDir,
      clock: fixedClock(NOW),
      token: SERVER_TOKEN,
    });
    await assert.rejects(
      other.listen(server.port),
      (error: unknown) => isLoopxError(error, 'port_in_use') && /already in use/.test(String((error as Error).message)),
    );
    await assert.rejects(other.listen(0, '0.0.0.0' as '127.0.0.1'), (error: unknown) =>
      isLoopxError(error, 'not_loopback'),
    );
    await other.close();
  });
});

describe('status server edge cases', function () {
  this.timeout(30_000);

  it('without a token (compatibility mode) every route answers; the registry missing is a 500 with labels', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-server-missing-'));
    const registryPath = path.join(dir, '.loopx', 'registry.json');
    const server = await startStatusServer({
      registryPath,
      homeDir: os.homedir(),
      clock: fixedClock(NOW),
      token: null,
      port: 0,
      watch: false,
    });
    try {
      const status = await request(server.port, '/status.json');
      assert.equal(status.status, 500);
      const body = status.json();
      assert.equal(body['ok'], false);
      assert.equal(body['registry'], '<project>/.loopx/registry.json');
      assert.equal(status.text.includes(dir), false);
      assert.equal((await request(server.port, '/')).json()['ok'], true);
      assert.deepEqual((await request(server.port, '/')).json()['auth'], { required: false, accepts: [] });
    } finally {
      await server.close();
    }
  });

  it('without file watching, the safety TTL notices a change', async () => {
    const ws = seededWorkspace();
    const server = await startStatusServer({
      registryPath: ws.registryPath,
      homeDir: os.homedir(),
      clock: fixedClock(NOW),
      token: SERVER_TOKEN,
      port: 0,
      watch: false,
      ttlMs: 50,
    });
    try {
      const display = async () =>
        (
          (await request(server.port, '/status.json', { headers: auth() })).json()['attention_queue'] as {
            items: { display_name: string }[];
          }
        ).items[0]?.display_name;
      assert.match(String(await display()), /^Tidy the notes folder/);
      const registry = JSON.parse(fs.readFileSync(ws.registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
      (registry.goals[0] as Record<string, unknown>)['display_name'] = 'Renamed goal';
      fs.writeFileSync(ws.registryPath, JSON.stringify(registry));
      await waitUntil(async () => (await display()) === 'Renamed goal', 'the renamed goal');
    } finally {
      await server.close();
    }
  });

  it('closes a connection that never finishes its headers (slow client)', async () => {
    const ws = seededWorkspace();
    const server = await startStatusServer({
      registryPath: ws.registryPath,
      homeDir: os.homedir(),
      clock: fixedClock(NOW),
      token: SERVER_TOKEN,
      port: 0,
      watch: false,
    });
    try {
      const answer = await new Promise<string | null>((resolve) => {
        let received = '';
        const socket = net.connect(server.port, '127.0.0.1', () =>
          socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: '),
        );
        socket.on('data', (chunk) => {
          received += chunk.toString('utf8');
        });
        socket.on('close', () => resolve(received));
        socket.setTimeout(20_000, () => {
          resolve(null);
          socket.destroy();
        });
      });
      assert.notEqual(answer, null, 'the server closed the connection');
      assert.match(answer ?? '', /^HTTP\/1\.1 408/);
    } finally {
      await server.close();
    }
  });
});
