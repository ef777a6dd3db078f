import { reduceAuthorityData } from './authority';

/**
 * The scrubber every outward-facing projection passes through (status server, webviews, logs,
 * exported summaries). It removes absolute paths and credentials from text, and authority data
 * from values, in one pass of one precompiled regular expression.
 *
 * Paths become labels:
 *   - under a project root  → `<project>/relative/path` (the root itself → `<project>`)
 *   - under the runtime root → `<runtime>/relative/path`
 *   - under the home folder  → `<home>/relative/path` (also `~/relative/path`)
 *   - any other absolute path → `<abs>/<basename>` (POSIX paths need two or more segments, so
 *     slash commands and routes such as `/loopx-commands` stay)
 * The most specific (longest) matching root wins. Credentials become `[redacted:<kind>]`.
 */

export interface ScrubContext {
  projectRoots: readonly string[];
  homeDir: string;
  runtimeRoot?: string;
}

const PATH_LABELS = ['project', 'runtime', 'home', 'abs'] as const;

/** Case-insensitive spelling of a literal word, for one regex that is otherwise case-sensitive. */
function anyCase(word: string): string {
  return word.replace(/[a-z]/gi, (letter) => `[${letter.toLowerCase()}${letter.toUpperCase()}]`);
}

/** One path segment: no separators, whitespace, quotes, brackets or list punctuation. */
const SEGMENT = String.raw`[^\s"'\`<>|,;:&()\[\]{}*?\/\\]+`;
/**
 * What may stand right before an absolute path: start, whitespace, quotes, brackets, `=`, `:`, `,`,
 * `;`, `>`, any non-ASCII character (`路径/home/…`), or Markdown emphasis (`**`, `*`) opened there.
 */
const PATH_OPENER = String.raw`(?:^|[\s"'\`(\[{=:,;>]|[^\x00-\x7F])`;
const PATH_BOUNDARY = String.raw`(?<=${PATH_OPENER}|${PATH_OPENER}\*{1,3})`;
/** Not right after one of our own labels, so scrubbing twice changes nothing. */
const NOT_AFTER_LABEL = `(?<!<(?:${PATH_LABELS.join('|')})>)`;

const AUTH_SCHEMES = ['Bearer', 'Basic', 'Token', 'Digest', 'Bot', 'ApiKey', 'Negotiate'].map(anyCase).join('|');

/**
 * Secret-like key names, `_` standing for `_`, `-` or nothing (`api_key`, `api-key`, `apikey`).
 * A key may carry prefixes (`DB_PASSWORD`, `PGPASSWORD`, `spring.datasource.password`,
 * `X-API-KEY`) but no suffix, so `password_hint`, `token_count` and `max_tokens` are not keys of
 * secrets. `auth` alone needs a separated prefix, so `OAuth` is a word, not a key.
 */
const SECRET_KEY_WORDS = [
  'aws_secret_access_key',
  'aws_session_token',
  'client_secret',
  'api_secret',
  'access_token',
  'refresh_token',
  'auth_token',
  'id_token',
  'session_token',
  'oauth_token',
  'private_key',
  'secret_key',
  'access_key',
  'signing_key',
  'encryption_key',
  'api_key',
  'passphrase',
  'password',
  'passwd',
  'pwd',
  'secret',
  'token',
  'credentials',
  'credential',
];
const SECRET_KEY_CORE = [
  ...SECRET_KEY_WORDS.map((word) => word.split('_').map(anyCase).join('[_-]?')),
  `(?<![A-Za-z0-9])${anyCase('auth')}`,
].join('|');
/**
 * Prefix segments of a key, each ending in `_`, `.` or `-`, then letters glued to the core; lazy,
 * so the shortest prefix (the longest core) wins.
 */
const KEY_PREFIX = '(?:[A-Za-z0-9]*[_.-])*?[A-Za-z0-9]*?';

/** Token characters (RFC 6750 token68 plus `_`). */
const TOKEN_CHARS = '[A-Za-z0-9._~+/=-]';
const PEM_LABEL = '[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?';

type Groups = Record<string, string | undefined>;

/**
 * One kind of private data: a regex source with named groups (names unique across the table;
 * the first one is set exactly when this pattern matched) and how a match is replaced.
 * `credential` says whether it is a secret (refused in durable state) or a path (only labelled).
 */
