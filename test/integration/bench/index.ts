import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';

interface HostEvent {
  event: string;
  detail: string;
  atEpochMs: number;
  costMs: number | null;
}

interface Timings {
  activateToModelMs: number | null;
  activateToGoalsShownMs: number | null;
  activateToGoalsFilledShownMs: number | null;
  activateStartedAtEpochMs: number;
  activateToStartedMs: number | null;
  events: HostEvent[];
}

const timings = async (): Promise<Timings> =>
  (await vscode.commands.executeCommand('_loopx.activationTimings')) as Timings;

/**
 * How long the non-activation modes wait once the goals are shown, before timing: the workbench
 * (renderer) is still starting for seconds after that on this machine. Measured 2026-12-01 on M:
 * after 1.5 s a minimal webview's first message took 2.2 s, after 8 s 0.36 s; a user opens a panel
 * in a window that has settled. $LOOPX_BENCH_SETTLE_MS overrides it.
 */
const SETTLE_MS = 8_000;

/** How many more changes `external` makes after the first (their refreshes are reported beside it). */
const LATER_CHANGES = 4;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls the extension's timings until `found` returns something, or fails after `limitMs`. */
async function waitFor<T>(what: string, limitMs: number, found: (t: Timings) => T | undefined): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = found(await timings());
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${limitMs / 1000} s`);
    await sleep(10);
  }
}

/** A CPU profile of this host from now until the returned stop is called ($LOOPX_BENCH_CPU_PROFILE). */
async function startProfile(): Promise<() => Promise<string>> {
  const inspector = await import('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object): Promise<unknown> =>
    new Promise((resolve, reject) =>
      session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
  return async () => {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    session.disconnect();
    return JSON.stringify(profile);
  };
}

const epochNow = (): number => performance.timeOrigin + performance.now();

/**
 * Another process changes one goal's state file: adds an open agent todo under "## Agent Todo",
 * written as agents write (a temporary file renamed over it). Prints the wall-clock time of the
 * rename, the moment the change exists on disk.
 */
const WRITER = `
const fs = require('node:fs');
const file = process.argv[1];
const text = fs.readFileSync(file, 'utf8');
const id = 'todo_bench_' + Date.now();
const line = '## Agent Todo\\n- [ ] [P3] External change ' + id + '.\\n  <!-- loopx:todo todo_id=' + id + ' status=open task_class=advancement_task -->\\n';
if (!text.includes('## Agent Todo\\n')) throw new Error(file + ' has no "## Agent Todo" section');
fs.writeFileSync(file + '.bench-tmp', text.replace('## Agent Todo\\n', line));
const at = performance.timeOrigin + performance.now();
fs.renameSync(file + '.bench-tmp', file);
process.stdout.write(String(at));
`;

/**
 * Extension-host side of the extension benchmarks (bench/benchmarks/extension.ts). The mode
 * ($LOOPX_BENCH_MODE) says what to time; the figures go to $LOOPX_BENCH_TIMINGS as JSON:
 * - `activation` (default): activate, show the Goals view, wait until it lists the goals;
 * - `empty`: activate in a folder with no registry (activate() until it returns);
 * - `external`: once the goals are shown, another process changes one goal's state file
 *   ($LOOPX_BENCH_STATE_FILE); from that write to the Goals view's change event for that goal;
 * - `warnings` / `goal-detail`: from the palette command to the webview's first message (`ready`);
 * - `webview-raw`: the same window state, but a minimal webview of VS Code's own making (one script
 *   file loaded from disk under a strict CSP, as every webview without inline script must; no
 *   extension code): what the editor itself takes to show a first webview, the baseline of the two
 *   above.
 */
export async function run(): Promise<void> {
  const runStartedAtEpochMs = epochNow();
  const output = process.env['LOOPX_BENCH_TIMINGS'];
  if (!output) throw new Error('LOOPX_BENCH_TIMINGS is not set');
  const mode = process.env['LOOPX_BENCH_MODE'] ?? 'activation';
  const extension = vscode.extensions.getExtension('loopx.loopx-vscode');
  if (!extension) throw new Error('LoopX is not installed in this host');
  await extension.activate();
  if (mode === 'empty') {
    const t = await timings();
    if (t.activateToStartedMs === null) throw new Error('activate() returned before the extension started');
    writeFileSync(output, JSON.stringify({ ...t, measuredMs: t.activateToStartedMs }));
    return;
  }
  await vscode.commands.executeCommand('loopx.goals.focus');
  const shown = await waitFor('the Goals view listing the goals', 240_000, (t) =>
    t.activateToGoalsShownMs === null ? undefined : t,
  );
  if (mode === 'activation') {
    // The goals are listed first; their status and quota fill in after (activateToModelMs, goalCount).
    const filled = await waitFor('the Goals view showing a goal with its status read', 240_000, (t) =>
      t.activateToModelMs === null || t.activateToGoalsFilledShownMs === null ? undefined : t,
    );
    writeFileSync(
      output,
      JSON.stringify({
        ...filled,
        activateToGoalsShownMs: shown.activateToGoalsShownMs,
        // This suite runs only once the host has started; it focuses the view after that.
        activateToBenchStartMs: runStartedAtEpochMs - filled.activateStartedAtEpochMs,
      }),
    );
    return;
  }
  // Let the start settle (the first reload's followers, the file watchers).
  await sleep(Number(process.env['LOOPX_BENCH_SETTLE_MS'] ?? SETTLE_MS));
  if (mode === 'external') {
    const stateFile = process.env['LOOPX_BENCH_STATE_FILE'];
    const goalId = process.env['LOOPX_BENCH_GOAL_ID'];
    if (!stateFile || !goalId) throw new Error('LOOPX_BENCH_STATE_FILE and LOOPX_BENCH_GOAL_ID must be set');
    let profile: (() => Promise<string>) | undefined;
    // The first change after the start is timed end to end; then LATER_CHANGES more, a second
    // apart, as an agent working on the goal makes them: their refreshes run code the first one
    // already compiled, which the first change after a warm start (every goal from the cache) has not.
    const changes: { shownMs: number; costMs: number | null; goals: string }[] = [];
    for (let i = 0; i <= LATER_CHANGES; i++) {
      if (i > 0) await sleep(1_000);
      // $LOOPX_BENCH_CPU_PROFILE: a CPU profile of the host around the last change.
      if (i === LATER_CHANGES && process.env['LOOPX_BENCH_CPU_PROFILE']) profile = await startProfile();
      const writer = spawnSync(process.execPath, ['-e', WRITER, stateFile], {
        encoding: 'utf8',
        env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      });
      if (writer.status !== 0) throw new Error(`the writer failed: ${writer.stderr}`);
      const writtenAt = Number(writer.stdout);
      const refresh = await waitFor(`the Goals view refreshing ${goalId}`, 20_000, (t) =>
        t.events.find(
          (e) => e.event === 'tree-refresh' && e.atEpochMs >= writtenAt && e.detail.split(',').includes(goalId),
        ),
      );
      changes.push({ shownMs: refresh.atEpochMs - writtenAt, costMs: refresh.costMs, goals: refresh.detail });
      if (i === LATER_CHANGES && profile !== undefined)
        writeFileSync(process.env['LOOPX_BENCH_CPU_PROFILE'] as string, await profile());
    }
    const [first] = changes;
    if (first === undefined) throw new Error('no change was timed');
    writeFileSync(
      output,
      JSON.stringify({
        ...shown,
        measuredMs: first.shownMs,
        refreshCostMs: first.costMs,
        refreshedGoals: [...new Set(changes.map((c) => c.goals))].join(' / '),
        laterRefreshCostsMs: changes.slice(1).map((c) => c.costMs),
        laterShownMs: changes.slice(1).map((c) => c.shownMs),
      }),
    );
    return;
  }
  if (mode === 'warnings' || mode === 'goal-detail') {
    const detail = mode;
    const started = epochNow();
    const command =
      mode === 'warnings'
        ? vscode.commands.executeCommand('loopx.showProjectionWarnings')
        : vscode.commands.executeCommand('loopx.showGoalDetail', {
            goalId: process.env['LOOPX_BENCH_GOAL_ID'],
          });
    await command;
    const ready = await waitFor(`the ${detail} webview's first message`, 30_000, (t) =>
      t.events.find((e) => e.event === 'webview-ready' && e.detail === detail && e.atEpochMs >= started),
    );
    writeFileSync(output, JSON.stringify({ ...shown, measuredMs: ready.atEpochMs - started }));
    return;
  }
  if (mode === 'webview-raw') {
    const dir = mkdtempSync(join(tmpdir(), 'loopx-raw-webview-'));
    writeFileSync(join(dir, 'raw.js'), "acquireVsCodeApi().postMessage({ type: 'ready' });");
    const started = epochNow();
    const panel = vscode.window.createWebviewPanel('loopxBench.raw', 'Raw webview', vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.file(dir)],
    });
    const readyAt = new Promise<number>((resolve) => panel.webview.onDidReceiveMessage(() => resolve(epochNow())));
    const nonce = randomBytes(16).toString('base64url');
    const script = panel.webview.asWebviewUri(vscode.Uri.file(join(dir, 'raw.js'))).toString();
    panel.webview.html = `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'nonce-${nonce}'"></head><body><main>raw</main><script nonce="${nonce}" src="${script}"></script></body></html>`;
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("the raw webview's first message did not come within 30 s")), 30_000);
    });
    try {
      const at = await Promise.race([readyAt, limit]);
      writeFileSync(output, JSON.stringify({ ...shown, measuredMs: at - started }));
    } finally {
      clearTimeout(timer);
      panel.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
    return;
  }
  throw new Error(`unknown LOOPX_BENCH_MODE ${mode}`);
}
