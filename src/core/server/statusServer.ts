import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../clock';
import { errorMessage, LoopxError } from '../errors';
import { scrubValue, type ScrubContext } from '../privacy/scrub';
import { checkGoalIdSegment } from '../registry/goalId';
import { registryProjectRoot } from '../registry/locate';
import { LOOPX_VERSION } from '../version';
import {
  corsHeaders,
  hostHeaderAllowed,
  LOOPBACK_BIND_HOSTS,
  loopbackOrigin,
  presentedToken,
  tokenMatches,
  type LoopbackBindHost,
} from './security';
import type { LiveStatusModel } from '../status/liveStatus';
import { StatusSource, type CachedBody } from './statusSource';

/**
 * The read-only HTTP status server (`loopx serve-status`, and the editor's status server): the
 * status read model for existing LoopX dashboards, on a loopback address only.
 *
 * Every request passes, in order: the Host gate (a loopback name, against DNS rebinding), the
 * no-body gate (413/400), the method gate (GET/HEAD; OPTIONS answers CORS preflights; others 405),
 * the Origin gate (a browser page from a non-loopback origin gets 403, except on /healthz), and
 * the token gate (every route but /healthz). Every body passes the private-data scrubber.
 */

export const DEFAULT_STATUS_PORT = 8787;
export const STATUS_PATH = '/status.json';

export interface StatusServerOptions {
  registryPath: string;
  homeDir: string;
  runtimeRootOverride?: string | null;
  clock: Clock;
  /** Null turns authentication off (compatibility with dashboards that cannot send one); callers warn. */
  token: string | null;
  ttlMs?: number;
  watch?: boolean;
  /** The live status model to serve (the editor shares its own); without one the server makes its own. */
  model?: LiveStatusModel;
  log?: (level: 'info' | 'warn', message: string) => void;
}

export interface ListeningStatusServer {
  host: LoopbackBindHost;
  port: number;
  /** `http://127.0.0.1:<port>` (or `http://[::1]:<port>`). */
  origin: string;
  source: StatusSource;
  /**
   * Lets the Host gate accept an authority (`host[:port]`) the server's URL was handed out under
   * (the editor's `asExternalUri`: code-server's `/proxy/<port>/`, which forwards the public Host).
   */
  allowExternalHost(authority: string): void;
  close(): Promise<void>;
}

/** Routes listed by `GET /` and in /status.json as `local_dashboard_api`. */
function routeIndex(authRequired: boolean): Record<string, unknown> {
  return {
    source: 'serve-status',
    runtime_identity: {
      schema_version: 'loopx_runtime_identity_v1',
      package_version: LOOPX_VERSION,
      release_id: `loopx-vscode@${LOOPX_VERSION}`,
      source_revision: null,
    },
    read_only: true,
    auth: authRequired
      ? { required: true, accepts: ['Authorization: Bearer <token>', '?token=<token>'] }
      : { required: false, accepts: [] },
    routes: {
      index: '/',
      healthz: '/healthz',
      status: STATUS_PATH,
      goal: '/goals/{goal_id}',
      goal_projection: '/goals/{goal_id}/projection',
      quota: '/quota',
    },
  };
}

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};
const JSON_TYPE = 'application/json; charset=utf-8';
const HEALTHZ_BODY = Buffer.from('{"ok":true}', 'utf8');

/** Timeouts against slow or idle clients (milliseconds). */
const HEADERS_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 10_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
const MAX_HEADER_BYTES = 16 * 1024;
/** How often the header and request timeouts are enforced (Node's default is 30 s). */
const CONNECTIONS_CHECK_MS = 1_000;

/**
 * The URL of a request target. An origin-form target ("/status.json") is appended to the base,
 * never resolved against it: `new URL("//x", base)` would read "x" as a host (and throw, a 500, for
 * "//status.json%20"). An absolute-form target ("http://127.0.0.1:P/status.json") is parsed as is.
 * Anything else (or a target that does not parse) is null: a 400.
 */
function requestUrl(target: string): URL | null {
  try {
    if (target.startsWith('/')) return new URL(`http://127.0.0.1${target}`);
    return /^https?:\/\//i.test(target) ? new URL(target) : null;
  } catch {
    return null;
  }
}

export class StatusServer {
  readonly source: StatusSource;
  private readonly server: http.Server;
  private readonly indexBody: Record<string, unknown>;
  private readonly fallbackScrub: ScrubContext;
  private readonly externalHosts = new Set<string>();