interface Detector {
  group: string;
  credential: boolean;
  source: string;
  replace: (groups: Groups, match: string, compiled: CompiledContext, after: string) => string;
}

const redactAs = (kind: string) => (): string => `[redacted:${kind}]`;

/** Words that stand for "no secret here" after a secret-like key (placeholders, env references, flags). */
const PLACEHOLDER_VALUE = new RegExp(
  [
    String.raw`\[redacted:[a-z0-9_]+\]`,
    // `\u2026` (…) is read by RegExp: the bundle stays ASCII (scripts/build.mjs).
    String.raw`\*+|x{3,}|\.{3}|\u2026`,
    String.raw`<[^<>]*>`,
    String.raw`\$\{?[A-Za-z_][A-Za-z0-9_]*\}?`,
    String.raw`\{\{[^{}]*\}\}`,
    String.raw`%[A-Za-z_][A-Za-z0-9_]*%`,
    'null|none|nil|undefined|true|false|empty|unset|required|optional|missing|redacted|hidden|n/a|tbd',
  ]
    .map((alternative) => `(?:${alternative})`)
    .join('|')
    .replace(/^/, '^(?:')
    .replace(/$/, ')$'),
  'i',
);

/** Whether `value`, written after the secret-like key `key` with separator `sep`, is not a secret. */
function isNonSecretValue(key: string, sep: string, value: string, rest: string): boolean {
  if (PLACEHOLDER_VALUE.test(value)) return true;
  const core = credentialKind(key);
  // Counts such as `max_token=4096`, and `PWD=/home/…` (the shell's working directory, a path).
  if (core.endsWith('token') && /^\d+$/.test(value)) return true;
  if (core === 'pwd' && /^[/~]/.test(value)) return true;
  // Prose such as "Secret: rotate monthly": a colon, then plain lower-case words.
  return /^[ \t]*:[ \t]*$/.test(sep) && /^[a-z]+$/.test(value) && /^[ \t]+[a-z]/.test(rest);
}

