/**
 * The agent-type catalog (docs/agents.md#agent-types): which agent hosts LoopX knows, their aliases, and the
 * strict resolution that rejects ambiguous or unknown names instead of guessing.
 */

export interface AgentTypeEntry {
  agent_type: string;
  display_name: string;
  /** How the host runs: inside VS Code, as a desktop app, a terminal CLI, or driven by a person. */
  host_kind: 'vscode' | 'desktop_app' | 'ide_plugin' | 'cli' | 'managed_service' | 'manual' | 'generic';
  aliases: readonly string[];
  description: string;
}

/**
 * The original's 17 types plus this product's own hosts, `vscode-lm` and `command`. Aliases are
 * resolution keys (see agentTypeKey): lowercase, `-` instead of `_` and spaces.
 */
export const AGENT_TYPE_CATALOG: readonly AgentTypeEntry[] = [
  {
    agent_type: 'vscode-lm',
    display_name: 'VS Code language model',
    host_kind: 'vscode',
    aliases: [
      'vscode',
      'vs-code',
      'copilot',
      'github-copilot',
      'vscode-language-model',
      'language-model',
      'vscode-lm-api',
    ],
    description: 'a VS Code language model (GitHub Copilot or another provider) driven by the LoopX extension',
  },
  {
    agent_type: 'command',
    display_name: 'Command-line agent process',
    host_kind: 'cli',
    aliases: ['process', 'script', 'subprocess', 'command-agent', 'exec'],
    description: 'any CLI agent that LoopX runs as a process with a configured command line',
  },
  {
    agent_type: 'ark-managed-agent',
    display_name: 'Ark managed agent',
    host_kind: 'managed_service',
    aliases: ['ark', 'ark-agent', 'ark-managed'],
    description: 'a managed agent service',
  },
  {
    agent_type: 'codex-app',
    display_name: 'Codex app',
    host_kind: 'desktop_app',
    aliases: ['codex-desktop', 'codex-desktop-app'],
    description: 'the Codex desktop app',
  },
  {
    agent_type: 'codex-app-ssh',
    display_name: 'Codex app over SSH',
    host_kind: 'desktop_app',
    aliases: ['codex-ssh', 'codex-app-remote', 'codex-remote'],
    description: 'the Codex app working on a remote host over SSH',
  },
  {
    agent_type: 'codex-ide-plugin',
    display_name: 'Codex IDE plugin',
    host_kind: 'ide_plugin',
    aliases: ['codex-ide', 'codex-ide-extension', 'codex-plugin', 'codex-extension'],
    description: 'the Codex extension inside an IDE',
  },
  {
    agent_type: 'codex-cli',
    display_name: 'Codex CLI',
    host_kind: 'cli',
    aliases: ['codex-tui', 'codex-cli-tui', 'codex-terminal'],
    description: 'the Codex terminal CLI',
  },
  {
    agent_type: 'claude-code',
    display_name: 'Claude Code',
    host_kind: 'cli',
    aliases: ['cc', 'claude', 'claudecode', 'claude-cli'],
    description: 'Claude Code in a terminal or IDE',
  },
  {
    agent_type: 'kunluncode',
    display_name: 'KunlunCode',
    host_kind: 'cli',
    aliases: ['kunlun', 'kunlun-code'],
    description: 'the KunlunCode CLI',
  },
  {
    agent_type: 'opencode',
    display_name: 'OpenCode',
    host_kind: 'cli',
    aliases: ['open-code'],
    description: 'the OpenCode CLI',
  },
  {
    agent_type: 'opencode2',
    display_name: 'OpenCode 2',
    host_kind: 'cli',
    aliases: ['opencode-2', 'opencode-v2'],
    description: 'the OpenCode 2 CLI',
  },
  {
    agent_type: 'traex-cli',
    display_name: 'TraeX CLI',
    host_kind: 'cli',
    aliases: ['traex', 'trae', 'trae-cli'],
    description: 'the TraeX CLI',
  },
  {
    agent_type: 'pi',
    display_name: 'Pi',
    host_kind: 'cli',
    aliases: ['pi-agent', 'pi-cli'],
    description: 'the Pi coding agent',
  },
  {
    agent_type: 'gemini-cli',
    display_name: 'Gemini CLI',
    host_kind: 'cli',
    aliases: ['gemini'],
    description: 'the Gemini CLI',
  },
  {
    agent_type: 'cursor-agent',
    display_name: 'Cursor agent',
    host_kind: 'cli',
    aliases: ['cursor', 'cursor-cli'],
    description: 'the Cursor agent CLI',
  },
  {
    agent_type: 'deepseek-harness',
    display_name: 'DeepSeek harness',
    host_kind: 'cli',
    aliases: ['deepseek'],
    description: 'a DeepSeek model behind an agent harness',
  },
  {
    agent_type: 'deepseek-harness-native',
    display_name: 'DeepSeek harness (native)',
    host_kind: 'cli',
    aliases: ['deepseek-native'],
    description: 'a DeepSeek model behind its native harness',
  },
  {
    agent_type: 'manual',
    display_name: 'Manual (a person at a shell)',
    host_kind: 'manual',
    aliases: ['shell', 'human', 'manual-agent'],
    description: 'a person running LoopX commands by hand',
  },
  {
    agent_type: 'other-agent',
    display_name: 'Other agent',
    host_kind: 'generic',
    aliases: ['other', 'custom', 'custom-agent', 'generic', 'generic-agent'],
    description: 'any other agent host that follows the LoopX commands',
  },
];

