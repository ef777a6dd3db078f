import { LoopxError } from '../../core/errors';
import {
  DEFAULT_STATUS_PORT,
  startStatusService,
  STATUS_PATH,
  STATUS_TOKEN_ENV,
  statusServiceToken,
  type LoopbackBindHost,
  type StatusService,
} from '../../core/ops/statusService';
import type { CliContext, CommandOutput } from '../context';
import { cliEnvironment } from '../operationHandler';
import type { CliHandler } from './index';
import { numericOption } from '../numbers';

/**
 * `loopx serve-status [--port N] [--host 127.0.0.1|::1] [--no-token]`: serves the status read
 * model on a loopback address until Ctrl+C (SIGINT) or SIGTERM. The banner (with the token, printed
 * once; or taken from LOOPX_STATUS_TOKEN and not printed) goes to stderr; stdout gets the one
 * result when the server stops.
 *
 * It stays a CLI command rather than an operation: it runs until a signal arrives and owns the
 * process's signal handlers and stderr banner. The editor serves the same read model through its
 * own status server (src/server).
 */
export const serveStatusCommand: CliHandler = {
  configure: (command) => {
    command
      .option('--port <n>', `TCP port on the loopback address (default ${DEFAULT_STATUS_PORT}; 0 picks a free one)`)
      .option('--host <host>', 'loopback address to bind: 127.0.0.1 (default) or ::1')
      .option(
        '--no-token',
        'serve without a token, for dashboards that cannot send one (any local process can then read the status)',
      );
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
    const port = numericOption(options, 'port', '--port', { integer: true, min: 0, max: 65535 }) ?? DEFAULT_STATUS_PORT;
    const host = parseHost(options['host']);
    const env = cliEnvironment(ctx, globals);
    const { token, fromEnv } = statusServiceToken(env, options['token'] !== false);
    let server: StatusService;
    try {
      server = await startStatusService(env, {
        token,
        port,
        host,
        log: (level, message) => ctx.stderr(`loopx serve-status: ${level}: ${message}\n`),
      });
    } catch (error) {
      if (error instanceof LoopxError && error.code === 'port_in_use') {
        throw new LoopxError(
          'port_in_use',
          `${error.message} (pass --port 0, or --port N for another port)`,
          error.details,
        );
      }
      throw error;
    }
    printBanner(ctx, server, token, fromEnv);
    const started = ctx.clock.now();
    const signal = await untilStopped();
    await server.close();
    return {
      ok: true,
      json: {
        ok: true,
        stopped_by: signal,
        origin: server.origin,
        port: server.port,
        started_at: started.toISOString(),
        snapshots_built: server.snapshotsBuilt,
      },
      markdown: `LoopX status server on ${server.origin} stopped (${signal}).`,
    };
  },
};

function printBanner(ctx: CliContext, server: StatusService, token: string | null, fromEnv: boolean): void {
  const lines = [`LoopX status server for ${server.registryLabel}: listening on ${server.origin}`];
  if (token === null) {
    lines.push(`  warning: no token (--no-token): any process on this machine can read ${server.origin}${STATUS_PATH}`);
    lines.push(`  status: ${server.origin}${STATUS_PATH}`);
  } else if (fromEnv) {
    lines.push(`  status: ${server.origin}${STATUS_PATH}?token=<${STATUS_TOKEN_ENV}>`);
  } else {
    lines.push(`  status: ${server.origin}${STATUS_PATH}?token=${token}`);
    lines.push(`  token (shown once; set ${STATUS_TOKEN_ENV} to choose your own): ${token}`);
  }
  lines.push('  routes: / /healthz /status.json /goals/{id} /goals/{id}/projection /quota; stop with Ctrl+C');
  ctx.stderr(`${lines.join('\n')}\n`);
}

function untilStopped(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: string) => (): void => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(signal);
    };
    const onInt = stop('SIGINT');
    const onTerm = stop('SIGTERM');
    process.once('SIGINT', onInt);
    process.once('SIGTERM', onTerm);
  });
}

function parseHost(value: unknown): LoopbackBindHost {
  if (value === undefined) return '127.0.0.1';
  const text = String(value).trim().toLowerCase();
  if (text === '127.0.0.1' || text === 'localhost') return '127.0.0.1';
  if (text === '::1' || text === '[::1]') return '::1';
  throw new LoopxError(
    'usage',
    `--host ${JSON.stringify(value)}: the status server binds only a loopback address (127.0.0.1 or ::1); reach it from elsewhere through an SSH tunnel`,
  );
}
