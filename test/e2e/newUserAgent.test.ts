/**
 * A new user connects the real Claude Code CLI, or the real Codex CLI, from the palette of the installed
 * extension, with nothing typed into JSON: "LoopX: Configure Agent…" (the claude-code preset with acceptEdits,
 * or the codex preset with workspace-write, found on the PATH with its version), "LoopX: Doctor" reports no
 * error and no warning, and "LoopX: Run One Turn…" runs a turn that the CLI works through its own tools and
 * that commits.
 *
 * The agent CLIs are the pinned ones of the conformance tier (test/agents/support/agentClis.ts, installed on
 * first use into .agent-clis/ or LOOPX_AGENT_CLI_CACHE), and the model is our scripted server: the Anthropic
 * Messages API reached through ANTHROPIC_BASE_URL in the editor's environment as a gateway user has it, or the
 * OpenAI Responses API through a model provider in the user's ~/.codex/config.toml. Agent CLIs
 * run only in a loopback-only network namespace: code-server (and so the extension host and Claude Code),
 * Chromium and the model server all run inside one (`unshare --net`, lo up, entered with nsenter). Making a
 * namespace needs root: elsewhere the test says so and is skipped, as the agents tier is; under CI it fails.
 * Screenshots: test-results/new-user-*.png.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { EXTENSION_ID } from '../../src/core/commands/ids';
import { AGENT_CLI_VERSIONS, ensureAgentClis } from '../agents/support/agentClis';
import type { LoggedRequest, ModelScript, ScriptedAnswer } from '../agents/support/modelServer';
import { namespaceUnavailableReason } from '../agents/support/namespace';
import { FAKE_KEYS, finalText, QUIET_ENV, RELATED_NOTE } from '../agents/support/scenario';
import { materializeDemoWorkspace, REPO_ROOT } from '../support/demoWorkspace';
import {
  CHROMIUM_PATH,
  installVsix,
  launchChromium,
  startCodeServer,
  workbenchUrl,
  type CodeServer,
} from '../support/vscodeHost';

const RESULTS = join(REPO_ROOT, 'test-results');
const CLAUDE_VERSION = AGENT_CLI_VERSIONS['@anthropic-ai/claude-code'];
const CODEX_VERSION = AGENT_CLI_VERSIONS['@openai/codex'];

/** What differs between connecting Claude Code and connecting Codex. */
interface FirstTurn {
  /** The agent configured: a new one, or one the demo goal registered without an executor. */
  agent: string;
  newAgent: boolean;
  preset: 'claude-code' | 'codex';
  version: string;
  permission: string;
  executor: Record<string, unknown>;
  /** The demo goal's agent without an executor, taken off first (a doctor warning that is not this user's). */
  removeFirst: string | null;
  /** The project is a git repository (`git init`): Codex starts only in one (or a folder it trusts). */
  gitRepository: boolean;
  /** The todo the first turn takes: a new agent the goal's first open one, the demo's codex-main the one it claimed. */
  todoId: string;
  /** The model's first step: the CLI's own edit tool writing notes/related.md. */
  edit: (related: string) => ScriptedAnswer;
  /** The user's environment for the CLI's provider, and files in HOME (the model server's URL known). */
  providerEnv: (url: string) => Record<string, string>;
  homeFiles: (url: string) => Record<string, string>;
  doctorProvider: RegExp;
  apiPath: string;
  toolEvidence: RegExp;
}

const CLAUDE_FIRST_TURN: FirstTurn = {
  agent: 'claude-main',
  newAgent: true,
  preset: 'claude-code',
  version: CLAUDE_VERSION,
  permission: 'acceptEdits',
  executor: { preset: 'claude-code', args: ['--permission-mode', 'acceptEdits'] },
  removeFirst: 'codex-main',
  gitRepository: false,
  todoId: 'todo_related',
  edit: (related) => ({ kind: 'tool', name: 'Write', input: { file_path: related, content: RELATED_NOTE } }),
  providerEnv: (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: FAKE_KEYS['ANTHROPIC_API_KEY'] as string }),
  homeFiles: () => ({}),
  doctorProvider: /claude-main \(goal tidy-notes, claude-code\): passes ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL/,
  apiPath: '/v1/messages',
  toolEvidence: /File created successfully/,
};

