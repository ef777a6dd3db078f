import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { readAgentExecutorConfig, type ExecutorConfig } from '../executors/config';
import { envNameMatches, PROVIDER_ENV } from '../executors/environment';
import { LOCK_FILE_SUFFIX, lockFileIsStale } from '../fs/fileLock';
import { readFileSafe, readFileSafeSync } from '../fs/safeRead';
import { registeredAgentsForGoal } from '../registry/agentIds';
import { parseRegistryText, rawRegistryGoalsById } from '../registry/read';
import { registryProjectRoot, resolveGoalStatePath, resolveRuntimeRoot } from '../registry/locate';
import { originalFootprintIn } from '../quota/reservations';
import { captureDeliveryWorkspace } from '../snapshots/deliveryWorkspace';
import { snapshotProjectRoot } from '../snapshots/gitSnapshot';
import { goalRuntimeDir } from '../runtime/layout';
import { parseStateDocument } from '../state/document';
import { versionLine, type CommandProbe } from './probe';

/**
 * `loopx doctor`: what stands between this machine and a first good turn, each finding with its fix.
 * Read-only: it reads the files, asks each agent CLI for `--version` and `--help` (never a turn), and
 * looks at environment variable NAMES (a value is never read into a finding).
 */

export type FindingLevel = 'ok' | 'warn' | 'error';

export interface DoctorFinding {
  /** Stable id (`node_version`, `agent.<goal>.<agent>.binary`, …). */
  id: string;
  level: FindingLevel;
  message: string;
  /** What to do about it; null when there is nothing to do. */
  fix: string | null;
  /** The original's check fields: `ok`, whether the check gates `ok` (`required`), and `detail` (the message). */
  ok: boolean;
  required: boolean;
  detail: string;
}

export function finding(
  id: string,
  level: FindingLevel,
  message: string,
  fix: string | null = null,
  required = level === 'error',
): DoctorFinding {
  return { id, level, message, fix, ok: level === 'ok', required, detail: message };
}

export const MIN_NODE_VERSION = '20.19.0';

function versionAtLeast(version: string, minimum: string): boolean {
  const parts = (v: string) =>
    v
      .replace(/^v/, '')
      .split('.')
      .map((n) => Number.parseInt(n, 10) || 0);
  const [a, b] = [parts(version), parts(minimum)];
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

export function nodeFinding(version: string): DoctorFinding {
  return versionAtLeast(version, MIN_NODE_VERSION)
    ? finding('node_version', 'ok', `Node ${version}`)
    : finding(
        'node_version',
        'error',
        `Node ${version} is older than ${MIN_NODE_VERSION}, which LoopX needs`,
        `install Node ${MIN_NODE_VERSION} or newer`,
      );
}

/** How each preset's CLI is asked for its version and its headless flags, and which variables configure its provider. */
interface PresetProbe {
  command: string;
  versionArgs: string[];
  helpArgs: string[];
  /** Flags the turn passes; each must appear in the help output. */
  flags: string[];
  /** Provider variables whose presence is reported (names only). */
  providerVariables: string[];
  /** Any of these set means the CLI has credentials from the environment. */
  authVariables: string[];
  /** A login file under HOME (or the config folder a variable names) also counts as credentials. */
  loginFiles: (env: NodeJS.ProcessEnv, homeDir: string) => string[];
}

const PRESET_PROBES: Partial<Record<ExecutorConfig['preset'] | 'opencode', PresetProbe>> = {
  'claude-code': {
    command: 'claude',
    versionArgs: ['--version'],
    helpArgs: ['--help'],
    flags: ['--print', '--output-format'],
    providerVariables: [
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_AUTH_TOKEN',
      'ANTHROPIC_BASE_URL',
      'ANTHROPIC_MODEL',
      'CLAUDE_CODE_USE_BEDROCK',
      'CLAUDE_CODE_USE_VERTEX',
      'AWS_PROFILE',
      'AWS_REGION',
      'CLOUD_ML_REGION',
      'ANTHROPIC_VERTEX_PROJECT_ID',
      'CLAUDE_CONFIG_DIR',
      'HTTPS_PROXY',
    ],
    authVariables: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CODE_USE_VERTEX'],
    loginFiles: (env, home) => [
      path.join(env['CLAUDE_CONFIG_DIR'] ?? path.join(home, '.claude'), '.credentials.json'),
      path.join(home, '.claude.json'),
    ],
  },
  codex: {
    command: 'codex',
    versionArgs: ['--version'],
    helpArgs: ['exec', '--help'],
    flags: ['--json'],
    providerVariables: ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'CODEX_HOME', 'HTTPS_PROXY'],
    authVariables: ['OPENAI_API_KEY'],
    loginFiles: (env, home) => [path.join(env['CODEX_HOME'] ?? path.join(home, '.codex'), 'auth.json')],
  },
  opencode: {
    command: 'opencode',
    versionArgs: ['--version'],
    helpArgs: ['run', '--help'],
    flags: ['--format'],
    providerVariables: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY', 'OPENCODE_CONFIG', 'HTTPS_PROXY'],
    authVariables: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY'],
    loginFiles: (env, home) => [
      path.join(env['XDG_DATA_HOME'] ?? path.join(home, '.local', 'share'), 'opencode', 'auth.json'),
    ],
  },
};