const DETECTORS: readonly Detector[] = [
  {
    // From BEGIN to its END line, or to the end of the text when the END is missing.
    group: 'privateKey',
    credential: true,
    source: String.raw`(?<privateKey>-----BEGIN (?<pemLabel>${PEM_LABEL})-----[\s\S]*?(?:-----END \k<pemLabel>-----|$))`,
    replace: redactAs('private_key'),
  },
  {
    group: 'jwt',
    credential: true,
    source: String.raw`(?<jwt>\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)`,
    replace: redactAs('jwt'),
  },
  {
    // A header value needs a scheme word, or a digit somewhere, so prose like
    // "Authorization: pending owner approval" stays.
    group: 'authKey',
    credential: true,
    source: String.raw`(?<authKey>\b(?:${anyCase('proxy-')})?${anyCase('authorization')})(?<authSep>"?\s*[:=]\s*"?)(?<authValue>(?:${AUTH_SCHEMES})\s+[^\s"',;]+|(?=[^\s"',;]*\d)[^\s"',;]{8,})`,
    replace: (g) => `${g['authKey'] ?? ''}${g['authSep'] ?? ''}[redacted:authorization]`,
  },
  // A token after `Bearer` has a digit or token punctuation, so "a bearer of bad news" stays.
  {
    group: 'bearerWord',
    credential: true,
    source: String.raw`(?<bearerWord>\b${anyCase('bearer')}\s+)(?<bearerValue>(?=${TOKEN_CHARS}*[\d._~+/=])${TOKEN_CHARS}{8,})`,
    replace: (g) => `${g['bearerWord'] ?? ''}[redacted:bearer_token]`,
  },
  {
    // `scheme://user:password@host`: the scheme, user and host stay.
    group: 'urlUser',
    credential: true,
    source: String.raw`(?<urlUser>\b[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s\/?#@:"'<>]*:)(?<urlPassword>(?!\[redacted:)[^\s\/?#@"'<>]+)(?=@)`,
    replace: (g) => `${g['urlUser'] ?? ''}[redacted:url_password]`,
  },
  {
    group: 'slackWebhook',
    credential: true,
    source: String.raw`(?<slackWebhook>\bhooks\.slack(?:-gov)?\.com\/(?:services|workflows|triggers)\/)(?<slackWebhookPath>(?!\[redacted:)[A-Za-z0-9_\/+-]{8,})`,
    replace: (g) => `${g['slackWebhook'] ?? ''}[redacted:slack_webhook]`,
  },
  {
    group: 'slackToken',
    credential: true,
    source: String.raw`(?<slackToken>\b(?:xox[abposr]|xapp)-(?=[A-Za-z0-9-]*\d)[A-Za-z0-9-]{10,})`,
    replace: redactAs('slack_token'),
  },
  {
    group: 'googleApiKey',
    credential: true,
    source: String.raw`(?<googleApiKey>\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-]))`,
    replace: redactAs('google_api_key'),
  },
  {
    group: 'googleOAuth',
    credential: true,
    source: String.raw`(?<googleOAuth>\b(?:ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[0-9A-Za-z_-]{20,}))`,
    replace: redactAs('google_oauth_token'),
  },
  {
    group: 'stripeKey',
    credential: true,
    source: String.raw`(?<stripeKey>\b(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z]{24,}))`,
    replace: redactAs('stripe_key'),
  },
  {
    group: 'githubToken',
    credential: true,
    source: String.raw`(?<githubToken>\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}))`,
    replace: redactAs('github_token'),
  },
  {
    group: 'npmToken',
    credential: true,
    source: String.raw`(?<npmToken>\bnpm_[A-Za-z0-9]{36}(?![A-Za-z0-9]))`,
    replace: redactAs('npm_token'),
  },
  {
    // The `sk-ant-` prefix alone is specific enough.
    group: 'anthropicKey',
    credential: true,
    source: String.raw`(?<anthropicKey>\bsk-ant-[A-Za-z0-9_-]{20,})`,
    replace: redactAs('anthropic_key'),
  },
  {
    // A project, service-account or admin key's prefix is specific enough, digits or not; a bare
    // `sk-` key must mix cases and digits, so prose such as "sk-learn-compatible-estimators" stays.
    group: 'openaiKey',
    credential: true,
    source: String.raw`(?<openaiKey>\bsk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Z])[A-Za-z0-9_-]{20,}))`,
    replace: redactAs('openai_key'),
  },
  {
    group: 'awsKeyId',
    credential: true,
    source: String.raw`(?<awsKeyId>\b(?:AKIA|ASIA)[A-Z0-9]{16}\b)`,
    replace: redactAs('aws_access_key_id'),
  },
  {
    // `key=value`, `key: value`, `"key": "value"`, quoted or not. A PEM value is left to the
    // private-key pattern, which redacts the whole block rather than its first word; a value
    // never starts with `=` or `>`, so `=>` and `:=` are not split on a second pass.
    group: 'assignKey',
    credential: true,
    source: String.raw`(?<assignKey>(?<![A-Za-z0-9_.-])${KEY_PREFIX}(?<assignCore>${SECRET_KEY_CORE})(?![A-Za-z0-9_-]))(?<assignSep>(?:\\?["'])?[ \t]*(?:=>|:=|[:=])[ \t]*)(?![=>]|\$?\{\{|\\?["'\`]?(?:\[redacted:|-----BEGIN))(?:(?<assignDq>\\?")(?<assignDqValue>(?:[^"\\\n]|\\[^"\n])+)\\?"|'(?<assignSqValue>[^'\n]+)'|\`(?<assignBqValue>[^\`\n]+)\`|(?<assignValue>[^\s"'\`\\&,;)\]}]+))`,
    replace: (g, match, _compiled, after) => {
      const key = g['assignCore'] ?? '';
      const quoted = g['assignDqValue'] ?? g['assignSqValue'] ?? g['assignBqValue'];
      const value = quoted ?? g['assignValue'] ?? '';
      const sep = quoted === undefined ? (g['assignSep'] ?? '') : '"';
      return isNonSecretValue(key, sep, value, after) ? match : replaceValue(match, value, credentialKind(key));
    },
  },
  {
    // A bare 40-character AWS secret key, recognised only near the word aws or secret (a git SHA
    // is lower-case hex, so it never qualifies).
    group: 'awsSecret',
    credential: true,
    source: String.raw`(?<![A-Za-z0-9/+])(?=[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=]))(?<=(?<![A-Za-z0-9])(?:${anyCase('aws')}|${anyCase('secret')})[^\n]{0,40})(?<awsSecret>(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[A-Z])[A-Za-z0-9/+]{40})`,
    replace: redactAs('aws_secret_access_key'),
  },
  // Paths: the label keeps the part below a root, so it is scanned again for credentials in it.
  {
    // Separators may be doubled, as in JSON-escaped text (`C:\\\\Users\\\\me`).
    group: 'windowsPath',
    credential: false,
    source: String.raw`(?<windowsPath>(?<![A-Za-z0-9_])[A-Za-z]:[\\/]+${SEGMENT}(?:[\\/]+${SEGMENT})*[\\/]?)`,
    replace: (g, match, compiled) =>
      rescanLabel(match, labelPath(g['windowsPath'] ?? '', 'windows', compiled), compiled),
  },
  {
    group: 'uncPath',
    credential: false,
    source: String.raw`(?<uncPath>(?<![\\\w])\\\\${SEGMENT}(?:\\${SEGMENT})+)`,
    replace: (g, match, compiled) => rescanLabel(match, labelPath(g['uncPath'] ?? '', 'unc', compiled), compiled),
  },
  {
    group: 'posixPath',
    credential: false,
    source: String.raw`${PATH_BOUNDARY}${NOT_AFTER_LABEL}(?<posixPath>(?:file:\/\/|~)?\/${SEGMENT}(?:\/${SEGMENT})*\/?)`,
    replace: (g, match, compiled) => rescanLabel(match, labelPath(g['posixPath'] ?? '', 'posix', compiled), compiled),
  },
];

