/**
 * Runs INSIDE a scenario's namespaces (loopback-only network, own PID space: see namespace.ts):
 * starts the scripted model server, writes the scenario's files with `{{BASE_URL}}` filled in (the
 * server's port is known only now), runs the scenario's commands one after the other (LoopX's CLI,
 * which starts the real agent CLI), and writes a JSON report: each command's exit code and output,
 * the server's request log, and every process still alive after each command (a survivor).
 *
 * Usage: node --import tsx scenarioRunner.ts <spec.json>
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { promptText, startModelServer, toolResultText, type LoggedRequest, type ModelScript } from './modelServer';

export interface ScenarioCommand {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** Killed (SIGKILL, whole namespace's matching processes) if still running after this long. */
  timeoutMs: number;
  /** kill -9 the agent mid-tool: once `whenFile` exists, SIGKILL every process whose command line matches. */
  kill?: { whenFile: string; processPattern: string };
}

export interface ScenarioSpec {
  script: ModelScript;
  /** Written before the commands run; `{{BASE_URL}}` becomes the model server's URL (http://127.0.0.1:<port>). */
  files: Record<string, string>;
  commands: ScenarioCommand[];
  reportFile: string;
}

export interface ProcessSeen {
  pid: number;
  cmdline: string;
}

export interface CommandReport {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  killed: ProcessSeen[];
  /** Live processes (not zombies) other than this runner after the command ended. */
  survivors: ProcessSeen[];
}

export interface ScenarioReport {
  baseUrl: string;
  requests: LoggedRequest[];
  commands: CommandReport[];
  /** Text of the tool results the CLI sent back to the model (last request per step). */
  toolResults: string[];
  /** The user's words and the CLI's instructions it sent (see promptText), e.g. an expanded slash prompt. */
  prompts: string[];
}

function processes(): ProcessSeen[] {
  const seen: ProcessSeen[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z' || state === 'X') continue;
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      seen.push({ pid, cmdline });
    } catch {
      // gone while we looked
    }
  }
  return seen;
}

async function runCommand(command: ScenarioCommand, baseUrl: string): Promise<CommandReport> {
  const env = Object.fromEntries(
    Object.entries(command.env).map(([k, v]) => [k, v.split('{{BASE_URL}}').join(baseUrl)]),
  );
  // Processes alive before (this runner's own helpers) are not the command's survivors.
  const before = new Set(processes().map((p) => `${p.pid} ${p.cmdline}`));
  const started = Date.now();
  const child = spawn(command.argv[0] as string, command.argv.slice(1), {
    cwd: command.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const killed: ProcessSeen[] = [];
  let poll: NodeJS.Timeout | undefined;
  if (command.kill) {
    const { whenFile, processPattern } = command.kill;
    const pattern = new RegExp(processPattern);
    poll = setInterval(() => {
      if (!existsSync(whenFile)) return;
      clearInterval(poll);
      for (const p of processes()) {
        if (!pattern.test(p.cmdline)) continue;
        try {
          process.kill(p.pid, 'SIGKILL');
          killed.push(p);
        } catch {
          // already gone
        }
      }
    }, 100);
  }
  const timer = setTimeout(() => child.kill('SIGKILL'), command.timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (c, s) => resolve([c, s])),
  );
  clearTimeout(timer);
  if (poll) clearInterval(poll);
  // Give a process that is about to exit a moment, so only true survivors are reported.
  await new Promise((r) => setTimeout(r, 300));
  const survivors = processes().filter((p) => !before.has(`${p.pid} ${p.cmdline}`));
  return { code, signal, stdout, stderr, durationMs: Date.now() - started, killed, survivors };
}

async function main(): Promise<void> {
  const spec = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as ScenarioSpec;
  const server = await startModelServer(spec.script);
  const report: ScenarioReport = {
    baseUrl: server.url,
    requests: server.log,
    commands: [],
    toolResults: [],
    prompts: [],
  };
  try {
    for (const [file, content] of Object.entries(spec.files)) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content.split('{{BASE_URL}}').join(server.url));
    }
    for (const command of spec.commands) {
      const result = await runCommand(command, server.url);
      report.commands.push(result);
      // Nothing may outlive a command: end survivors so the next command starts clean.
      for (const p of result.survivors) {
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  } finally {
    report.toolResults = toolResultText(server.lastBodies);
    report.prompts = promptText(server.lastBodies);
    writeFileSync(spec.reportFile, JSON.stringify(report, null, 2));
    await server.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