const CODEX_FIRST_TURN: FirstTurn = {
  agent: 'codex-main',
  newAgent: false,
  preset: 'codex',
  version: CODEX_VERSION,
  permission: 'workspace-write',
  executor: { preset: 'codex', args: ['--sandbox', 'workspace-write'] },
  removeFirst: null,
  gitRepository: true,
  todoId: 'todo_links',
  // Codex edits with apply_patch, which it intercepts when the model runs it through exec_command.
  edit: () => ({
    kind: 'tool',
    name: 'exec_command',
    input: {
      cmd: `apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: notes/related.md\n${RELATED_NOTE.trimEnd()
        .split('\n')
        .map((l) => `+${l}`)
        .join('\n')}\n*** End Patch\nEOF\n`,
    },
  }),
  providerEnv: () => ({ OPENAI_API_KEY: FAKE_KEYS['OPENAI_API_KEY'] as string }),
  // A user's own model provider (a gateway speaking the Responses API), in Codex's own config file.
  homeFiles: (url) => ({
    '.codex/config.toml': [
      'model = "gpt-5"',
      'model_provider = "scripted"',
      '[model_providers.scripted]',
      'name = "scripted"',
      `base_url = "${url}/v1"`,
      'env_key = "OPENAI_API_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  }),
  doctorProvider: /codex-main \(goal tidy-notes, codex\): passes [A-Z_, ]*OPENAI_API_KEY/,
  apiPath: '/v1/responses',
  toolEvidence: /A notes\/related\.md/,
};

/** A loopback-only network namespace held open by a sleeping process; others join it with `nsenter`. */
async function holdNamespace(): Promise<{ holder: ChildProcess; enter: string[] }> {
  const holder = spawn('unshare', ['--net', 'sh', '-c', 'ip link set lo up && echo up && exec sleep 100000'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    holder.stdout?.once('data', () => resolve());
    holder.once('exit', (code) => reject(new Error(`unshare --net exited with ${code}`)));
  });
  return { holder, enter: ['nsenter', `--net=/proc/${holder.pid}/ns/net`] };
}

/** The scripted model server (test/agents/support/modelServerMain.ts) started inside the namespace. */
async function startModelServerIn(
  enter: string[],
  script: ModelScript,
  dir: string,
): Promise<{ url: string; stop: () => Promise<{ requests: LoggedRequest[]; toolResults: string[] }> }> {
  const scriptFile = join(dir, 'model-script.json');
  const reportFile = join(dir, 'model-report.json');
  writeFileSync(scriptFile, JSON.stringify(script));
  const [program, ...args] = [
    ...(enter as [string, ...string[]]),
    process.execPath,
    '--import',
    'tsx',
    join(REPO_ROOT, 'test', 'agents', 'support', 'modelServerMain.ts'),
    scriptFile,
    reportFile,
  ];
  const child = spawn(program, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /listening (http:\/\/\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`the model server exited with ${code}: ${out}`)));
  });
  return {
    url,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      return JSON.parse(readFileSync(reportFile, 'utf8')) as { requests: LoggedRequest[]; toolResults: string[] };
    },
  };
}

async function runCommand(page: Page, title: string): Promise<void> {
  const input = page.locator('.quick-input-widget input');
  // F1 reaches the workbench only when it has the focus (a webview that just opened may hold it, and may take
  // it back and close the palette before it is typed in): click the status bar and try again until the
  // palette opens and takes the text.
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('F1');
    const typed = await input
      .waitFor({ timeout: 10_000 })
      .then(() => input.fill(`>${title}`, { timeout: 10_000 }))
      .then(() => true)
      .catch(() => false);
    if (typed) break;
    if (attempt === 5) throw new Error(`the command palette did not open for "${title}"`);
    await page.locator('.part.statusbar').click({ position: { x: 600, y: 10 } });
  }
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
}