/** A new path label scanned again, for a credential in the part of the path it keeps. */
function rescanLabel(match: string, label: string, compiled: CompiledContext): string {
  return label === match ? label : scrubWith(label, compiled);
}

/** `match` with its last occurrence of `value` replaced by `[redacted:<kind>]` (the key and quotes stay). */
function replaceValue(match: string, value: string, kind: string): string {
  const at = match.lastIndexOf(value);
  return `${match.slice(0, at)}[redacted:${kind}]${match.slice(at + value.length)}`;
}

const SCRUB_PATTERN = new RegExp(DETECTORS.map((detector) => detector.source).join('|'), 'g');

interface CompiledRoot {
  /** Normalized: forward slashes, no trailing slash; lower case for Windows-style roots. */
  prefix: string;
  label: string;
  caseInsensitive: boolean;
}

interface CompiledContext {
  roots: CompiledRoot[];
}

const WINDOWS_STYLE = /^(?:[A-Za-z]:\/|\/\/)/;

/** Forward slashes, repeated separators collapsed (a leading `//` of a UNC path kept), no trailing slash. */
function normalizeSlashes(value: string): string {
  const forward = value.replace(/\\/g, '/').replace(/(?<!^)\/{2,}/g, '/');
  return forward.length > 1 ? forward.replace(/\/+$/, '') : forward;
}

function compileRoot(root: string, label: string): CompiledRoot | null {
  const prefix = normalizeSlashes(root.trim());
  // An empty root, `/` or a bare drive would label every path; skip it.
  if (prefix === '' || prefix === '/' || /^[A-Za-z]:\/?$/.test(prefix)) return null;
  const caseInsensitive = WINDOWS_STYLE.test(prefix);
  return { prefix: caseInsensitive ? prefix.toLowerCase() : prefix, label, caseInsensitive };
}

const compiledContexts = new WeakMap<ScrubContext, CompiledContext>();

function compileContext(context: ScrubContext): CompiledContext {
  const cached = compiledContexts.get(context);
  if (cached) return cached;
  const roots = [
    ...context.projectRoots.map((root) => compileRoot(root, '<project>')),
    context.runtimeRoot === undefined ? null : compileRoot(context.runtimeRoot, '<runtime>'),
    compileRoot(context.homeDir, '<home>'),
  ].filter((root): root is CompiledRoot => root !== null);
  roots.sort((a, b) => b.prefix.length - a.prefix.length);
  const compiled = { roots };
  compiledContexts.set(context, compiled);
  return compiled;
}

function basename(normalized: string): string {
  const parts = normalized.split('/').filter((part) => part !== '');
  return parts[parts.length - 1] ?? '';
}