/**
 * Names that could mean several types. These stay exactly the original's: `cli` keeps its three
 * suggestions and does not gain `command`, so scripts written for the original resolve the same.
 */
const AMBIGUOUS_AGENT_TYPES: Readonly<Record<string, readonly string[]>> = {
  codex: ['codex-app', 'codex-app-ssh', 'codex-ide-plugin', 'codex-cli'],
  'openai-codex': ['codex-app', 'codex-app-ssh', 'codex-ide-plugin', 'codex-cli'],
  cli: ['codex-cli', 'manual', 'other-agent'],
};

/** This product's own hosts; every other catalog entry is one of the original's 17 types. */
const OWN_AGENT_TYPES: ReadonlySet<string> = new Set(['vscode-lm', 'command']);

/**
 * The order of the original's agent-type catalog (`canonical_agent_types`), which lists
 * `codex-cli` before `codex-ide-plugin`, unlike its supported list.
 */
const ORIGINAL_CATALOG_ORDER: readonly string[] = [
  'ark-managed-agent',
  'codex-app',
  'codex-app-ssh',
  'codex-cli',
  'codex-ide-plugin',
  'claude-code',
  'kunluncode',
  'opencode',
  'opencode2',
  'traex-cli',
  'pi',
  'gemini-cli',
  'cursor-agent',
  'deepseek-harness',
  'deepseek-harness-native',
  'manual',
  'other-agent',
];

const BY_KEY: ReadonlyMap<string, AgentTypeEntry> = (() => {
  const map = new Map<string, AgentTypeEntry>();
  for (const entry of AGENT_TYPE_CATALOG) {
    for (const key of [entry.agent_type, ...entry.aliases]) {
      if (map.has(key) || Object.hasOwn(AMBIGUOUS_AGENT_TYPES, key))
        throw new Error(`agent type key '${key}' is defined twice`);
      map.set(key, entry);
    }
  }
  return map;
})();

/**
 * The lookup key of an agent-type name: trim, lowercase, `_` and whitespace runs become `-`.
 * (The original kept spaces and listed `codex app` as its own alias; both spellings resolve here.)
 */
export function agentTypeKey(value: string): string {
  return value
    .trim()
    .toLowerCase()
    .replace(/[_\s]+/g, '-');
}

export type AgentTypeResolution =
  | { ok: true; agent_type: string; entry: AgentTypeEntry }
  | {
      ok: false;
      reason_kind: 'required' | 'ambiguous' | 'unsupported';
      agent_type: string;
      reason: string;
      suggestions: string[];
    };

/** Resolves a user-supplied agent-type name to one catalog entry, or explains why it cannot. */
export function resolveAgentType(value: unknown): AgentTypeResolution {
  const given = typeof value === 'string' ? value : '';
  const key = agentTypeKey(given);
  if (key === '') {
    return {
      ok: false,
      reason_kind: 'required',
      agent_type: given,
      reason: `agent_type is required; supported: ${canonicalAgentTypes().join(', ')}`,
      suggestions: originalAgentTypes(),
    };
  }
  const ambiguous = AMBIGUOUS_AGENT_TYPES[key];
  if (ambiguous) {
    return {
      ok: false,
      reason_kind: 'ambiguous',
      agent_type: given,
      reason: `agent_type '${given}' is ambiguous; choose one of: ${ambiguous.join(', ')}`,
      suggestions: [...ambiguous],
    };
  }
  const entry = BY_KEY.get(key);
  if (entry) return { ok: true, agent_type: entry.agent_type, entry };
  return {
    ok: false,
    reason_kind: 'unsupported',
    agent_type: given,
    reason: `unsupported agent_type '${given}'; supported: ${canonicalAgentTypes().join(', ')}`,
    suggestions: originalAgentTypes(),
  };
}

