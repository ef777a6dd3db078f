import * as fs from 'node:fs';
import * as path from 'node:path';
import { readRunIndex, readRunIndexSync, type RunIndexRead } from '../runtime/runIndex';
import type { FileStamp } from './files';
import type { PersistentCache } from './persistentCache';
import {
  latestReadinessOfRows,
  REPORT_SAMPLE_LIMIT,
  reportFactsOfRows,
  type GoalReportFacts,
  type ReadinessEvent,
} from './runSample';

/**
 * The status reports' reads of run indexes (runSample.ts): a goal's facts from the rows status already holds, the
 * persistent cache's kept facts, or (neither) one read of its index; and what the full readiness scan adds beyond the
 * registry's goals: the runtime's release ledger and goal folders the registry does not list.
 */

const factsOfRead = new WeakMap<RunIndexRead, GoalReportFacts>();

function fromRead(read: RunIndexRead | null, goalId: string, projectRoot: string, limit: number): GoalReportFacts {
  if (read === null) return reportFactsOfRows([], goalId, projectRoot, limit);
  const kept = factsOfRead.get(read);
  if (kept !== undefined && kept.limit === limit) return kept;
  const facts = reportFactsOfRows(read.rows, goalId, projectRoot, limit);
  factsOfRead.set(read, facts);
  return facts;
}

/** Whether kept facts answer for `limit` runs (cut at `limit` or more, or holding every run). */
function covers(facts: GoalReportFacts, limit: number): boolean {
  return facts.limit >= limit || facts.sample.length < facts.limit;
}

export async function goalReportFacts(input: {
  goalId: string;
  indexFile: string;
  projectRoot: string;
  /** The index's stamp as status took it (undefined: not taken). */
  stamp: FileStamp | null | undefined;
  /** The rows status holds (undefined: none held; null: no index). */
  held: RunIndexRead | null | undefined;
  /** Facts the persistent cache handed with the index's digest. */
  kept: GoalReportFacts | undefined;
  disk: PersistentCache | undefined;
  limit: number;
}): Promise<GoalReportFacts> {
  const { goalId, indexFile, projectRoot, limit } = input;
  if (input.held !== undefined) return fromRead(input.held, goalId, projectRoot, limit);
  if (input.kept !== undefined && covers(input.kept, limit)) return input.kept;
  let read: RunIndexRead | null;
  try {
    read = await readRunIndex(indexFile, { projectRoot, artifactChecks: limit });
  } catch {
    read = null;
  }
  const facts = fromRead(read !== null && read.exists ? read : null, goalId, projectRoot, limit);
  if (input.disk !== undefined && input.stamp !== undefined && limit === REPORT_SAMPLE_LIMIT)
    input.disk.setReportFacts(indexFile, input.stamp, facts);
  return facts;
}

export interface ReadinessExtras {
  goalsDirExists: boolean;
  releaseLedgerExists: boolean;
  release: ReadinessEvent | null;
  /** Goal folders with a run index that status did not load (not in the registry, or filtered out). */
  others: Map<string, ReadinessEvent | null>;
}

/** The release ledger, and the goal folders of `runtimeRoot/goals` not in `loaded` (read once each). */
export function readinessExtras(
  runtimeRoot: string,
  projectRoot: string,
  loaded: ReadonlySet<string>,
): ReadinessExtras {
  const goalsDir = path.join(runtimeRoot, 'goals');
  const ledger = path.join(runtimeRoot, 'release', 'promotion-readiness', 'runs', 'index.jsonl');
  let releaseLedgerExists = false;
  try {
    releaseLedgerExists = fs.statSync(ledger).isFile();
  } catch {
    releaseLedgerExists = false;
  }
  const rowsOf = (file: string): RunIndexRead['rows'] => {
    try {
      return readRunIndexSync(file, { projectRoot, artifactChecks: 0 }).rows;
    } catch {
      return [];
    }
  };
  const release = releaseLedgerExists ? latestReadinessOfRows(rowsOf(ledger), null, projectRoot) : null;
  const others = new Map<string, ReadinessEvent | null>();
  let names: string[] = [];
  let goalsDirExists = false;
  try {
    names = fs.readdirSync(goalsDir);
    goalsDirExists = true;
  } catch {
    goalsDirExists = fs.existsSync(goalsDir);
  }
  for (const name of names) {
    if (loaded.has(name)) continue;
    const index = path.join(goalsDir, name, 'runs', 'index.jsonl');
    if (!fs.existsSync(index)) continue;
    others.set(name, latestReadinessOfRows(rowsOf(index), name, projectRoot));
  }
  return { goalsDirExists, releaseLedgerExists, release, others };
}
