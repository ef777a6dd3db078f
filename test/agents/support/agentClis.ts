/**
 * The real agent CLIs the conformance tier drives, at pinned versions, installed on first use into a
 * cache folder the way the real-VS-Code tiers install code-server into `.vscode-test`: `.agent-clis/`
 * in the repository (gitignored), or LOOPX_AGENT_CLI_CACHE. A `.complete-<versions>` marker says the
 * install finished; another set of versions installs again over it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { npmChildEnv } from '../../../scripts/npm-env.cjs';

export const AGENT_CLI_VERSIONS = {
  '@anthropic-ai/claude-code': '2.1.197',
  '@openai/codex': '0.171.0',
  'opencode-ai': '1.18.33',
} as const;

export interface AgentClis {
  cacheDir: string;
  claude: string;
  codex: string;
  opencode: string;
  /** Seconds the install took, or 0 when the cache was complete already. */
  installSeconds: number;
}

const REPO_ROOT = resolve(__dirname, '..', '..', '..');

export function agentCliCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env['LOOPX_AGENT_CLI_CACHE'] || join(REPO_ROOT, '.agent-clis'));
}

function marker(): string {
  return `.complete-${Object.entries(AGENT_CLI_VERSIONS)
    .map(([name, version]) => `${name.replace(/^@/, '').replace(/\//g, '+')}@${version}`)
    .join('_')}`;
}

function bins(cacheDir: string, installSeconds: number): AgentClis {
  const bin = join(cacheDir, 'node_modules', '.bin');
  return {
    cacheDir,
    claude: join(bin, 'claude'),
    codex: join(bin, 'codex'),
    opencode: join(bin, 'opencode'),
    installSeconds,
  };
}

/** Installs the pinned CLIs into the cache unless its marker says they are there. Throws with npm's output. */
export function ensureAgentClis(env: NodeJS.ProcessEnv = process.env): AgentClis {
  const cacheDir = agentCliCacheDir(env);
  const done = join(cacheDir, marker());
  if (existsSync(done)) return bins(cacheDir, 0);
  mkdirSync(cacheDir, { recursive: true });
  for (const entry of readdirSync(cacheDir)) if (entry.startsWith('.complete-')) rmSync(join(cacheDir, entry));
  // npm 11 skips dependencies' install scripts unless allowScripts names them; Claude Code and opencode
  // fetch or link their native binaries in theirs (without it, their bin is there but cannot start).
  const allowScripts = Object.fromEntries(Object.keys(AGENT_CLI_VERSIONS).map((name) => [name, true]));
  writeFileSync(
    join(cacheDir, 'package.json'),
    `${JSON.stringify({ name: 'loopx-agent-clis', private: true, allowScripts })}\n`,
  );
  const started = Date.now();
  const specs = Object.entries(AGENT_CLI_VERSIONS).map(([name, version]) => `${name}@${version}`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(
    npm,
    ['i', '--prefix', cacheDir, '--no-audit', '--no-fund', '--save-exact', '--loglevel', 'error', ...specs],
    { env: npmChildEnv(env), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (result.status !== 0) {
    throw new Error(
      `installing the agent CLIs into ${cacheDir} failed (npm exit ${result.status}):\n${result.stderr}${result.stdout}`,
    );
  }
  const installed = bins(cacheDir, (Date.now() - started) / 1000);
  for (const bin of [installed.claude, installed.codex, installed.opencode]) {
    if (!existsSync(bin)) throw new Error(`npm installed the agent CLIs but ${bin} is missing`);
    // Started once, with no network (agent CLIs never run outside a loopback-only namespace); where no
    // namespace can be made the tier skips anyway.
    if (process.getuid?.() !== 0) continue;
    const version = spawnSync('unshare', ['-n', bin, '--version'], { encoding: 'utf8', timeout: 60_000 });
    if (version.status !== 0)
      throw new Error(
        `npm installed ${bin} but it does not start (${version.error?.message ?? `exit ${version.status}`}): ${version.stderr}`,
      );
  }
  writeFileSync(done, `${new Date().toISOString()}\n`);
  return installed;
}