/** Waits for the open quick pick's row matching `label`, types `filter` (if any) and accepts it. */
async function pick(page: Page, label: string | RegExp, filter?: string): Promise<string> {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: 60_000 });
  if (filter !== undefined) await input.fill(filter);
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: label }).first();
  await row.waitFor({ timeout: 30_000 });
  const text = await row.innerText();
  await input.press('Enter');
  return text;
}

/** The open input box (a title names it): types `value` and accepts. */
async function answer(page: Page, title: string | RegExp, value: string): Promise<void> {
  await page.locator('.quick-input-widget .quick-input-title', { hasText: title }).waitFor({ timeout: 30_000 });
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.fill(value);
  await input.press('Enter');
}

/** The text of the first frame (the Markdown preview's webview) whose body matches `pattern`. */
async function frameText(page: Page, pattern: RegExp): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    for (const frame of page.frames()) {
      const text = await frame
        .locator('body')
        .innerText({ timeout: 1000 })
        .catch(() => '');
      // One line per finding, however the view wraps it.
      if (pattern.test(text)) return text.replace(/\s+/g, ' ');
    }
    if (Date.now() > deadline) throw new Error(`no frame shows ${String(pattern)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

describe('A new user connects a real agent CLI from the palette of the installed extension (Chromium)', function () {
  this.timeout(600_000);
  let scratch: string;
  let extensionsDir: string;
  let installedCli: string;
  let namespace: { holder: ChildProcess; enter: string[] } | undefined;
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let stopModel: (() => Promise<unknown>) | undefined;

  before(function () {
    const reason = namespaceUnavailableReason();
    if (reason !== null) {
      if (process.env['CI']) throw new Error(`the new-user e2e cannot run here: ${reason}`);
      console.log(`  skipped: the real Claude Code runs only in a loopback-only namespace: ${reason}`);
      this.skip();
    }
    mkdirSync(RESULTS, { recursive: true });
    scratch = mkdtempSync(join(tmpdir(), 'loopx-e2e-new-user-'));
    const vsix = join(scratch, 'loopx.vsix');
    execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'package.mjs'), '--out', vsix], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    extensionsDir = join(scratch, 'extensions');
    installVsix(vsix, extensionsDir);
    const installed = readdirSync(extensionsDir).find((dir) => dir.startsWith(`${EXTENSION_ID}-`));
    assert.ok(installed, `installed extensions: ${readdirSync(extensionsDir).join(', ')}`);
    installedCli = join(extensionsDir, installed, 'out', 'cli.js');
  });

  afterEach(async () => {
    await browser?.close();
    await server?.stop();
    await stopModel?.().catch(() => undefined);
    namespace?.holder.kill('SIGKILL');
    browser = undefined;
    server = undefined;
    stopModel = undefined;
    namespace = undefined;
  });

  after(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('Configure Agent… (claude-code preset, found on the PATH), Doctor green, and the first turn commits', async () => {
    await firstTurnInEditor(CLAUDE_FIRST_TURN);
  });

  it("Configure Agent… on the demo goal's codex-main (codex preset, workspace-write), Doctor green, and the first turn commits", async () => {
    await firstTurnInEditor(CODEX_FIRST_TURN);
  });

  async function firstTurnInEditor(spec: FirstTurn): Promise<void> {
    const AGENT = spec.agent;
    const clis = ensureAgentClis();
    const workspace = materializeDemoWorkspace(join(scratch, `workspace-${spec.preset}`));
    if (spec.removeFirst !== null) {
      // A project whose goal has only the built-in demo agent (the demo's second agent, without an executor,
      // would be a doctor warning that is not this user's): taken off with the installed CLI.
      const removed = spawnSync(
        process.execPath,
        [installedCli, 'agent', 'remove', '--goal-id', 'tidy-notes', '--agent-id', spec.removeFirst, '--execute'],
        { cwd: workspace, encoding: 'utf8' },
      );
      assert.equal(removed.status, 0, `${removed.stdout}${removed.stderr}`);
    }
    if (spec.gitRepository) {
      const init = spawnSync('git', ['init', '-q'], { cwd: workspace, encoding: 'utf8' });
      assert.equal(init.status, 0, init.stderr);
    }
    const related = join(workspace, 'notes', 'related.md');
    const script: ModelScript = {
      steps: [{ attempts: [spec.edit(related)] }, { attempts: [{ kind: 'text', text: finalText() }] }],
    };

    namespace = await holdNamespace();
    const model = await startModelServerIn(namespace.enter, script, scratch);
    stopModel = model.stop;
    const home = join(scratch, `home-${spec.preset}`);
    mkdirSync(home, { recursive: true });
    for (const [file, content] of Object.entries(spec.homeFiles(model.url))) {
      mkdirSync(dirname(join(home, file)), { recursive: true });
      writeFileSync(join(home, file), content);
    }
    // The CLI on the PATH as its installer leaves it: in the shell profile (the editor takes the login
    // shell's environment for its extension host, so a PATH set only around code-server would not reach it).
    const agentBin = join(clis.cacheDir, 'node_modules', '.bin');
    for (const profile of ['.profile', '.bashrc'])
      writeFileSync(join(home, profile), `export PATH="${agentBin}:$PATH"\n`);
    server = await startCodeServer({
      workspace,
      extensionsDir,
      launcher: namespace.enter,
      // The user's environment: the CLI on the PATH, its provider's settings, telemetry off.
      env: {
        HOME: home,
        PATH: `${agentBin}:${process.env['PATH'] ?? ''}`,
        ...spec.providerEnv(model.url),
        ...QUIET_ENV,
      },
    });
    const chromium = join(scratch, 'chromium-in-namespace');
    writeFileSync(chromium, `#!/bin/sh\nexec ${namespace.enter.join(' ')} ${CHROMIUM_PATH} "$@"\n`, { mode: 0o755 });
    browser = await launchChromium(chromium);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(workbenchUrl(server, workspace, []));
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    try {
      await page.locator('.activitybar').getByRole('tab', { name: /LoopX/ }).click();
      await page
        .locator('.part.sidebar .monaco-list-row', { hasText: 'Tidy the notes folder' })
        .first()
        .waitFor({ timeout: 60_000 });

      // 1. Configure Agent…: a new agent, the claude-code preset (offered with the version found on the PATH),
      // the CLI's default model, acceptEdits, the main checkout (no lane); the preview's modal, then Configure.
      await runCommand(page, 'LoopX: Configure Agent…');
      if (spec.newAgent) {
        await pick(page, 'New agent', 'New agent');
        await answer(page, /New agent on tidy-notes/, AGENT);
      } else await pick(page, AGENT, AGENT);
      const preset = await pick(page, new RegExp(`^${spec.preset}`), spec.preset);
      assert.match(
        preset,
        new RegExp(spec.version.replace(/\./g, '\\.')),
        `the preset pick shows the CLI found: ${preset}`,
      );
      await answer(page, /Model/, '');
      await pick(page, spec.permission, spec.permission);
      await pick(page, 'Main checkout (shared)', 'Main checkout');
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      assert.match(await dialog.innerText(), new RegExp(spec.preset));
      await page.screenshot({ path: join(RESULTS, `new-user-${spec.preset}-configure.png`) });
      await dialog.getByRole('button', { name: 'Configure', exact: true }).click();
      // The Agents view shows the agent (the registry's watcher reloaded the model).
      await page.locator('.part.sidebar .monaco-list-row', { hasText: AGENT }).first().waitFor({ timeout: 30_000 });
      // An agent the demo registered is in the view before the write: wait for the registry to hold its executor.
      const profileOf = (): { registered: boolean; profile: unknown } => {
        const registry = JSON.parse(readFileSync(join(workspace, '.loopx', 'registry.json'), 'utf8')) as {
          goals: { coordination: { registered_agents: string[]; agent_profiles?: Record<string, unknown> } }[];
        };
        const coordination = registry.goals[0]?.coordination;
        return {
          registered: coordination?.registered_agents.includes(AGENT) ?? false,
          profile: coordination?.agent_profiles?.[AGENT],
        };
      };
      for (let waited = 0; profileOf().profile === undefined && waited < 30_000; waited += 500)
        await new Promise((resolve) => setTimeout(resolve, 500));
      const written = profileOf();
      assert.ok(written.registered);
      assert.deepEqual(written.profile, { executor: spec.executor });

      // 2. Doctor: no error, no warning; it found the CLI with its version and flags and the provider variables.
      await runCommand(page, 'LoopX: Doctor');
      const doctor = await frameText(page, /LoopX doctor[\s\S]*error\(s\)/);
      await page.screenshot({ path: join(RESULTS, `new-user-${spec.preset}-doctor.png`) });
      assert.match(doctor, /0 error\(s\), 0 warning\(s\)/, doctor);
      const program = spec.preset === 'claude-code' ? 'claude' : 'codex';
      assert.match(
        doctor,
        // The view wraps long paths: any text up to the program, then its version as `--version` prints it.
        new RegExp(`${AGENT} \\(goal tidy-notes, ${spec.preset}\\): [^,]*/${program}, (\\S+ )?${spec.version}`),
      );
      assert.match(doctor, spec.doctorProvider);

      // 3. Run One Turn…: the agent, confirmed; the CLI writes the note with its own tool and the turn commits.
      // A quick pick closes when it loses the focus: give it back to the workbench from the Doctor's preview first.
      // The preview can still take it back once its webview has loaded (the pick then hides before it is
      // accepted): run the command again until its confirmation shows, at most three times.
      const confirm = page.locator('.monaco-dialog-box');
      for (let attempt = 1; ; attempt++) {
        await page.locator('.part.sidebar .monaco-list-row', { hasText: AGENT }).first().click();
        await runCommand(page, 'LoopX: Run One Turn…');
        const confirmed = await pick(page, AGENT, AGENT)
          .then(() => confirm.waitFor({ timeout: attempt === 3 ? 60_000 : 20_000 }))
          .then(() => true)
          .catch((error: unknown) => {
            if (attempt === 3) throw error;
            return false;
          });
        if (confirmed) break;
        await page.keyboard.press('Escape');
      }
      await confirm.getByRole('button', { name: 'Run', exact: true }).click();
      // The Agents view shows the agent's run once the turn has ended (its record written).
      await page
        .locator('.part.sidebar .monaco-list-row', { hasText: new RegExp(`${AGENT}.*last `) })
        .first()
        .waitFor({ timeout: 300_000 });
      await page.screenshot({ path: join(RESULTS, `new-user-${spec.preset}-turn.png`) });
    } catch (error) {
      await page.screenshot({ path: join(RESULTS, `failure-new-user-${spec.preset}.png`) });
      throw error;
    }
    stopModel = undefined;
    const { requests, toolResults } = await model.stop();
    assert.equal(readFileSync(related, 'utf8'), RELATED_NOTE);
    assert.ok(
      toolResults.some((t) => spec.toolEvidence.test(t)),
      `the CLI ran its own edit tool: ${toolResults.join('\n')}`,
    );
    const turnSteps = requests.filter((r) => r.path === spec.apiPath && r.step !== null).map((r) => r.step);
    assert.deepEqual([...new Set(turnSteps)], [0, 1], JSON.stringify(requests));
    const state = readFileSync(join(workspace, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md'), 'utf8');
    assert.match(state, new RegExp(`todo_id=${spec.todoId} status=done`));
    const runs = readFileSync(
      join(workspace, '.loopx', 'runtime', 'goals', 'tidy-notes', 'runs', 'index.jsonl'),
      'utf8',
    );
    assert.ok(existsSync(related));
    assert.match(runs, new RegExp(`"agent_id":"${AGENT}"`));
  }
});