/** The label for one absolute path found in text (see the module comment). */
function labelPath(raw: string, kind: 'posix' | 'windows' | 'unc', compiled: CompiledContext): string {
  // A sentence may end right after a path: keep its full stop outside the label.
  const trailing = /\.+$/.exec(raw)?.[0] ?? '';
  const token = raw.slice(0, raw.length - trailing.length);
  if (token.startsWith('~/')) return `<home>/${token.slice(2)}${trailing}`;
  const withoutScheme = token.startsWith('file://') ? token.slice('file://'.length) : token;
  const normalized = normalizeSlashes(withoutScheme);
  const lower = normalized.toLowerCase();
  for (const root of compiled.roots) {
    const candidate = root.caseInsensitive ? lower : normalized;
    if (candidate === root.prefix) return `${root.label}${trailing}`;
    if (candidate.startsWith(`${root.prefix}/`))
      return `${root.label}/${normalized.slice(root.prefix.length + 1)}${trailing}`;
  }
  const segments = normalized.split('/').filter((part) => part !== '');
  if (kind === 'posix' && segments.length < 2) return raw;
  return `<abs>/${basename(normalized)}${trailing}`;
}

function credentialKind(key: string): string {
  return key.toLowerCase().replace(/-/g, '_');
}

interface Found {
  detector: Detector;
  replacement: string;
}

/** Runs the one combined pattern over `text`, calling `visit` for each match with its detector. */
function scan(text: string, compiled: CompiledContext, visit: (found: Found, match: string) => string): string {
  return text.replace(SCRUB_PATTERN, (match: string, ...rest: unknown[]) => {
    const groups = rest[rest.length - 1] as Groups;
    const whole = rest[rest.length - 2] as string;
    const offset = rest[rest.length - 3] as number;
    const detector = DETECTORS.find((candidate) => groups[candidate.group] !== undefined);
    if (detector === undefined) return match;
    const replacement = detector.replace(groups, match, compiled, whole.slice(offset + match.length));
    return visit({ detector, replacement }, match);
  });
}

function scrubWith(text: string, compiled: CompiledContext): string {
  return scan(text, compiled, (found) => found.replacement);
}

/** `text` with absolute paths labelled and credentials redacted. Idempotent. */
export function scrubText(text: string, context: ScrubContext): string {
  return scrubWith(text, compileContext(context));
}

/** Object keys whose values are credentials whatever they look like (compared lower-case, `-` as `_`). */
const CREDENTIAL_KEYS = new Set([
  'authorization',
  'proxy_authorization',
  'cookie',
  'set_cookie',
  'password',
  'passwd',
  'secret',
  'client_secret',
  'api_key',
  'apikey',
  'x_api_key',
  'access_token',
  'refresh_token',
  'auth_token',
  'id_token',
  'session_token',
  'token',
  'private_key',
  'aws_secret_access_key',
  'aws_session_token',
]);
/** Any other secret-like key (`DB_PASSWORD`, `stripe_secret_key`): its non-empty text values are redacted. */
const SECRET_LIKE_KEY = new RegExp(`^${KEY_PREFIX}(?:${SECRET_KEY_CORE})$`);

function isCredentialKey(key: string, kind: string, value: unknown): boolean {
  if (typeof value === 'number') return CREDENTIAL_KEYS.has(kind);
  if (typeof value !== 'string' || value === '') return false;
  return CREDENTIAL_KEYS.has(kind) || (SECRET_LIKE_KEY.test(key) && !PLACEHOLDER_VALUE.test(value));
}

/**
 * A scrubbed deep copy of a JSON-like value: strings go through `scrubText`, values under
 * credential keys become `[redacted:<key>]`, and authority data is reduced to counts
 * (`authority_sources` → `authority_source_count`, `authority_registry` → a summary).
 * Other keys are kept as they are.
 */
export function scrubValue<T>(value: T, context: ScrubContext): T {
  const compiled = compileContext(context);
  const seen = new WeakSet<object>();
  const visit = (node: unknown): unknown => {
    if (typeof node === 'string') return scrubWith(node, compiled);
    if (node === null || typeof node !== 'object') return node;
    if (seen.has(node)) return '[circular]';
    seen.add(node);
    let result: unknown;
    if (Array.isArray(node)) {
      result = node.map(visit);
    } else {
      const record = reduceAuthorityData(node as Record<string, unknown>);
      const copy: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(record)) {
        const kind = credentialKind(key);
        copy[key] = isCredentialKey(key, kind, child) ? `[redacted:${kind}]` : visit(child);
      }
      result = copy;
    }
    seen.delete(node);
    return result;
  };
  return visit(value) as T;
}