/**
 * The original's 17 types in its supported-list order (the `suggestions` of an unresolved type,
 * as the original lists them); this product's own hosts are named in the reason text instead.
 */
export function originalAgentTypes(): string[] {
  return AGENT_TYPE_CATALOG.filter((entry) => !OWN_AGENT_TYPES.has(entry.agent_type)).map((entry) => entry.agent_type);
}

export function canonicalAgentTypes(): string[] {
  return AGENT_TYPE_CATALOG.map((entry) => entry.agent_type);
}

/** The original's error payload for a type that does not resolve (the CLI exits 2 with it). */
export function agentTypeErrorPayload(resolution: Extract<AgentTypeResolution, { ok: false }>): {
  ok: false;
  schema_version: 'loopx_agent_type_error_v0';
  error_kind: 'ambiguous_or_unsupported_agent_type';
  agent_type: string;
  reason: string;
  suggestions: string[];
  agent_type_catalog: ReturnType<typeof agentTypeCatalogRows>;
} {
  return {
    ok: false,
    schema_version: 'loopx_agent_type_error_v0',
    error_kind: 'ambiguous_or_unsupported_agent_type',
    agent_type: resolution.agent_type,
    reason: resolution.reason,
    suggestions: resolution.suggestions,
    agent_type_catalog: agentTypeCatalogRows(),
  };
}

/**
 * The original's `canonical_agent_types` rows: its 17 types in its order (this product's own
 * `vscode-lm` and `command` are listed in `agent_types` only), each with the names it accepts.
 */
export function originalAgentTypeRows(): { agent_type: string; display_name: string; accepted_inputs: string[] }[] {
  const rank = (entry: AgentTypeEntry): number => ORIGINAL_CATALOG_ORDER.indexOf(entry.agent_type);
  const original = AGENT_TYPE_CATALOG.filter((entry) => !OWN_AGENT_TYPES.has(entry.agent_type));
  return [...original]
    .sort((a, b) => rank(a) - rank(b))
    .map((entry) => ({
      agent_type: entry.agent_type,
      display_name: entry.display_name,
      accepted_inputs: [entry.agent_type, ...entry.aliases],
    }));
}

/** The names that could mean several types, with the types to choose from (the original's `ambiguous_inputs`). */
export function ambiguousAgentTypeInputs(): { input: string; use_one_of: string[] }[] {
  return Object.entries(AMBIGUOUS_AGENT_TYPES).map(([input, choices]) => ({ input, use_one_of: [...choices] }));
}

export function agentTypeCatalogRows(): {
  agent_type: string;
  display_name: string;
  host_kind: string;
  aliases: string[];
}[] {
  return AGENT_TYPE_CATALOG.map((entry) => ({
    agent_type: entry.agent_type,
    display_name: entry.display_name,
    host_kind: entry.host_kind,
    aliases: [...entry.aliases],
  }));
}

/** Host surfaces that are not agent-type names themselves (the original's separate map). */
const HOST_SURFACES: Readonly<Record<string, string>> = {
  '': 'codex-app',
  'chat-box': 'codex-app',
  'codex-cli-tui': 'codex-cli',
  http: 'other-agent',
};

/**
 * Maps a thread's host surface to an agent type: empty and `chat-box` are the Codex app,
 * `codex-cli-tui` the Codex CLI, `http` another agent; other names resolve as agent types.
 * Returns null for a surface that resolves to nothing.
 */
export function normalizeHostSurface(value: unknown): string | null {
  const key = typeof value === 'string' ? agentTypeKey(value) : '';
  const mapped = HOST_SURFACES[key];
  if (mapped !== undefined) return mapped;
  const resolution = resolveAgentType(key);
  return resolution.ok ? resolution.agent_type : null;
}