/** The agent CLIs the palette offers, with how to ask each for its version. */
export const AGENT_CLIS: readonly { preset: 'claude-code' | 'codex' | 'opencode'; command: string }[] = [
  { preset: 'claude-code', command: 'claude' },
  { preset: 'codex', command: 'codex' },
  { preset: 'opencode', command: 'opencode' },
];

/** Which of the agent CLIs are on PATH, with their `--version` line. */
export async function detectAgentClis(
  probe: CommandProbe,
): Promise<{ preset: string; command: string; path: string | null; version: string | null }[]> {
  return Promise.all(
    AGENT_CLIS.map(async ({ preset, command }) => {
      const found = probe.which(command);
      const version = found === null ? null : versionLine(await probe.output([found, '--version']));
      return { preset, command, path: found, version };
    }),
  );
}

export interface DoctorInput {
  registryPath: string;
  registryExists: boolean;
  env: NodeJS.ProcessEnv;
  homeDir: string;
  runtimeRootOverride?: string | undefined;
  nodeVersion: string;
  probe: CommandProbe;
  /** The port `serve-status` would listen on; null to skip the check. */
  statusPort: number | null;
}

export interface DoctorFacts {
  findings: DoctorFinding[];
  runtimeRoot: string | null;
  goals: string[];
}

