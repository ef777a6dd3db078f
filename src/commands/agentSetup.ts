import * as vscode from 'vscode';
import { SETTINGS } from '../core/commands/ids';
import {
  AGENT_PRESETS,
  configureAgent,
  ISOLATION_CHOICES,
  PERMISSION_MODES,
  removeAgent,
  type AgentPreset,
  type ConfigureAgentResult,
  type IsolationChoice,
} from '../core/ops/configureAgent';
import {
  detectAgentClis,
  doctor,
  doctorMarkdown,
  doctorResult,
  editorFindings,
  statusServerFinding,
  systemProbe,
  type DoctorResult,
} from '../core/ops/doctor';
import { runOperation } from '../core/ops/run';
import type { GoalSummary } from '../core/ops/goalRows';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { editorEnvironment, folderEnvironment, previewThenApply } from './operationRunner';
import { agentIdProblem } from '../core/ops/registerAgent';
import { argumentField, askText, Cancelled, isTrue, pickGoal } from './pickers';
import { showMarkdown } from './status';

/**
 * "Configure Agent…", "Remove Agent…", "Show Last Run" and "Doctor": connecting an agent without
 * editing JSON (the configureAgent operation, previewed and confirmed), and checking the setup.
 * Each takes an Agents view node, `{ goalId, agentId, preset, … }` from code, or asks.
 */

/** An Agents view node (`{ kind: 'agent', agent }`): the agent id and the goals it is registered on. */
function agentNodeOf(arg: unknown): { agentId: string; goals: { goalId: string; registryPath: string }[] } | undefined {
  if (typeof arg !== 'object' || arg === null || (arg as { kind?: unknown }).kind !== 'agent') return undefined;
  const agent = (arg as { agent?: { agentId?: unknown; goals?: unknown } }).agent;
  if (typeof agent?.agentId !== 'string' || !Array.isArray(agent.goals)) return undefined;
  return { agentId: agent.agentId, goals: agent.goals as { goalId: string; registryPath: string }[] };
}

const isString = (value: unknown): value is string => typeof value === 'string';

/** The goal of an agent node (its only goal, or a pick among its goals), else the usual goal pick. */
export async function goalForAgentCommand(model: WorkspaceModel, arg: unknown, title: string): Promise<GoalSummary> {
  const node = agentNodeOf(arg);
  if (node === undefined) return pickGoal(model, arg, title);
  const goals = node.goals
    .map((g) => model.findGoal(g.goalId, g.registryPath))
    .filter((g): g is GoalSummary => g !== undefined);
  if (goals.length === 1 && goals[0]) return goals[0];
  if (goals.length === 0) return pickGoal(model, undefined, title);
  const picked = await vscode.window.showQuickPick(
    goals.map((goal) => ({ label: goal.displayName, description: goal.goalId, goal })),
    { title, placeHolder: vscode.l10n.t('Choose a goal') },
  );
  if (!picked) throw new Cancelled();
  return picked.goal;
}

/** The agent id of an agent node or `{ agentId }`, else undefined. */
export function agentIdOf(arg: unknown): string | undefined {
  return agentNodeOf(arg)?.agentId ?? argumentField(arg, 'agentId', isString);
}

async function pickAgentId(goal: GoalSummary, arg: unknown): Promise<string> {
  const given = agentIdOf(arg);
  if (given !== undefined) return given;
  const newAgent = vscode.l10n.t('New agent…');
  const picked = await vscode.window.showQuickPick(
    [
      ...goal.agents.map((agentId) => ({ label: agentId, description: vscode.l10n.t('registered'), agentId })),
      { label: `$(add) ${newAgent}`, description: '', agentId: undefined },
    ],
    { title: vscode.l10n.t('Configure which agent of {0}?', goal.goalId) },
  );
  if (!picked) throw new Cancelled();
  if (picked.agentId !== undefined) return picked.agentId;
  return askText({
    title: vscode.l10n.t('New agent on {0}', goal.goalId),
    prompt: vscode.l10n.t('Agent id (a letter a-z first; a-z, 0-9, "_", ".", ":", "@", "-")'),
    placeHolder: vscode.l10n.t('e.g. claude-main'),
    validateInput: (v) => agentIdProblem(v) ?? undefined,
  });
}

function presetDetail(preset: AgentPreset): string {
  switch (preset) {
    case 'claude-code':
      return vscode.l10n.t('Claude Code, headless (claude -p)');
    case 'codex':
      return vscode.l10n.t('OpenAI Codex (codex exec)');
    case 'opencode':
      return vscode.l10n.t('opencode (opencode run)');
    case 'command':
      return vscode.l10n.t('Your own program, speaking the LoopX turn protocol on stdin/stdout');
    case 'vscode-lm':
      return vscode.l10n.t("One of the editor's language models (Copilot or another provider)");
    case 'demo':
      return vscode.l10n.t('The built-in demo agent (nothing to install)');
  }
}

