/**
 * Each scenario runs in namespaces of its own: a network with only a loopback interface (the agent CLI
 * can reach the scripted model server on 127.0.0.1 and nothing else, so a wrong base URL fails instead
 * of reaching a paid API) and a PID space (with its own /proc) whose end takes every process in it
 * along, so a scenario cannot leak a process whatever happens. Made with util-linux `unshare` and
 * iproute2 `ip`, which need root (CI runs as root); elsewhere the tier says why it cannot run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ScenarioReport, ScenarioSpec } from './scenarioRunner';

const REPO_ROOT = resolve(__dirname, '..', '..', '..');
const RUNNER = join(__dirname, 'scenarioRunner.ts');
const UNSHARE = ['unshare', '--net', '--pid', '--fork', '--kill-child', '--mount-proc'];

/** null when scenarios can run here, else the reason they cannot. */
export function namespaceUnavailableReason(): string | null {
  if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    return 'making a network namespace needs root (unshare -n); CI runs as root';
  const probe = spawnSync(
    UNSHARE[0] as string,
    [...UNSHARE.slice(1), 'sh', '-c', 'ip link set lo up && ip -o addr show lo'],
    {
      encoding: 'utf8',
    },
  );
  if (probe.error) return `cannot run unshare (${probe.error.message}); install util-linux and iproute2`;
  if (probe.status !== 0) return `unshare -n / ip link set lo up failed: ${(probe.stderr || probe.stdout).trim()}`;
  if (!/127\.0\.0\.1/.test(probe.stdout)) return 'the namespace has no 127.0.0.1 on lo';
  return null;
}

/** Runs a scenario in fresh namespaces and returns its report. */
export async function runScenario(spec: Omit<ScenarioSpec, 'reportFile'>, timeoutMs: number): Promise<ScenarioReport> {
  const dir = mkdtempSync(join(tmpdir(), 'loopx-agents-run-'));
  const specFile = join(dir, 'spec.json');
  const reportFile = join(dir, 'report.json');
  writeFileSync(specFile, JSON.stringify({ ...spec, reportFile }));
  const child = spawn(
    UNSHARE[0] as string,
    [
      ...UNSHARE.slice(1),
      'sh',
      '-c',
      'ip link set lo up && exec "$0" --import tsx "$1" "$2"',
      process.execPath,
      RUNNER,
      specFile,
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
  clearTimeout(timer);
  try {
    return JSON.parse(readFileSync(reportFile, 'utf8')) as ScenarioReport;
  } catch {
    throw new Error(`the scenario runner wrote no report (exit ${code}):\n${output}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