const EMPTY_CONTEXT: ScrubContext = { projectRoots: [], homeDir: '' };

/** True when `text` holds anything the scrubber would replace (an absolute path or a credential). */
export function containsPrivateData(text: string, context: ScrubContext = EMPTY_CONTEXT): boolean {
  return scrubText(text, context) !== text;
}

/**
 * `text` with credentials redacted and paths kept as they are (a credential inside a path is still
 * redacted); `onCredential` hears the kind of each one redacted.
 */
function redactCredentialsIn(text: string, onCredential: (kind: string) => void): string {
  return scan(text, compileContext(EMPTY_CONTEXT), (found, match) => {
    if (!found.detector.credential) return match.slice(0, 1) + redactCredentialsIn(match.slice(1), onCredential);
    if (found.replacement !== match) {
      for (const redaction of found.replacement.matchAll(/\[redacted:([a-z0-9_]+)\]/g))
        onCredential(redaction[1] ?? '');
    }
    return found.replacement;
  });
}

/**
 * The kinds of credentials in `text` (`password`, `github_token`, …; each once, in order of
 * appearance), ignoring paths. Used to refuse secrets before they are written into durable state.
 */
export function findCredentials(text: string): string[] {
  const kinds = new Set<string>();
  redactCredentialsIn(text, (kind) => kinds.add(kind));
  return [...kinds];
}

/**
 * A deep copy of a JSON-like value with credentials redacted (in text, and under credential keys)
 * but paths kept: for local displays such as `loopx status`, which show a user their own paths but
 * must not echo a secret someone else wrote into a state file.
 */
export function redactCredentials<T>(value: T): T {
  const seen = new WeakSet<object>();
  const visit = (node: unknown): unknown => {
    if (typeof node === 'string') return redactCredentialsIn(node, () => undefined);
    if (node === null || typeof node !== 'object') return node;
    if (seen.has(node)) return '[circular]';
    seen.add(node);
    let result: unknown;
    if (Array.isArray(node)) {
      result = node.map(visit);
    } else {
      const copy: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node as Record<string, unknown>)) {
        const kind = credentialKind(key);
        copy[key] = isCredentialKey(key, kind, child) ? `[redacted:${kind}]` : visit(child);
      }
      result = copy;
    }
    seen.delete(node);
    return result;
  };
  return visit(value) as T;
}

/**
 * Objects known to hold nothing `redactCredentials` would change. Cleanliness does not depend on
 * where an object sits (credential keys replace only text and number values), so a clean object
 * stays clean wherever it is reused. Only objects that are never mutated may be marked (status
 * items, kept and shared by the status caches, are built once and never changed).
 */
const credentialClean = new WeakSet<object>();
/**
 * Texts known to hold nothing to redact: the per-goal blocks status builds on every call copy the
 * texts of the (already clean) items, so they are not scanned again. Bounded: cleared when full.
 */
const cleanTexts = new Set<string>();
const CLEAN_TEXTS_MAX = 200_000;

function rememberCleanText(text: string): void {
  if (cleanTexts.size >= CLEAN_TEXTS_MAX) cleanTexts.clear();
  cleanTexts.add(text);
}

function redactTextShared(text: string): string {
  if (cleanTexts.has(text)) return text;
  const out = redactCredentialsIn(text, () => undefined);
  if (out === text) rememberCleanText(text);
  return out;
}

/** Whether `value` (an object) is known to hold nothing to redact. */
export function isCredentialClean(value: unknown): boolean {
  return typeof value === 'object' && value !== null && credentialClean.has(value);
}

/**
 * Marks `value` and every object and text inside it as holding nothing to redact, without looking: for a
 * value read back from a store that recorded it clean (the persistent status cache). `textDepth`: texts
 * deeper than this many levels are not remembered (a marked object is never walked, so its texts are
 * met again only in copies: the rest are scanned if a walk reaches them, the same answer). `objectDepth`:
 * objects deeper than this many levels are not marked (nor walked): for a caller that knows which parts a
 * redaction can reach other than through a marked parent.
 */