/** The preset pick, with the agent CLIs found on PATH and their versions first. */
async function pickPreset(cwd: string): Promise<AgentPreset> {
  const clis = await detectAgentClis(systemProbe(process.env, cwd, 3000));
  const items = AGENT_PRESETS.map((preset) => {
    const cli = clis.find((c) => c.preset === preset);
    const description =
      cli === undefined
        ? ''
        : cli.path === null
          ? vscode.l10n.t('{0} not found on PATH', cli.command)
          : (cli.version ?? cli.path);
    return { label: preset, description, detail: presetDetail(preset), preset, found: cli?.path != null };
  });
  items.sort((a, b) => Number(b.found) - Number(a.found));
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('How does the agent run?'),
    matchOnDetail: true,
  });
  if (!picked) throw new Cancelled();
  return picked.preset;
}

interface AgentChoices {
  model?: string;
  permissionMode?: string;
  command?: string[];
  isolation?: IsolationChoice;
}

async function askChoices(preset: AgentPreset, arg: unknown): Promise<AgentChoices> {
  const fromCode = argumentField(arg, 'preset', isString) !== undefined;
  const choices: AgentChoices = {};
  const isolation = argumentField(arg, 'isolation', isString);
  if (isolation !== undefined && (ISOLATION_CHOICES as readonly string[]).includes(isolation))
    choices.isolation = isolation as IsolationChoice;
  const command = argumentField(arg, 'command', isString);
  const model = argumentField(arg, 'model', isString);
  const permissionMode = argumentField(arg, 'permissionMode', isString);
  if (command !== undefined) choices.command = [command];
  if (model !== undefined) choices.model = model;
  if (permissionMode !== undefined) choices.permissionMode = permissionMode;
  if (fromCode) return choices;
  if (preset === 'command') {
    const program = await askText({
      title: vscode.l10n.t('The agent program'),
      prompt: vscode.l10n.t('Path of the program to start (a name on PATH, or an absolute path)'),
      validateInput: (v) => (v.trim() === '' ? vscode.l10n.t('Give the program to start.') : undefined),
    });
    choices.command = [program];
  }
  if (preset !== 'demo') {
    const typed = await askText({
      title: vscode.l10n.t('Model (optional)'),
      prompt:
        preset === 'vscode-lm'
          ? vscode.l10n.t('vendor/family (e.g. copilot/gpt-4o), a family, or empty for the first model offered')
          : vscode.l10n.t("Passed as --model; leave empty for the CLI's default"),
    });
    if (typed !== '') choices.model = typed;
  }
  const permission = PERMISSION_MODES[preset];
  if (permission !== undefined) {
    const keep = vscode.l10n.t("the CLI's default");
    const picked = await vscode.window.showQuickPick([keep, ...permission.modes], {
      title: vscode.l10n.t('Permission mode ({0})', permission.flag),
    });
    if (picked === undefined) throw new Cancelled();
    if (picked !== keep) choices.permissionMode = picked;
  }
  const where = await vscode.window.showQuickPick(
    [
      {
        label: vscode.l10n.t('Main checkout (shared)'),
        detail: vscode.l10n.t('The agent edits the files of this folder, beside you and the other agents.'),
        isolation: 'shared' as const,
      },
      {
        label: vscode.l10n.t('Own git worktree (isolated lane)'),
        detail: vscode.l10n.t(
          'The agent works on a branch of its own; each validated turn is a commit, merged back after your review.',
        ),
        isolation: 'worktree' as const,
      },
    ],
    { title: vscode.l10n.t('Where does the agent work?') },
  );
  if (where === undefined) throw new Cancelled();
  choices.isolation = where.isolation;
  return choices;
}

/** "LoopX: Configure Agent…": goal, agent, preset (CLIs found on PATH first), model, permission; previewed, then written. */
export async function configureAgentCommand(model: WorkspaceModel, arg: unknown): Promise<ConfigureAgentResult> {
  const goal = await goalForAgentCommand(model, arg, vscode.l10n.t('Configure an agent of which goal?'));
  const agentId = await pickAgentId(goal, arg);
  const given = argumentField(arg, 'preset', isString);
  const preset = (given as AgentPreset | undefined) ?? (await pickPreset(goal.projectRoot));
  const choices = await askChoices(preset, arg);
  const outcome = await previewThenApply(
    configureAgent,
    { goalId: goal.goalId, agentId, preset, ...choices },
    editorEnvironment(goal.registryPath),
    {
      question: vscode.l10n.t('Configure agent "{0}" on goal "{1}"?', agentId, goal.goalId),
      describe: (preview) =>
        [
          vscode.l10n.t('Executor: {0}', JSON.stringify(preview.after)),
          preview.before === null ? null : vscode.l10n.t('Before: {0}', JSON.stringify(preview.before)),
          preview.registers_agent ? vscode.l10n.t('The agent is registered on the goal with it.') : null,
          preview.isolation_after === 'worktree'
            ? vscode.l10n.t('Works in its own git worktree (branch loopx/{0}/{1}).', goal.goalId, agentId)
            : null,
        ]
          .filter(Boolean)
          .join('\n'),
      action: vscode.l10n.t('Configure'),
      confirmed: argumentField(arg, 'confirmed', isTrue) === true,
      nothingToApply: (preview) => !preview.changed,
    },
  );
  if (outcome.outcome === 'refused') throw new Error(String((outcome.preview as { error?: unknown }).error));
  if (outcome.outcome === 'nothing_to_apply') {
    void vscode.window.showInformationMessage(vscode.l10n.t('LoopX: agent "{0}" is already configured so.', agentId));
    return outcome.preview;
  }
  const { result } = outcome;
  if (!result.ok) throw new Error(vscode.l10n.t('the executor could not be verified after writing'));
  await model.reload();
  void vscode.window.showInformationMessage(
    vscode.l10n.t('LoopX: agent "{0}" on "{1}" runs as {2}.', agentId, goal.goalId, preset),
  );
  return result;
}

