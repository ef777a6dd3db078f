import { LoopxError } from '../errors';
import { scrubText } from '../privacy/scrub';
import { registryProjectRoot } from '../registry/locate';
import { generateStatusToken, STATUS_TOKEN_PATTERN, type LoopbackBindHost } from '../server/security';
import { startStatusServer } from '../server/statusServer';
import { locateRegistryOf } from './goalHandle';
import type { OperationEnvironment } from './operation';

/**
 * The status server as a service a host starts and stops (`loopx serve-status`): the read model of
 * the environment's registry served on a loopback address, with its own live status model watching
 * the files. It is not an operation (it runs until its host stops it, and the host owns the signals
 * and the banner); the editor's in-process status server shares the editor's live model instead
 * (src/server).
 */

export { DEFAULT_STATUS_PORT, STATUS_PATH } from '../server/statusServer';
// The editor's in-process status server (src/server) serves its own live model: it starts the server itself.
export { generateStatusToken, STATUS_TOKEN_PATTERN } from '../server/security';
export { startStatusServer } from '../server/statusServer';
export type { LoopbackBindHost } from '../server/security';

/** The environment variable that chooses the token (kept out of the banner when set). */
export const STATUS_TOKEN_ENV = 'LOOPX_STATUS_TOKEN';

export interface StatusServiceToken {
  /** Null when the host serves without a token. */
  token: string | null;
  /** The token came from `LOOPX_STATUS_TOKEN`: a banner must not print it. */
  fromEnv: boolean;
}

/**
 * The token the service will require: none when `useToken` is false, else `LOOPX_STATUS_TOKEN` of
 * the environment when set (a `usage` error unless it is 16 to 512 URL-safe characters), else a
 * fresh random one.
 */
export function statusServiceToken(env: OperationEnvironment, useToken: boolean): StatusServiceToken {
  const envToken = env.env[STATUS_TOKEN_ENV];
  const fromEnv = envToken !== undefined && envToken !== '';
  if (!useToken) return { token: null, fromEnv: false };
  if (fromEnv && !STATUS_TOKEN_PATTERN.test(envToken)) {
    throw new LoopxError(
      'usage',
      `${STATUS_TOKEN_ENV} must be 16 to 512 characters of A-Z, a-z, 0-9, '.', '_', '~' or '-'`,
    );
  }
  return fromEnv ? { token: envToken, fromEnv: true } : { token: generateStatusToken(), fromEnv: false };
}

export interface StatusServiceRequest {
  /** 0 picks a free port. */
  port: number;
  host: LoopbackBindHost;
  token: string | null;
  log?: (level: 'info' | 'warn', message: string) => void;
}

export interface StatusService {
  /** `http://127.0.0.1:<port>` (or `http://[::1]:<port>`). */
  origin: string;
  port: number;
  /** The registry served, scrubbed for display (home and project paths shortened, secrets removed). */
  registryLabel: string;
  /** How many status snapshots the service has built so far. */
  readonly snapshotsBuilt: number;
  close(): Promise<void>;
}

/**
 * Starts serving the registry the environment locates (`--registry`, `LOOPX_REGISTRY`, `./.loopx`,
 * global; a missing one is served as such, not refused). A taken port is a `port_in_use` error.
 */
export async function startStatusService(
  env: OperationEnvironment,
  request: StatusServiceRequest,
): Promise<StatusService> {
  const registry = locateRegistryOf(env);
  const server = await startStatusServer({
    registryPath: registry.path,
    homeDir: env.homeDir,
    runtimeRootOverride: env.runtimeRootOverride ?? null,
    clock: env.clock,
    token: request.token,
    port: request.port,
    host: request.host,
    ...(request.log !== undefined ? { log: request.log } : {}),
  });
  return {
    origin: server.origin,
    port: server.port,
    registryLabel: scrubText(registry.path, {
      projectRoots: [registryProjectRoot(registry.path)],
      homeDir: env.homeDir,
    }),
    get snapshotsBuilt() {
      return server.source.rebuilds;
    },
    close: () => server.close(),
  };
}
