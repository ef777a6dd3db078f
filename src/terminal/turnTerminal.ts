import * as vscode from 'vscode';
import type { OutputStream } from '../core/ops/host';
import type { TurnEvent } from '../core/ops/turn';

/**
 * Watching a turn run: a terminal named after the goal and its agents (a `Pseudoterminal`, no shell)
 * receives the agent's output live — a process agent's stdout and stderr, a language model's streamed
 * reply — and the turn's phase transitions (reserve, run, validate, write back, settle) as lines.
 * Ctrl+C in the terminal, or closing it, cancels the run after its current phase. Output is text
 * only: control sequences an agent prints are shown escaped, never interpreted.
 */

/** The word people read for a driver's phase, in the display language. */
export function phaseLabel(phase: string): string {
  switch (phase) {
    case 'admission':
      return vscode.l10n.t('reserve');
    case 'host_execute':
      return vscode.l10n.t('run');
    case 'typed_result':
      return vscode.l10n.t('result');
    case 'validation':
      return vscode.l10n.t('validate');
    case 'durable_writeback':
      return vscode.l10n.t('write back');
    case 'quota_spend':
    case 'scheduler_apply':
    case 'scheduler_ack':
      return vscode.l10n.t('settle');
    default:
      return phase;
  }
}

/** How much of a terminal's text the transcript keeps (the tail), for tests and "what did it print". */
const TRANSCRIPT_CHARS = 200_000;

/** An agent's text made safe for a terminal: CR/LF as CRLF, other control characters (ESC…) as visible escapes. */
export function terminalText(text: string): string {
  let out = '';
  for (const c of text.replace(/\r?\n/g, '\n')) {
    const code = c.charCodeAt(0);
    if (c === '\n') out += '\r\n';
    else if (c === '\t' || (code >= 0x20 && code !== 0x7f && (code < 0x80 || code > 0x9f))) out += c;
    else out += `^${String.fromCharCode((code + 64) % 128)}`;
  }
  return out;
}

/** One line for a turn event (undefined for events the terminal does not show). */
export function eventLine(event: TurnEvent): string | undefined {
  switch (event.type) {
    case 'turn_started':
      return `▶ ${vscode.l10n.t('turn {0}… {1} on {2}', event.turn_key.slice(0, 19), event.agent_id, event.todo_id ?? vscode.l10n.t('(no todo)'))}${event.todo_title ? ` — ${event.todo_title}` : ''}${event.resumed ? ` ${vscode.l10n.t('(resumed)')}` : ''}`;
    case 'phase_done':
      return `[${phaseLabel(event.phase)}] ${event.detail}`;
    case 'turn_ended':
      return `■ ${vscode.l10n.t('turn ended: {0}', event.status)}${event.spent ? ` ${vscode.l10n.t('(1 slot spent)')}` : ''} — ${event.summary}`;
    case 'loop_stopped':
      return `■ ${vscode.l10n.t('loop stopped ({0}): {1}', event.reason, event.message)}`;
  }
}

export interface TurnTerminalSnapshot {
  name: string;
  running: boolean;
  cancelled: boolean;
  transcript: string;
}

/** One run (a turn, or a loop) shown in its terminal. */
export class TurnTerminal implements vscode.Pseudoterminal {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  private readonly closeEmitter = new vscode.EventEmitter<void>();
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidClose = this.closeEmitter.event;
  private readonly controller = new AbortController();
  private pending: string[] = [];
  private opened = false;
  private atLineStart = true;
  private transcriptText = '';
  private runningNow = true;
  readonly terminal: vscode.Terminal;

  constructor(readonly name: string) {
    this.terminal = vscode.window.createTerminal({ name, pty: this, isTransient: true });
  }

  /** Aborted by Ctrl+C or by closing the terminal. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  open(): void {
    this.opened = true;
    for (const text of this.pending) this.writeEmitter.fire(text);
    this.pending = [];
  }

  close(): void {
    // The user closed the terminal: a run still going stops after its current phase.
    this.opened = false;
    if (this.runningNow) this.controller.abort();
  }

  handleInput(data: string): void {
    if (!data.includes('\u0003')) return;
    if (!this.runningNow) {
      this.closeEmitter.fire();
      return;
    }
    if (!this.controller.signal.aborted) {
      this.line(`^C — ${vscode.l10n.t('cancelling: the run stops after its current phase.')}`);
      this.controller.abort();
    }
  }

  /** The agent's output, as it arrives. */
  output(text: string, stream: OutputStream): void {
    const safe = terminalText(text);
    this.write(stream === 'stderr' ? `\u001b[2m${safe}\u001b[0m` : safe, safe);
  }

  /** A turn event as a line of its own. */
  event(event: TurnEvent): void {
    const line = eventLine(event);
    if (line !== undefined) this.line(line);
  }

  /** A line of LoopX's own (bold), starting on a fresh line. */
  line(text: string): void {
    const safe = terminalText(text);
    const lead = this.atLineStart ? '' : '\r\n';
    this.write(`${lead}\u001b[1m${safe}\u001b[0m\r\n`, `${lead}${safe}\r\n`);
  }

  /** The run ended: the terminal stays open for reading; any key closes it. */
  finish(summary: string): void {
    this.line(summary);
    this.line(vscode.l10n.t('(press any key… Ctrl+C closes this terminal)'));
    this.runningNow = false;
  }

  snapshot(): TurnTerminalSnapshot {
    return {
      name: this.name,
      running: this.runningNow,
      cancelled: this.controller.signal.aborted,
      transcript: this.transcriptText,
    };
  }

  dispose(): void {
    this.terminal.dispose();
    this.writeEmitter.dispose();
    this.closeEmitter.dispose();
  }

  private write(styled: string, plain: string): void {
    if (plain === '') return;
    this.atLineStart = plain.endsWith('\n');
    this.transcriptText = (this.transcriptText + plain.replace(/\r\n/g, '\n')).slice(-TRANSCRIPT_CHARS);
    if (this.opened) this.writeEmitter.fire(styled);
    else this.pending.push(styled);
  }
}

/**
 * The editor's turn terminals: one per run, named after goal and agents, kept for reading after the
 * run ends (at most 10 runs; the oldest is forgotten, its terminal left to the user).
 */
export class TurnTerminals implements vscode.Disposable {
  private readonly runs: TurnTerminal[] = [];
  private readonly registration: vscode.Disposable;

  constructor() {
    // Hidden command for the integration tests: what each turn terminal showed, newest last.
    this.registration = vscode.commands.registerCommand('_loopx.turnTerminals.snapshot', () =>
      this.runs.map((run) => run.snapshot()),
    );
  }

  /** Opens the terminal of a new run on `goalId` by `agentIds`. */
  open(goalId: string, agentIds: readonly string[]): TurnTerminal {
    const run = new TurnTerminal(`LoopX: ${goalId} · ${agentIds.join(', ')}`);
    this.runs.push(run);
    if (this.runs.length > 10) this.runs.shift();
    run.terminal.show(true);
    return run;
  }

  dispose(): void {
    this.registration.dispose();
    for (const run of this.runs) run.dispose();
  }
}