/** "Remove Agent…": takes the agent off a goal (registered id, profile, executor), after confirming. */
export async function removeAgentCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const goal = await goalForAgentCommand(model, arg, vscode.l10n.t('Remove an agent from which goal?'));
  let agentId = agentIdOf(arg);
  if (agentId === undefined) {
    agentId = await vscode.window.showQuickPick(goal.agents, {
      title: vscode.l10n.t('Remove which agent from {0}?', goal.goalId),
    });
    if (agentId === undefined) throw new Cancelled();
  }
  const removed = agentId;
  const outcome = await previewThenApply(
    removeAgent,
    { goalId: goal.goalId, agentId: removed },
    editorEnvironment(goal.registryPath),
    {
      question: vscode.l10n.t('Remove agent "{0}" from goal "{1}"?', removed, goal.goalId),
      describe: (preview) =>
        vscode.l10n.t(
          'Registered agents after this change: {0}',
          preview.registered_agents.length === 0 ? vscode.l10n.t('(none)') : preview.registered_agents.join(', '),
        ),
      action: vscode.l10n.t('Remove'),
      confirmed: argumentField(arg, 'confirmed', isTrue) === true,
      nothingToApply: (preview) => !preview.changed,
    },
  );
  if (outcome.outcome !== 'applied') {
    void vscode.window.showInformationMessage(
      vscode.l10n.t('LoopX: agent "{0}" is not on goal "{1}".', removed, goal.goalId),
    );
    return;
  }
  if (!outcome.result.ok) throw new Error(vscode.l10n.t('the removal could not be verified after writing'));
  await model.reload();
}

/** "Show Last Run": the Markdown record of the agent node's newest run. */
export async function showAgentLastRunCommand(arg: unknown): Promise<void> {
  const last = (arg as { agent?: { lastTurn?: { markdown_file?: unknown } | null } } | undefined)?.agent?.lastTurn;
  if (last === undefined || last === null) throw new Error(vscode.l10n.t('This agent has no run yet.'));
  if (typeof last.markdown_file !== 'string')
    throw new Error(
      vscode.l10n.t("This run has no Markdown record inside the goal's project or runtime folder to open."),
    );
  await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(last.markdown_file));
}

async function languageModelNames(): Promise<string[] | null> {
  if (vscode.lm?.selectChatModels === undefined) return null;
  try {
    return (await vscode.lm.selectChatModels()).map((m) => `${m.vendor}/${m.family}`);
  } catch {
    return [];
  }
}

/** "LoopX: Doctor": the doctor operation for each registry of the workspace, plus what the editor knows; a Markdown preview. */
export async function doctorCommand(
  model: WorkspaceModel,
  served: () => Promise<readonly { registryPath: string; origin: string }[]>,
): Promise<DoctorResult[]> {
  const port = vscode.workspace.getConfiguration('loopx').get<number>(SETTINGS.statusServerPort);
  const environments = model.registryPaths().map((registryPath) => editorEnvironment(registryPath));
  if (environments.length === 0) {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (folder === undefined)
      throw new Error(
        vscode.l10n.t('Open a folder first: LoopX keeps goals in the project folder (.loopx/registry.json).'),
      );
    environments.push(folderEnvironment(folder));
  }
  const models = await languageModelNames();
  const vscodeLmAgents = model.agentDetails().filter((a) => a.executors.some((e) => e.includes('vscode-lm'))).length;
  const extra = editorFindings({ trusted: vscode.workspace.isTrusted, languageModels: models, vscodeLmAgents });
  const results: DoctorResult[] = [];
  const servers = await served();
  for (const env of environments) {
    // A registry this window serves holds its port: report the server instead of a busy port.
    const server = servers.find((s) => s.registryPath === env.registryPath);
    const result = await runOperation(doctor, { statusPort: server !== undefined ? 0 : (port ?? undefined) }, env);
    const serving =
      server === undefined
        ? []
        : [statusServerFinding(vscode.l10n.t('status server serves this registry at {0}', server.origin))];
    results.push(
      doctorResult([...result.checks, ...serving, ...extra], {
        registry: result.registry,
        runtimeRoot: result.runtime_root,
        goals: result.goals,
        loopx: process.env['LOOPX_CLI'] ?? null,
      }),
    );
  }
  await showMarkdown(results.map(doctorMarkdown).join('\n\n---\n\n'));
  return results;
}
