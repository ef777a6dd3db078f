import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The request gates of the status server, as pure functions. They fix the original's weaknesses
 * (docs/status-server.md#security): the `Host` header must name a loopback host (no
 * DNS rebinding), only loopback browser origins get CORS headers, and a bearer token guards
 * every route but `/healthz`.
 */

/** Addresses the server may bind. */
export const LOOPBACK_BIND_HOSTS = ['127.0.0.1', '::1'] as const;
export type LoopbackBindHost = (typeof LOOPBACK_BIND_HOSTS)[number];

/**
 * Host and origin spellings accepted, exactly: a URL parser would also turn `127.1`, `0x7f.0.0.1`,
 * `2130706433` or `[0:0::1]` into loopback, and none of them is what a dashboard sends.
 */
const LOOPBACK_AUTHORITY = /^(127\.0\.0\.1|localhost|\[::1\])(?::([1-9][0-9]{0,4}))?$/i;

/** The port of an authority that names a loopback host exactly: null when there is none, false when it is not one. */
function loopbackAuthorityPort(authority: string): number | null | false {
  const match = LOOPBACK_AUTHORITY.exec(authority);
  if (match === null) return false;
  if (match[2] === undefined) return null;
  const port = Number(match[2]);
  return port <= 65535 ? port : false;
}

/**
 * Whether a `Host` header names a loopback host (with or without a port; with `expectedPort`, a
 * port given must be that one). A missing header fails: every HTTP/1.1 client sends one, and a
 * rebinding page cannot send a loopback one.
 */
export function hostHeaderIsLoopback(host: string | undefined, expectedPort?: number): boolean {
  if (host === undefined) return false;
  const port = loopbackAuthorityPort(host.trim());
  if (port === false) return false;
  return port === null || expectedPort === undefined || port === expectedPort;
}

/**
 * The Host gate: a loopback host (see `hostHeaderIsLoopback`), or exactly one of the authorities
 * the editor handed the server's URL out under (`vscode.env.asExternalUri`: code-server's proxy,
 * a forwarded port), which reach it through a proxy on this machine that keeps the public Host.
 */
export function hostHeaderAllowed(
  host: string | undefined,
  expectedPort: number | undefined,
  externalAuthorities: ReadonlySet<string>,
): boolean {
  if (hostHeaderIsLoopback(host, expectedPort)) return true;
  return host !== undefined && externalAuthorities.has(host.trim().toLowerCase());
}

/** The origin when it is `http(s)://` plus one of the accepted loopback spellings and an optional port, else null. */
export function loopbackOrigin(origin: string | undefined): string | null {
  if (origin === undefined) return null;
  const match = /^https?:\/\/([^/?#]*)$/i.exec(origin);
  if (match?.[1] === undefined) return null;
  return loopbackAuthorityPort(match[1]) === false ? null : origin;
}

export const CORS_ALLOW_METHODS = 'GET, HEAD, OPTIONS';
export const CORS_ALLOW_HEADERS = 'Authorization, Content-Type';

/** CORS headers for a request's `Origin`: echoed only for loopback origins, none otherwise. */
export function corsHeaders(origin: string | undefined): Record<string, string> {
  const allowed = loopbackOrigin(origin);
  if (allowed === null) return {};
  return {
    'Access-Control-Allow-Origin': allowed,
    'Access-Control-Allow-Methods': CORS_ALLOW_METHODS,
    'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS,
    Vary: 'Origin',
  };
}

/** A fresh token: 32 random bytes, URL-safe. */
export function generateStatusToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Tokens must be long enough to resist guessing and safe to put in a URL. */
export const STATUS_TOKEN_PATTERN = /^[A-Za-z0-9._~-]{16,512}$/;

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Compares in constant time (over fixed-length digests, so the length leaks nothing either). */
export function tokenMatches(expected: string, provided: string): boolean {
  return timingSafeEqual(digest(expected), digest(provided));
}

/**
 * The token a request presents: `Authorization: Bearer <token>` first, else the `token` query
 * parameter (so a dashboard given the copied URL works unchanged). Null when there is none.
 */
export function presentedToken(authorization: string | undefined, query: URLSearchParams): string | null {
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match?.[1]) return match[1];
  }
  const fromQuery = query.get('token');
  return fromQuery === null || fromQuery === '' ? null : fromQuery;
}