export function markCredentialClean(value: unknown, textDepth = Infinity, objectDepth = Infinity): void {
  if (typeof value === 'string') {
    if (textDepth >= 0) rememberCleanText(value);
    return;
  }
  if (typeof value !== 'object' || value === null || objectDepth < 0 || credentialClean.has(value)) return;
  credentialClean.add(value);
  // Nothing below is marked or remembered: not walked.
  if (textDepth < 1 && objectDepth < 1) return;
  if (Array.isArray(value)) for (const child of value) markCredentialClean(child, textDepth - 1, objectDepth - 1);
  else
    for (const child of Object.values(value as Record<string, unknown>))
      markCredentialClean(child, textDepth - 1, objectDepth - 1);
}

/**
 * Marks `copy` clean (the object itself, without looking) when `source` is known clean. The caller
 * promises what makes that true: `copy` was made from `source` alone, its keys are `source`'s or
 * constants of the code that are not credential keys, its values `source`'s values (or their parts)
 * or constants. A copy of a source not known clean is left unmarked, and walked as any other value.
 * Returns `copy`.
 */
export function cleanCopyOf<T extends object>(copy: T, source: object): T {
  if (credentialClean.has(source)) credentialClean.add(copy);
  return copy;
}

/**
 * `redactCredentials` with sharing: the result is the same JSON, but every object with nothing to
 * redact is returned itself (not a copy) and remembered as clean, and objects already known clean
 * are not looked at again. So a status item redacted once costs nothing on the next call.
 */
export function redactCredentialsShared<T>(value: T): T {
  const stack = new WeakSet<object>();
  const visit = (node: unknown): unknown => {
    if (typeof node === 'string') return redactTextShared(node);
    if (node === null || typeof node !== 'object') return node;
    if (credentialClean.has(node)) return node;
    if (stack.has(node)) return '[circular]';
    stack.add(node);
    let result: unknown;
    if (Array.isArray(node)) {
      // A copy is made only from the first element that changed.
      let copy: unknown[] | undefined;
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        const out = visit(child);
        if (copy === undefined && out !== child) copy = node.slice(0, i);
        copy?.push(out);
      }
      result = copy ?? node;
    } else {
      const record = node as Record<string, unknown>;
      const keys = Object.keys(record);
      let copy: Record<string, unknown> | undefined;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        const child = record[key];
        const out = sharedKeyRedacts(key, child) ? `[redacted:${credentialKind(key)}]` : visit(child);
        if (copy === undefined && out !== child) {
          copy = {};
          for (let j = 0; j < i; j++) copy[keys[j] as string] = record[keys[j] as string];
        }
        if (copy !== undefined) copy[key] = out;
      }
      // Only a plain object may stand for its copy (a Date or class instance serializes otherwise).
      const proto: unknown = Object.getPrototypeOf(node);
      if (copy === undefined && proto !== Object.prototype && proto !== null) {
        copy = {};
        for (const key of keys) copy[key] = record[key];
      }
      result = copy ?? node;
    }
    stack.delete(node);
    if (result === node) credentialClean.add(node);
    return result;
  };
  return visit(value) as T;
}

/** Per key: whether it is a credential key for numbers (`kind` in CREDENTIAL_KEYS), and whether it is secret-like. */
const keyClasses = new Map<string, { credential: boolean; secretLike: boolean }>();
const KEY_CLASSES_MAX = 10_000;

/** `isCredentialKey(key, credentialKind(key), value)`, with the key's classification remembered. */
function sharedKeyRedacts(key: string, value: unknown): boolean {
  if (typeof value !== 'number' && (typeof value !== 'string' || value === '')) return false;
  let known = keyClasses.get(key);
  if (known === undefined) {
    if (keyClasses.size >= KEY_CLASSES_MAX) keyClasses.clear();
    known = { credential: CREDENTIAL_KEYS.has(credentialKind(key)), secretLike: SECRET_LIKE_KEY.test(key) };
    keyClasses.set(key, known);
  }
  if (typeof value === 'number') return known.credential;
  return known.credential || (known.secretLike && !PLACEHOLDER_VALUE.test(value));
}
