import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The environment an agent CLI gets from LoopX's own (docs/executors.md#what-every-agent-process-gets):
 * PATH, HOME, LANG, then per preset the provider families its CLI reads (an entry ending in `*` is
 * a prefix), the proxy and certificate settings, the telemetry opt-outs, and the executor's
 * `env_allowlist`. LoopX's own variables (`LOOPX_*`: the status server token, the registry path…)
 * never pass, whatever a list says; LoopX sets the `LOOPX_*` an agent needs itself.
 */

/** Proxies and certificates: a gateway or corporate proxy must reach the agent as it reaches LoopX. */
const NETWORK_ENV: readonly string[] = [
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
];

/** The user's telemetry and update opt-outs, which an agent CLI must honour too. */
const TELEMETRY_ENV: readonly string[] = [
  'DO_NOT_TRACK',
  'DISABLE_TELEMETRY',
  'DISABLE_ERROR_REPORTING',
  'DISABLE_AUTOUPDATER',
  'DISABLE_BUG_COMMAND',
  'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
  'CLAUDE_CODE_ENABLE_TELEMETRY',
  'OTEL_*',
  'OPENCODE_DISABLE_*',
];

/** Anthropic's API directly, through a gateway (`ANTHROPIC_BASE_URL`), on Bedrock or on Vertex. */
const CLAUDE_PROVIDER_ENV: readonly string[] = [
  'ANTHROPIC_*',
  'CLAUDE_CONFIG_DIR',
  'CLAUDE_CODE_USE_BEDROCK',
  'CLAUDE_CODE_SKIP_BEDROCK_AUTH',
  'AWS_*',
  'CLAUDE_CODE_USE_VERTEX',
  'CLAUDE_CODE_SKIP_VERTEX_AUTH',
  'CLOUD_ML_REGION',
  'VERTEX_REGION_*',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'GOOGLE_CLOUD_PROJECT',
  'API_TIMEOUT_MS',
  'MAX_THINKING_TOKENS',
];

/** OpenAI, Azure OpenAI and the providers a Codex config names (`env_key`, read separately). */
const CODEX_PROVIDER_ENV: readonly string[] = ['OPENAI_*', 'CODEX_*', 'AZURE_OPENAI_*'];

/** opencode talks to many providers; the usual families of each, and its own settings. */
const OPENCODE_PROVIDER_ENV: readonly string[] = [
  'OPENCODE_*',
  'ANTHROPIC_*',
  'OPENAI_*',
  'AZURE_OPENAI_*',
  'AWS_*',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'GOOGLE_CLOUD_PROJECT',
  'GOOGLE_GENERATIVE_AI_API_KEY',
  'GEMINI_API_KEY',
  'OPENROUTER_API_KEY',
  'GROQ_API_KEY',
  'MISTRAL_API_KEY',
  'XAI_API_KEY',
  'DEEPSEEK_API_KEY',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
];

/** Per preset: the names and prefixes (`NAME_*`) passed by default. One table, documented in docs/executors.md. */
export const PROVIDER_ENV: Readonly<Record<'claude-code' | 'codex' | 'opencode', readonly string[]>> = {
  'claude-code': [...CLAUDE_PROVIDER_ENV, ...NETWORK_ENV, ...TELEMETRY_ENV],
  codex: [...CODEX_PROVIDER_ENV, ...NETWORK_ENV, ...TELEMETRY_ENV],
  opencode: [...OPENCODE_PROVIDER_ENV, ...NETWORK_ENV, ...TELEMETRY_ENV],
};

/** Whether `name` is one of the names or prefixes (`NAME_*`) of `patterns`. */
export function envNameMatches(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name));
}

/** At most this much of a Codex config is read, for its `env_key` names. */
const CODEX_CONFIG_BYTES = 256 * 1024;

/**
 * The variable names a Codex config's model providers read their key from
 * (`[model_providers.x] env_key = "MY_PROVIDER_KEY"`), so a provider configured there works under
 * LoopX too. An unreadable config gives none (Codex itself reports what it misses).
 */
export function codexConfigEnvKeys(env: NodeJS.ProcessEnv): string[] {
  const home = env['CODEX_HOME'] ?? path.join(env['HOME'] ?? os.homedir(), '.codex');
  let text: string;
  try {
    const file = path.join(home, 'config.toml');
    if (fs.statSync(file).size > CODEX_CONFIG_BYTES) return [];
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const names = new Set<string>();
  for (const match of text.matchAll(/^\s*env_key\s*=\s*["']([A-Za-z_][A-Za-z0-9_]*)["']/gm)) {
    if (match[1] !== undefined) names.add(match[1]);
  }
  return [...names];
}

/** Text an agent CLI prints when it found no credentials (Claude Code, Codex, opencode, provider APIs). */
const AUTH_FAILURE = new RegExp(
  [
    'not logged in',
    'please run /login',
    'invalid api key',
    'invalid x-api-key',
    'authentication[_ ]error',
    'missing environment variable',
    'api key (?:is )?(?:missing|not set|required)',
    'no api key',
    'missing (?:an? )?api key',
    'unauthorized',
    '\\b401\\b',
    'could not load credentials',
    'could not resolve authentication',
  ].join('|'),
  'i',
);

/** Whether an agent's output reads as an authentication failure. */
export function looksLikeAuthFailure(text: string): boolean {
  return AUTH_FAILURE.test(text);
}

/** The sentence added to an authentication failure: which variables the agent got, and how to add one. */
export function authFailureHint(kind: string, patterns: readonly string[], passed: readonly string[]): string {
  const shown = passed.length === 0 ? 'none of them was set' : `set and passed: ${passed.join(', ')}`;
  return `it looks like an authentication failure: LoopX passes the ${kind} agent only PATH, HOME, LANG and its provider variables (${patterns.join(', ')}; ${shown}); add any other variable your provider needs to executor.env_allowlist in the agent profile (docs/executors.md#what-every-agent-process-gets)`;
}