  constructor(private readonly options: StatusServerOptions) {
    this.indexBody = routeIndex(options.token !== null);
    this.source = new StatusSource({
      registryPath: options.registryPath,
      homeDir: options.homeDir,
      runtimeRootOverride: options.runtimeRootOverride ?? null,
      clock: options.clock,
      ...(options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {}),
      ...(options.watch !== undefined ? { watch: options.watch } : {}),
      ...(options.model !== undefined ? { model: options.model } : {}),
      dashboardApi: this.indexBody,
      ...(options.log ? { log: options.log } : {}),
    });
    this.fallbackScrub = { projectRoots: [registryProjectRoot(options.registryPath)], homeDir: options.homeDir };
    this.server = http.createServer(
      {
        maxHeaderSize: MAX_HEADER_BYTES,
        requestTimeout: REQUEST_TIMEOUT_MS,
        headersTimeout: HEADERS_TIMEOUT_MS,
        keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
        connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
      },
      (req, res) => {
        this.handle(req, res).catch((error: unknown) => {
          options.log?.('warn', `request failed: ${scrubValue(errorMessage(error), this.fallbackScrub)}`);
          if (!res.headersSent) this.sendJson(req, res, 500, { ok: false, error: 'internal error; see the LoopX log' });
          else res.destroy();
        });
      },
    );
    this.server.headersTimeout = HEADERS_TIMEOUT_MS;
    this.server.requestTimeout = REQUEST_TIMEOUT_MS;
    this.server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    this.server.maxHeadersCount = 64;
  }