/** The nearest folder of `target` that exists (itself included), for "could it be created and written?". */
function nearestExisting(target: string): string {
  let current = path.resolve(target);
  while (!fs.existsSync(current)) {
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  return current;
}

function writable(folder: string): boolean {
  try {
    fs.accessSync(folder, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

export function runtimeRootFinding(runtimeRoot: string): DoctorFinding {
  const existing = nearestExisting(runtimeRoot);
  if (!fs.statSync(existing).isDirectory())
    return finding(
      'runtime_root_writable',
      'error',
      `runtime root ${runtimeRoot} cannot be created: ${existing} is a file`,
      'set common_runtime_root in the registry (or --runtime-root) to a folder',
    );
  if (writable(existing))
    return finding(
      'runtime_root_writable',
      'ok',
      existing === path.resolve(runtimeRoot)
        ? `runtime root ${runtimeRoot} is writable`
        : `runtime root ${runtimeRoot} can be created (${existing} is writable)`,
    );
  return finding(
    'runtime_root_writable',
    'error',
    `runtime root ${runtimeRoot} is not writable (${existing})`,
    'give your user write access to it, or set common_runtime_root in the registry (or --runtime-root) to a writable folder',
  );
}

/** Lock files (`*.loopx-lock`) whose holder process is gone, under the given folders (a few levels deep). */
export function staleLocks(folders: readonly string[], depth = 4): string[] {
  const found = new Set<string>();
  const walk = (folder: string, left: number): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(folder, entry.name);
      if (entry.isFile() && entry.name.endsWith(LOCK_FILE_SUFFIX)) {
        if (lockFileIsStale(full) === true) found.add(full);
      } else if (entry.isDirectory() && left > 0 && !entry.name.startsWith('.git') && entry.name !== 'node_modules')
        walk(full, left - 1);
    }
  };
  for (const folder of new Set(folders)) walk(folder, depth);
  return [...found].sort();
}

export function staleLockFinding(locks: readonly string[]): DoctorFinding {
  if (locks.length === 0) return finding('stale_locks', 'ok', 'no stale lock files');
  return finding(
    'stale_locks',
    'warn',
    `${locks.length} lock file(s) left by processes that are gone: ${locks.join(', ')}`,
    'nothing is needed: the next write reclaims them; delete them if no LoopX process runs',
  );
}

/** Whether the port is free on 127.0.0.1 (listened on for a moment and closed). */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export async function statusPortFinding(port: number): Promise<DoctorFinding> {
  if (await portIsFree(port)) return finding('status_server_port', 'ok', `status server port ${port} is free`);
  return finding(
    'status_server_port',
    'warn',
    `port ${port} on 127.0.0.1 is in use (another status server or program)`,
    `run loopx serve-status --port <another port> (the editor picks a free port by itself; setting loopx.statusServer.port)`,
  );
}

function presetProbe(preset: string): PresetProbe | undefined {
  return PRESET_PROBES[preset as keyof typeof PRESET_PROBES];
}

/** The sandbox a Codex executor asks for (`--sandbox X`, `-s X`, `--sandbox=X`), or null for Codex's default. */
export function codexSandbox(args: readonly string[]): string | null {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if ((arg === '--sandbox' || arg === '-s') && args[i + 1] !== undefined) return args[i + 1] ?? null;
    if (arg.startsWith('--sandbox=')) return arg.slice('--sandbox='.length);
    if (arg === '--full-auto') return 'workspace-write';
    if (arg === '--dangerously-bypass-approvals-and-sandbox') return 'danger-full-access';
  }
  return null;
}

interface AgentContext {
  goalId: string;
  agentId: string;
  projectRoot: string;
  statePath: string | null;
}

/** Findings for one agent's executor: its CLI, version, flags, provider variables, and Codex's sandbox. */
export async function agentFindings(
  agent: AgentContext,
  config: ExecutorConfig,
  env: NodeJS.ProcessEnv,
  homeDir: string,
  probe: CommandProbe,
): Promise<DoctorFinding[]> {
  const prefix = `agent.${agent.goalId}.${agent.agentId}`;
  const who = `${agent.agentId} (goal ${agent.goalId}, ${config.preset})`;
  const findings: DoctorFinding[] = [];
  const fixCommand = `loopx agent configure --goal-id ${agent.goalId} --agent-id ${agent.agentId} --preset ${config.preset} --command <path> --execute`;
  if (config.preset === 'demo' || config.preset === 'vscode-lm') {
    findings.push(
      finding(
        `${prefix}.executor`,
        'ok',
        config.preset === 'demo'
          ? `${who}: the built-in demo agent (nothing to install)`
          : `${who}: runs on one of the editor's language models (inside VS Code only)`,
      ),
    );
    return findings;
  }
  const known = presetProbe(config.preset);
  const argv = config.command ?? (known ? [known.command] : []);
  const program = argv[0];
  const found = program === undefined ? null : probe.which(program);
  if (found === null) {
    findings.push(
      finding(
        `${prefix}.binary`,
        'error',
        `${who}: ${program ?? '(no command)'} was not found${program?.includes('/') ? '' : ' on PATH'}`,
        known
          ? `install it (npm i -g ${config.preset === 'claude-code' ? '@anthropic-ai/claude-code' : config.preset === 'codex' ? '@openai/codex' : 'opencode-ai'}) or give its path: ${fixCommand}`
          : `give the agent's program with its path: ${fixCommand}`,
      ),
    );
    return findings;
  }
  if (known === undefined) {
    findings.push(finding(`${prefix}.binary`, 'ok', `${who}: ${found}`));
    return findings;
  }
  const version = versionLine(await probe.output([found, ...argv.slice(1), ...known.versionArgs]));
  findings.push(
    version === null
      ? finding(
          `${prefix}.binary`,
          'warn',
          `${who}: ${found} does not answer ${known.versionArgs.join(' ')}`,
          `run ${program} ${known.versionArgs.join(' ')} yourself; reinstall it if it fails`,
        )
      : finding(`${prefix}.binary`, 'ok', `${who}: ${found}, ${version}`),
  );
  const help = await probe.output([found, ...argv.slice(1), ...known.helpArgs]);
  const missing = help === null ? known.flags : known.flags.filter((flag) => !help.includes(flag));
  findings.push(
    missing.length === 0
      ? finding(`${prefix}.flags`, 'ok', `${who}: supports ${known.flags.join(', ')}`)
      : finding(
          `${prefix}.flags`,
          'error',
          `${who}: ${program} ${known.helpArgs.join(' ')} does not list ${missing.join(', ')}, which LoopX runs it with`,
          `update ${program} to a current version`,
        ),
  );
  // The variables the executor passes to this CLI (its provider families, proxies, telemetry opt-outs) that are set: names only.
  const passed = PROVIDER_ENV[config.preset as keyof typeof PROVIDER_ENV] ?? known.providerVariables;
  const present = Object.keys(env)
    .filter((name) => (env[name] ?? '') !== '' && envNameMatches(name, passed))
    .sort();
  const loggedIn = known.loginFiles(env, homeDir).some((file) => fs.existsSync(file));
  const hasAuth = known.authVariables.some((name) => (env[name] ?? '') !== '') || loggedIn;
  const presentText = present.length === 0 ? 'no provider variables set' : `passes ${present.join(', ')}`;
  findings.push(
    hasAuth
      ? finding(`${prefix}.provider`, 'ok', `${who}: ${presentText}${loggedIn ? '; a login was found' : ''}`)
      : finding(
          `${prefix}.provider`,
          'warn',
          `${who}: ${presentText}, and no login was found`,
          `log in with ${program} (once, interactively) or set one of ${known.authVariables.join(', ')} where LoopX runs`,
        ),
  );
  const allowMissing = (config.env_allowlist ?? []).filter((name) => env[name] === undefined);
  if (allowMissing.length > 0)
    findings.push(
      finding(
        `${prefix}.env_allowlist`,
        'warn',
        `${who}: env_allowlist names variables that are not set: ${allowMissing.join(', ')}`,
        'set them where LoopX runs (the terminal, or the environment VS Code was started from), or remove them from env_allowlist',
      ),
    );
  if (config.preset === 'codex') findings.push(...codexSandboxFindings(prefix, who, config, agent));
  return findings;
}

/** Whether `folder` or a folder above it is a git repository: `.git/HEAD`, or a worktree's `.git` file. */
function insideGitRepository(folder: string): boolean {
  for (let dir = path.resolve(folder); ; dir = path.dirname(dir)) {
    const dotGit = path.join(dir, '.git');
    // A stray empty `.git` folder is not a repository (git and Codex both look past it).
    if (fs.existsSync(path.join(dotGit, 'HEAD'))) return true;
    try {
      if (fs.statSync(dotGit).isFile() && /^gitdir: /.test(readFileSafeSync(dotGit))) return true;
    } catch {
      // no .git here
    }
    if (path.dirname(dir) === dir) return false;
  }
}

export function codexSandboxFindings(
  prefix: string,
  who: string,
  config: ExecutorConfig,
  agent: Pick<AgentContext, 'projectRoot' | 'statePath' | 'goalId' | 'agentId'>,
): DoctorFinding[] {
  const findings: DoctorFinding[] = [];
  const sandbox = codexSandbox(config.args ?? []);
  const setSandbox = `loopx agent configure --goal-id ${agent.goalId} --agent-id ${agent.agentId} --preset codex --permission-mode workspace-write --execute`;
  if (sandbox === null || sandbox === 'read-only')
    findings.push(
      finding(
        `${prefix}.codex_sandbox`,
        'warn',
        `${who}: Codex runs in its ${sandbox ?? 'default (read-only)'} sandbox: the agent cannot edit files`,
        setSandbox,
      ),
    );
  else findings.push(finding(`${prefix}.codex_sandbox`, 'ok', `${who}: Codex sandbox ${sandbox}`));
  // `codex exec` refuses to start outside a git repository unless the folder is trusted or the flag says so
  // ("Not inside a trusted directory and --skip-git-repo-check was not specified"): Doctor green, turn failed.
  if (!(config.args ?? []).includes('--skip-git-repo-check') && !insideGitRepository(agent.projectRoot))
    findings.push(
      finding(
        `${prefix}.codex_git`,
        'warn',
        `${who}: ${agent.projectRoot} is not in a git repository, and Codex runs only in one (or in a folder it trusts)`,
        `git init the project (Codex also needs it to show its changes), or add --skip-git-repo-check to the executor's args`,
      ),
    );
  const codexFolder = path.join(agent.projectRoot, '.codex');
  const stateInCodex =
    agent.statePath !== null && path.resolve(agent.statePath).startsWith(`${path.resolve(codexFolder)}${path.sep}`);
  // Not a warning: the turns LoopX runs give Codex the state folder as a writable root (--add-dir), so a
  // Codex agent on the default layout is ready; only a Codex the user starts needs the flag (said here).
  if (sandbox === 'workspace-write' && stateInCodex)
    findings.push(
      finding(
        `${prefix}.codex_folder`,
        'ok',
        `${who}: the goal's state file is under .codex/, read-only in Codex's workspace-write sandbox: LoopX's turns give Codex its folder as a writable root (--add-dir ${path.relative(agent.projectRoot, path.dirname(agent.statePath ?? codexFolder)) || '.'}); a Codex you start yourself needs the same --add-dir`,
      ),
    );
  else if (fs.existsSync(codexFolder) && !writable(codexFolder))
    findings.push(
      finding(
        `${prefix}.codex_folder`,
        'warn',
        `${who}: ${codexFolder} is not writable`,
        'give your user write access to .codex/ (LoopX keeps goal state there by default)',
      ),
    );
  return findings;
}

/** Every finding doctor makes from files and programs (the editor adds its own: trust, language models). */
export async function collectDoctorFindings(input: DoctorInput): Promise<DoctorFacts> {
  const findings: DoctorFinding[] = [nodeFinding(input.nodeVersion)];
  const lockFolders: string[] = [];
  let runtimeRoot: string | null = null;
  const goalIds: string[] = [];
  /** Where each goal's agents work (its `repo`, else the registry's project). */
  const goalProjects = new Map<string, string>();
  if (!input.registryExists) {
    findings.push(
      finding(
        'registry_parses',
        'warn',
        `no registry at ${input.registryPath}`,
        'connect the project: loopx bootstrap --goal-id <id> --objective "<goal>" (LoopX: Create Goal…), or pass --registry',
      ),
    );
    runtimeRoot = resolveRuntimeRoot({ override: input.runtimeRootOverride, homeDir: input.homeDir });
  } else {
    let registry: Record<string, unknown> | null = null;
    try {
      registry = parseRegistryText(await readFileSafe(input.registryPath), input.registryPath);
      findings.push(finding('registry_parses', 'ok', `registry ${input.registryPath} parses`));
    } catch (error) {
      findings.push(
        finding(
          'registry_parses',
          'error',
          `registry ${input.registryPath} cannot be read: ${error instanceof Error ? error.message : String(error)}`,
          'fix the JSON (LoopX never overwrites a file it cannot parse); loopx registry lists the problems',
        ),
      );
    }
    lockFolders.push(path.dirname(input.registryPath));
    runtimeRoot = resolveRuntimeRoot({
      registryPath: input.registryPath,
      registry: registry ?? {},
      override: input.runtimeRootOverride,
      homeDir: input.homeDir,
    });
    if (registry !== null) {
      const projectRoot = registryProjectRoot(input.registryPath);
      for (const [goalId, goal] of rawRegistryGoalsById(registry)) {
        goalIds.push(goalId);
        goalProjects.set(goalId, snapshotProjectRoot(goal, input.homeDir, projectRoot));
        const statePath = resolveGoalStatePath(goal, goalId, input.homeDir);
        findings.push(await stateFinding(goalId, statePath));
        if (statePath !== null) lockFolders.push(path.dirname(statePath));
        const agents = registeredAgentsForGoal(goal);
        if (agents.length === 0)
          findings.push(
            finding(
              `goal.${goalId}.agents`,
              'warn',
              `goal ${goalId} has no registered agents`,
              `loopx agent configure --goal-id ${goalId} --agent-id <id> --preset demo --execute (LoopX: Configure Agent…)`,
            ),
          );
        for (const agentId of agents) {
          let config: ExecutorConfig | null;
          try {
            config = readAgentExecutorConfig(goal, agentId);
          } catch (error) {
            findings.push(
              finding(
                `agent.${goalId}.${agentId}.executor`,
                'error',
                error instanceof Error ? error.message : String(error),
                `loopx agent configure --goal-id ${goalId} --agent-id ${agentId} --preset <preset> --execute`,
              ),
            );
            continue;
          }
          if (config === null) {
            findings.push(
              finding(
                `agent.${goalId}.${agentId}.executor`,
                'warn',
                `${agentId} (goal ${goalId}) has no executor: LoopX cannot run its turns (it can still work through the CLI)`,
                `loopx agent configure --goal-id ${goalId} --agent-id ${agentId} --preset claude-code|codex|opencode|command|demo --execute (LoopX: Configure Agent…)`,
                false,
              ),
            );
            continue;
          }
          findings.push(
            ...(await agentFindings(
              { goalId, agentId, projectRoot, statePath },
              config,
              input.env,
              input.homeDir,
              input.probe,
            )),
          );
        }
      }
    }
  }
  findings.push(runtimeRootFinding(runtimeRoot));
  for (const goalId of goalIds) {
    const footprint = originalFootprintIn(goalRuntimeDir(runtimeRoot, goalId));
    if (footprint === null) continue;
    findings.push(originalLoopxFinding(goalId, footprint));
    const project = goalProjects.get(goalId);
    if (project !== undefined && (await captureDeliveryWorkspace(project, false)) === null)
      findings.push(originalSettlementFinding(goalId, project));
  }
  if (fs.existsSync(runtimeRoot)) lockFolders.push(runtimeRoot);
  findings.push(staleLockFinding(staleLocks(lockFolders)));
  if (input.statusPort !== null) findings.push(await statusPortFinding(input.statusPort));
  return { findings, runtimeRoot, goals: goalIds };
}

/**
 * The original LoopX spends on this goal too (its lock files are in the goal's runtime folder). Its `spend-slot`
 * reads the quota and appends its row with no lock between, so a spend of it can pass `allowed_slots` by one when
 * one of our turns (or another of its agents) takes the slot in that window: no lock of ours can close it.
 */
export function originalLoopxFinding(goalId: string, footprint: string): DoctorFinding {
  return finding(
    `goal.${goalId}.original_loopx`,
    'warn',
    `goal ${goalId}: the original LoopX also spends on this goal (${path.basename(footprint)} in its runtime folder); its spend-slot takes no lock between reading the quota and appending its spend, so with both programs spending the goal can end one slot past allowed_slots`,
    `run one program per goal where the hard limit matters (quota should-run says the same in original_loopx)`,
    false,
  );
}

/**
 * The original spends on this goal, but its project is no git checkout with a credential-free `origin`: a writeback
 * there carries no delivery workspace snapshot (snapshots/deliveryWorkspace.ts), so the original's turn-scoped
 * `spend-slot` refuses every turn (ours and its own) unless the todo says `continuation_policy=same_agent_non_delivery`.
 */
export function originalSettlementFinding(goalId: string, project: string): DoctorFinding {
  return finding(
    `goal.${goalId}.original_settlement`,
    'warn',
    `goal ${goalId}: ${project} is no git checkout with a credential-free origin, so runs written back there carry no delivery workspace snapshot and the original LoopX's quota spend-slot refuses to spend their turns (ours and its own): "quota spend requires a valid delivery workspace snapshot"`,
    `give the project an origin (git remote add origin <url>), or let LoopX (not the original) spend this goal's turns`,
    false,
  );
}

async function stateFinding(goalId: string, statePath: string | null): Promise<DoctorFinding> {
  const id = `goal.${goalId}.state_file`;
  if (statePath === null)
    return finding(
      id,
      'warn',
      `goal ${goalId} has no state file location`,
      'set its state_file or repo in the registry',
    );
  if (!fs.existsSync(statePath))
    return finding(
      id,
      'warn',
      `goal ${goalId}: state file ${statePath} does not exist`,
      `loopx bootstrap --goal-id ${goalId} creates it`,
    );
  try {
    const doc = parseStateDocument(await readFileSafe(statePath));
    if (doc.issues.length > 0)
      return finding(
        id,
        'warn',
        `goal ${goalId}: ${statePath} has ${doc.issues.length} line(s) LoopX cannot read`,
        'open the state file and fix the lines loopx status reports',
      );
    return finding(id, 'ok', `goal ${goalId}: ${statePath} parses`);
  } catch (error) {
    return finding(
      id,
      'error',
      `goal ${goalId}: ${statePath} cannot be read: ${error instanceof Error ? error.message : String(error)}`,
      'check its permissions and size',
    );
  }
}

/** The editor's status server serving a registry (its port is then in use by LoopX itself). */
export function statusServerFinding(message: string): DoctorFinding {
  return finding('status_server_port', 'ok', message);
}

/** What the editor knows and the CLI does not, as findings (the palette's Doctor adds them). */
export function editorFindings(facts: {
  trusted: boolean;
  languageModels: readonly string[] | null;
  vscodeLmAgents: number;
}): DoctorFinding[] {
  const findings: DoctorFinding[] = [
    facts.trusted
      ? finding('workspace_trust', 'ok', 'the workspace is trusted')
      : finding(
          'workspace_trust',
          'warn',
          'the workspace is not trusted: LoopX is read-only here (no turns, no writes)',
          'Manage Workspace Trust, then trust this folder',
        ),
  ];
  if (facts.languageModels !== null) {
    if (facts.languageModels.length > 0)
      findings.push(finding('language_models', 'ok', `language models: ${facts.languageModels.join(', ')}`));
    else if (facts.vscodeLmAgents === 0)
      // Only vscode-lm agents need one: a Claude Code or Codex user is not warned about it.
      findings.push(finding('language_models', 'ok', 'no language model in the editor (no vscode-lm agent needs one)'));
    else
      findings.push(
        finding(
          'language_models',
          'error',
          'no language model is available in the editor (vscode-lm agents cannot run)',
          'sign in to GitHub Copilot or install an extension that provides a chat model',
        ),
      );
  }
  return findings;
}
