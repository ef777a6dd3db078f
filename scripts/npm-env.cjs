// The environment for a child `npm`/`npx` (or anything that may run one) started from inside an npm script.
// `npm run` exports its own identity to the script: npm_config_user_agent ("npm/… node/v20…"),
// npm_config_local_prefix, npm_lifecycle_*, npm_package_*, npm_execpath, INIT_CWD… A child npm reads the
// npm_config_* ones back as its own configuration, so a child npm running under Node 24 still reports the
// outer Node 20 to install scripts (code-server's postinstall then refuses to install), and scripts of the child
// see the outer package's name and lifecycle event. This drops all of them. The child npm reads the .npmrc files itself, so
// only settings given through the environment alone are lost; the few a user sets there on purpose to
// reach the registry (registry, proxies, CA) are kept. scripts/setup-vscode-test.sh applies the same rule.
// CommonJS so that both the .mjs scripts and the TypeScript (CommonJS) sources can import it.
'use strict';

/** npm_config_* names (lower case, after the prefix) kept for a child npm. */
// `cache`: npm's download cache as the outer npm resolved it (the user's setting, or ~/.npm), which the child
// would otherwise not see and replace with the default: a CI runner's or an empty cache given on purpose holds.
const KEPT_NPM_CONFIG = [
  'registry',
  'proxy',
  'http_proxy',
  'https_proxy',
  'noproxy',
  'cafile',
  'ca',
  'strict_ssl',
  'cache',
];

// NODE is the outer npm's node binary (npm sets it for scripts); the rest name the outer npm run.
const DROPPED_NAMES = new Set(['npm_execpath', 'npm_node_execpath', 'npm_command', 'INIT_CWD', 'NODE']);
const DROPPED_PREFIX = /^npm_(config|lifecycle|package)_/i;

/** Whether an inherited variable belongs to the outer npm and must not reach a child npm. */
function isOuterNpmVariable(name) {
  if (DROPPED_NAMES.has(name)) return true;
  const match = DROPPED_PREFIX.exec(name);
  if (!match) return false;
  const key = name.slice(match[0].length).toLowerCase().replace(/-/g, '_');
  return !(match[1].toLowerCase() === 'config' && KEPT_NPM_CONFIG.includes(key));
}

/** A copy of `env` (default: this process's) without the outer npm's variables, plus `extra`. */
function npmChildEnv(env = process.env, extra = {}) {
  const clean = {};
  for (const [name, value] of Object.entries(env)) if (!isOuterNpmVariable(name)) clean[name] = value;
  return { ...clean, ...extra };
}

module.exports = { KEPT_NPM_CONFIG, isOuterNpmVariable, npmChildEnv };