  /**
   * Listens on a loopback address. `port` 0 picks a free one. A port in use rejects with
   * LoopxError `port_in_use` (details: host, port) and leaves nothing open.
   */
  listen(port: number, host: LoopbackBindHost = '127.0.0.1'): Promise<ListeningStatusServer> {
    if (!(LOOPBACK_BIND_HOSTS as readonly string[]).includes(host)) {
      return Promise.reject(
        new LoopxError(
          'not_loopback',
          `the status server binds only ${LOOPBACK_BIND_HOSTS.join(' or ')}, not ${host}`,
          { host },
        ),
      );
    }
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      return Promise.reject(
        new LoopxError('invalid_port', `port must be a whole number from 0 to 65535, got ${String(port)}`, { port }),
      );
    }
    return new Promise((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException): void => {
        this.server.off('listening', onListening);
        if (error.code === 'EADDRINUSE') {
          reject(
            new LoopxError(
              'port_in_use',
              `port ${port} on ${host} is already in use; choose another port, or port 0 for a free one`,
              { host, port },
            ),
          );
        } else {
          reject(
            new LoopxError('listen_failed', `the status server could not listen on ${host}:${port}: ${error.message}`, {
              host,
              port,
              code: error.code,
            }),
          );
        }
      };
      const onListening = (): void => {
        this.server.off('error', onError);
        const address = this.server.address() as AddressInfo;
        const origin = host === '::1' ? `http://[::1]:${address.port}` : `http://127.0.0.1:${address.port}`;
        resolve({
          host,
          port: address.port,
          origin,
          source: this.source,
          allowExternalHost: (authority) => this.externalHosts.add(authority.trim().toLowerCase()),
          close: () => this.close(),
        });
      };
      this.server.once('error', onError);
      this.server.once('listening', onListening);
      this.server.listen({ port, host, exclusive: true });
    });
  }

  /** Stops listening, ends idle and active connections, and stops watching files. */
  close(): Promise<void> {
    this.source.close();
    return new Promise((resolve) => {
      if (!this.server.listening) {
        resolve();
        return;
      }
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const origin = req.headers.origin;
    const listening = this.server.address();
    const port = listening !== null && typeof listening === 'object' ? listening.port : undefined;
    if (!hostHeaderAllowed(req.headers.host, port, this.externalHosts)) {
      this.sendJson(req, res, 403, {
        ok: false,
        error:
          "the Host header must name a loopback host (127.0.0.1, localhost or [::1]) and, if it has a port, this server's port (or the address LoopX: Copy Status Server URL copied)",
      });
      return;
    }
    const length = req.headers['content-length'];
    if (req.headers['transfer-encoding'] !== undefined) {
      this.sendJson(req, res, 400, { ok: false, error: 'request bodies are not accepted' }, { Connection: 'close' });
      return;
    }
    if (length !== undefined && length !== '0') {
      this.sendJson(req, res, 413, { ok: false, error: 'request bodies are not accepted' }, { Connection: 'close' });
      return;
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...SECURITY_HEADERS, ...corsHeaders(origin), 'Content-Length': '0' });
      res.end();
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      this.sendJson(
        req,
        res,
        405,
        { ok: false, error: `method ${req.method ?? ''} is not allowed: the status server is read-only` },
        { Allow: 'GET, HEAD, OPTIONS' },
      );
      return;
    }
    const url = requestUrl(req.url ?? '/');
    if (url === null) {
      this.sendJson(req, res, 400, {
        ok: false,
        error: 'the request target must be a path starting with / (for example /status.json)',
      });
      return;
    }
    const route = url.pathname;
    if (route === '/healthz') {
      res.writeHead(200, {
        ...SECURITY_HEADERS,
        ...corsHeaders(origin),
        'Content-Type': JSON_TYPE,
        'Content-Length': String(HEALTHZ_BODY.length),
      });
      res.end(req.method === 'HEAD' ? undefined : HEALTHZ_BODY);
      return;
    }
    if (origin !== undefined && loopbackOrigin(origin) === null) {
      this.sendJson(req, res, 403, { ok: false, error: 'requests from non-loopback browser origins are refused' });
      return;
    }
    if (this.options.token !== null) {
      const token = presentedToken(req.headers.authorization, url.searchParams);
      if (token === null || !tokenMatches(this.options.token, token)) {
        this.sendJson(
          req,
          res,
          401,
          {
            ok: false,
            error:
              token === null
                ? 'a token is required: send Authorization: Bearer <token>, or add ?token=<token> (LoopX: Copy Status Server URL copies a URL with it)'
                : 'the token is not valid for this server',
          },
          { 'WWW-Authenticate': 'Bearer realm="loopx-status"' },
        );
        return;
      }
    }
    if (route === '/') {
      this.sendJson(req, res, 200, { ok: true, ...this.indexBody });
      return;
    }
    if (route === STATUS_PATH || route === '/quota') {
      const snapshot = await this.source.current();
      if (!snapshot.ok) this.sendBody(req, res, 500, snapshot.body);
      else this.sendBody(req, res, 200, route === STATUS_PATH ? snapshot.bodies.status : snapshot.bodies.quota);
      return;
    }
    const goalRoute = /^\/goals\/([^/]+)(\/projection)?$/.exec(route);
    if (goalRoute?.[1] !== undefined) {
      let goalId: string;
      try {
        goalId = checkGoalIdSegment(decodeURIComponent(goalRoute[1]));
      } catch (error) {
        this.sendJson(req, res, 400, { ok: false, error: errorMessage(error) });
        return;
      }
      const snapshot = await this.source.current();
      if (!snapshot.ok) {
        this.sendBody(req, res, 500, snapshot.body);
        return;
      }
      const bodies = await this.source.goalBodies(goalId);
      if (bodies === null)
        this.sendJson(req, res, 404, { ok: false, error: `unknown goal: ${goalId}`, status_url: STATUS_PATH });
      else this.sendBody(req, res, 200, goalRoute[2] === undefined ? bodies.detail : bodies.projection);
      return;
    }
    this.sendJson(req, res, 404, { ok: false, error: `unknown path: ${route}`, status_url: STATUS_PATH });
  }

  /** A small computed body: scrubbed, then sent. */
  private sendJson(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    status: number,
    value: unknown,
    extra: Record<string, string> = {},
  ): void {
    const json = Buffer.from(JSON.stringify(scrubValue(value, this.fallbackScrub)), 'utf8');
    res.writeHead(status, {
      ...SECURITY_HEADERS,
      ...corsHeaders(req.headers.origin),
      ...extra,
      'Content-Type': JSON_TYPE,
      'Content-Length': String(json.length),
    });
    res.end(req.method === 'HEAD' ? undefined : json);
  }

  /** A cached body (scrubbed when it was built): gzip when the client takes it, 304 when its copy is current. */
  private sendBody(req: http.IncomingMessage, res: http.ServerResponse, status: number, body: CachedBody): void {
    const headers: Record<string, string> = {
      ...SECURITY_HEADERS,
      ...corsHeaders(req.headers.origin),
      'Content-Type': JSON_TYPE,
      ETag: body.etag,
      Vary: req.headers.origin === undefined ? 'Accept-Encoding' : 'Origin, Accept-Encoding',
    };
    if (status === 200 && req.headers['if-none-match'] === body.etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    const gzip = /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');
    const payload = gzip ? body.gzip : body.json;
    if (gzip) headers['Content-Encoding'] = 'gzip';
    headers['Content-Length'] = String(payload.length);
    res.writeHead(status, headers);
    res.end(req.method === 'HEAD' ? undefined : payload);
  }
}

/** Starts a status server on `host:port` (a loopback address). */
export async function startStatusServer(
  options: StatusServerOptions & { port: number; host?: LoopbackBindHost },
): Promise<ListeningStatusServer> {
  const server = new StatusServer(options);
  try {
    return await server.listen(options.port, options.host ?? '127.0.0.1');
  } catch (error) {
    await server.close();
    throw error;
  }
}
