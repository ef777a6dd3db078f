/**
 * Invariants of a LoopX workspace, checked from the files on disk after a crash and a resume:
 * files parse, no spend or run row is lost or duplicated, quota and budgets hold, every turn is
 * finished, no reservation and no lock is left for a dead holder.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseStateDocument } from '../../src/core/state/document';
import { listFiles, type Workspace } from './common';

export interface Violation {
  /** A stable name, used by the known-failures list. */
  check: string;
  detail: string;
}

interface Row {
  classification?: string;
  json_path?: string;
  turn_instance_id?: string;
  settlement_identity?: { effect_id?: string };
  slots?: number;
  usage?: { cost_usd?: number; tokens?: number };
}

function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

export interface CheckOptions {
  /** Processes of this case still alive (their locks are not stale). Normally none. */
  livePids?: ReadonlySet<number>;
  /** Budgets the case configured (the registry may have been edited since). */
  maxCostUsd?: number | undefined;
  allowedSlots?: number | undefined;
}

export function checkWorkspace(ws: Workspace, options: CheckOptions = {}): Violation[] {
  const v: Violation[] = [];
  const add = (check: string, detail: string): void => {
    v.push({ check, detail });
  };
  const rel = (p: string): string => path.relative(ws.root, p);

  // 1. Files parse.
  let registry = null as { goals?: Record<string, unknown>[] } | null;
  try {
    registry = JSON.parse(fs.readFileSync(ws.registryPath, 'utf8')) as typeof registry;
  } catch (e) {
    add('file_parse', `registry.json: ${String(e)}`);
  }
  try {
    const doc = parseStateDocument(fs.readFileSync(ws.statePath, 'utf8'));
    if (doc.issues.length > 0) add('file_parse', `state file issues: ${JSON.stringify(doc.issues).slice(0, 300)}`);
    const ids = doc.todos.map((t) => t.todoId);
    const dup = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (dup.length > 0) add('duplicate_todo', `todo ids twice in the state file: ${dup.join(', ')}`);
  } catch (e) {
    add('file_parse', `state file: ${String(e)}`);
  }
  for (const file of listFiles(ws.runtimeGoalDir, (n) => n.endsWith('.json') && !n.startsWith('.'))) {
    try {
      JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      add('file_parse', `${rel(file)}: ${String(e)}`);
    }
  }
  const rows: Row[] = [];
  if (fs.existsSync(ws.indexPath)) {
    const lines = fs.readFileSync(ws.indexPath, 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        rows.push(JSON.parse(line) as Row);
      } catch {
        // A torn line from a killed append is documented and skipped by readers, but only a last
        // line may be torn: the next append starts a fresh line.
        const isLast = lines.slice(i + 1).every((l) => l.trim() === '');
        if (!isLast) add('index_torn_line', `index.jsonl line ${i + 1} does not parse: ${line.slice(0, 80)}`);
      }
    });
  }

  // 2. Rows: no duplicate, each points at its artifact.
  const seenPaths = new Set<string>();
  for (const row of rows) {
    if (row.json_path === undefined) continue;
    if (seenPaths.has(row.json_path)) add('duplicate_row', `two index rows share ${row.json_path}`);
    seenPaths.add(row.json_path);
    if (!fs.existsSync(path.join(ws.root, row.json_path)))
      add('lost_row', `index row without its artifact ${row.json_path}`);
  }
  const spends = rows.filter((r) => r.classification === 'quota_slot_spent');
  const voids = rows.filter((r) => (r.classification ?? '').includes('void'));
  const spendIds = spends.map((r) => r.settlement_identity?.effect_id ?? `?${r.json_path}`);
  for (const [i, id] of spendIds.entries())
    if (spendIds.indexOf(id) !== i) add('duplicate_spend', `two spends for ${id}`);

  // 3. Journals: finished, with their spend and their run row.
  const journalDir = path.join(ws.runtimeGoalDir, 'turns');
  const journals: Record<string, unknown>[] = [];
  if (fs.existsSync(journalDir)) {
    for (const name of fs.readdirSync(journalDir)) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      try {
        journals.push(JSON.parse(fs.readFileSync(path.join(journalDir, name), 'utf8')) as Record<string, unknown>);
      } catch {
        // reported above as file_parse
      }
    }
  }
  const journalEffects = new Set<string>();
  for (const j of journals) {
    const effect = (j['settlement_identity'] as { effect_id?: string } | undefined)?.effect_id ?? '';
    journalEffects.add(effect);
    const status = String(j['status']);
    if (status === 'in_progress') add('journal_unfinished', `turn ${effect} still in_progress after the resume`);
    const phases = (j['phases'] ?? {}) as Record<string, Record<string, unknown> | undefined>;
    const spent = phases['quota_spend'] !== undefined;
    const count = spendIds.filter((id) => id === effect).length;
    if (spent && count === 0) add('lost_spend', `turn ${effect} journaled its spend but index.jsonl has none`);
    if (
      status === 'committed' &&
      String((j['receipt'] as { result_kind?: string } | undefined)?.result_kind ?? '') === 'validated_completion'
    ) {
      const tid = String(j['turn_instance_id']);
      const delivered = rows.filter((r) => r.classification === 'validated_completion' && r.turn_instance_id === tid);
      if (delivered.length !== 1)
        add(
          delivered.length === 0 ? 'lost_row' : 'duplicate_row',
          `turn ${effect} has ${delivered.length} validated_completion rows`,
        );
      if (count !== 1)
        add(count === 0 ? 'lost_spend' : 'duplicate_spend', `committed turn ${effect} has ${count} spends`);
    }
    if (!spent && status !== 'committed' && count > 0 && voids.length === 0)
      add('orphan_spend', `turn ${effect} (${status}) has a spend but its journal none`);
  }
  for (const r of spends) {
    const id = r.settlement_identity?.effect_id;
    if (r.turn_instance_id === 'turn-0001' || id === undefined) continue;
    if (!journalEffects.has(id)) add('orphan_spend', `spend ${id} belongs to no turn journal`);
  }

  // 4. Quota and budgets (every spend of the case is inside the 24 h window at the pinned clock).
  const goal = registry?.goals?.[0];
  const quota = (goal?.['quota'] ?? {}) as Record<string, number | undefined>;
  const allowed =
    options.allowedSlots ??
    (typeof quota['allowed_slots'] === 'number'
      ? quota['allowed_slots']
      : roundHalfEven(
          (((quota['window_hours'] ?? 24) * 60) / (quota['slot_minutes'] ?? 30)) * (quota['compute'] ?? 1),
        ));
  const slots = spends.reduce((n, r) => n + (typeof r.slots === 'number' ? r.slots : 1), 0);
  if (options.allowedSlots !== undefined && slots > allowed)
    add('quota_exceeded', `${slots} slots spent, ${allowed} allowed`);
  // The documented guarantee (docs/quota.md "Budgets: what is guaranteed"): every admission keeps
  // spent + reserved + its estimate within the limit, and a turn's spend is its real usage. So the
  // spent total may pass the limit only by what the turns' spends overran the estimates their
  // admissions held (recorded in each journal's `reservation.estimate`). A spend of a turn with no
  // recorded estimate, and the demo's older history, get no allowance.
  const maxCost = options.maxCostUsd;
  if (maxCost !== undefined) {
    const cost = spends.reduce((n, r) => n + (r.usage?.cost_usd ?? 0), 0);
    const estimates = new Map<string, number>();
    for (const j of journals) {
      const effect = (j['settlement_identity'] as { effect_id?: string } | undefined)?.effect_id;
      const held = (j['reservation'] as { estimate?: { cost_usd?: number } } | undefined)?.estimate?.cost_usd;
      if (effect !== undefined && typeof held === 'number') estimates.set(effect, held);
    }
    let overrun = 0;
    for (const r of spends) {
      const held = estimates.get(r.settlement_identity?.effect_id ?? '');
      if (held !== undefined) overrun += Math.max(0, (r.usage?.cost_usd ?? 0) - held);
    }
    if (cost > maxCost + overrun + 1e-9)
      add(
        'budget_exceeded',
        `cost ${cost.toFixed(6)} USD spent, max_cost_usd ${maxCost}, overruns of reserved estimates ${overrun.toFixed(6)}`,
      );
  }

  // 5. Reservations: none left once every turn is finished.
  if (fs.existsSync(ws.reservationsPath)) {
    try {
      const file = JSON.parse(fs.readFileSync(ws.reservationsPath, 'utf8')) as { reservations?: unknown[] };
      const open = journals.filter((j) => j['status'] === 'in_progress').length;
      const left = (file.reservations ?? []).length;
      if (left > open)
        add('reservation_leftover', `${left} reservation(s) left in quota-reservations.json, ${open} turn(s) running`);
    } catch {
      // reported as file_parse
    }
  }

  // 6. Locks: none held by a dead process.
  for (const lock of listFiles(ws.root, (n) => n.endsWith('.loopx-lock') || n.endsWith('.loopx-lock.reclaim'))) {
    let pid = -1;
    try {
      pid = Number((JSON.parse(fs.readFileSync(lock, 'utf8')) as { pid?: number }).pid ?? -1);
    } catch {
      // an empty record: its creator died between create and write
    }
    if (options.livePids?.has(pid) === true) continue;
    add('stale_lock', `${rel(lock)} left by pid ${pid} (dead)`);
  }
  return v;
}
