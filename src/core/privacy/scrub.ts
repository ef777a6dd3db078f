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
/** What may stand right before an absolute path: start, whitespace, quotes, brackets, `=`, `:`, `,`, `;`, `>`. */
const PATH_BOUNDARY = String.raw`(?<=^|[\s"'\`(\[{=:,;>])`;
/** Not right after one of our own labels, so scrubbing twice changes nothing. */
const NOT_AFTER_LABEL = `(?<!<(?:${PATH_LABELS.join('|')})>)`;

const AUTH_SCHEMES = ['Bearer', 'Basic', 'Token', 'Digest', 'Bot', 'ApiKey', 'Negotiate'].map(anyCase).join('|');
const CREDENTIAL_ASSIGNMENT_KEYS = [
  'aws_secret_access_key',
  'aws_session_token',
  'client_secret',
  'access_token',
  'refresh_token',
  'auth_token',
  'id_token',
  'session_token',
  'private_key',
  'api[_-]?key',
  'token',
  'password',
  'passwd',
  'secret',
]
  .map(anyCase)
  .join('|');

/** Token characters (RFC 6750 token68 plus `_`). */
const TOKEN_CHARS = '[A-Za-z0-9._~+/=-]';

const SCRUB_PATTERN = new RegExp(
  [
    String.raw`(?<privateKey>-----BEGIN (?<keyType>[A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(?:-----END \k<keyType>PRIVATE KEY-----|$))`,
    String.raw`(?<jwt>\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)`,
    // A header value needs a scheme word, or a digit somewhere, so prose like
    // "Authorization: pending owner approval" stays.
    String.raw`(?<authKey>\b(?:${anyCase('proxy-')})?${anyCase('authorization')})(?<authSep>"?\s*[:=]\s*"?)(?<authValue>(?:${AUTH_SCHEMES})\s+[^\s"',;]+|(?=[^\s"',;]*\d)[^\s"',;]{8,})`,
    String.raw`(?<bearerWord>\b${anyCase('bearer')}\s+)(?<bearerValue>(?=${TOKEN_CHARS}*\d)${TOKEN_CHARS}{12,})`,
    String.raw`(?<githubToken>\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}))`,
    String.raw`(?<anthropicKey>\bsk-ant-[A-Za-z0-9_-]{20,})`,
    String.raw`(?<openaiKey>\bsk-[A-Za-z0-9_-]{20,})`,
    String.raw`(?<awsKeyId>\b(?:AKIA|ASIA)[A-Z0-9]{16}\b)`,
    String.raw`(?<assignKey>(?<![A-Za-z0-9_])(?:${CREDENTIAL_ASSIGNMENT_KEYS})(?![A-Za-z0-9_-]))(?<assignSep>"?\s*[:=]\s*"?)(?<assignValue>(?!\[redacted:)[^\s"'&,;#]+)`,
    // Separators may be doubled, as in JSON-escaped text (`C:\\\\Users\\\\me`).
    String.raw`(?<windowsPath>(?<![A-Za-z0-9_])[A-Za-z]:[\\/]+${SEGMENT}(?:[\\/]+${SEGMENT})*[\\/]?)`,
    String.raw`(?<uncPath>(?<![\\\w])\\\\${SEGMENT}(?:\\${SEGMENT})+)`,
    String.raw`${PATH_BOUNDARY}${NOT_AFTER_LABEL}(?<posixPath>(?:file:\/\/|~)?\/${SEGMENT}(?:\/${SEGMENT})*\/?)`,
  ].join('|'),
  'g',
);

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

type Groups = Record<string, string | undefined>;

function replaceMatch(match: string, groups: Groups, compiled: CompiledContext): string {
  if (groups['privateKey'] !== undefined) return '[redacted:private_key]';
  if (groups['jwt'] !== undefined) return '[redacted:jwt]';
  if (groups['authKey'] !== undefined) return `${groups['authKey']}${groups['authSep'] ?? ''}[redacted:authorization]`;
  if (groups['bearerWord'] !== undefined) return `${groups['bearerWord']}[redacted:bearer_token]`;
  if (groups['githubToken'] !== undefined) return '[redacted:github_token]';
  if (groups['anthropicKey'] !== undefined) return '[redacted:anthropic_key]';
  if (groups['openaiKey'] !== undefined) return '[redacted:openai_key]';
  if (groups['awsKeyId'] !== undefined) return '[redacted:aws_access_key_id]';
  if (groups['assignKey'] !== undefined) {
    return `${groups['assignKey']}${groups['assignSep'] ?? ''}[redacted:${credentialKind(groups['assignKey'])}]`;
  }
  if (groups['windowsPath'] !== undefined) return labelPath(groups['windowsPath'], 'windows', compiled);
  if (groups['uncPath'] !== undefined) return labelPath(groups['uncPath'], 'unc', compiled);
  if (groups['posixPath'] !== undefined) return labelPath(groups['posixPath'], 'posix', compiled);
  return match;
}

function scrubWith(text: string, compiled: CompiledContext): string {
  return text.replace(SCRUB_PATTERN, (match: string, ...rest: unknown[]) =>
    replaceMatch(match, rest[rest.length - 1] as Groups, compiled),
  );
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
        const isSecret =
          CREDENTIAL_KEYS.has(kind) && ((typeof child === 'string' && child !== '') || typeof child === 'number');
        copy[key] = isSecret ? `[redacted:${kind}]` : visit(child);
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
