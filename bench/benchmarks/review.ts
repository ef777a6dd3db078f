import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedClock } from '../../src/core/clock';
import { reviewList } from '../../src/core/ops/review';
import { runOperation } from '../../src/core/ops/run';
import { recordTurnBase, recordTurnHead } from '../../src/core/snapshots/gitSnapshot';
import { fixedCase } from '../core/cases';
import type { BenchContext, RunnableBenchmark } from '../core/types';

/**
 * The review queue's costs (docs/review.md): the snapshots a turn adds (its base at the start, its
 * head at the writeback, with the changed files), on a copy of this repository and on a generated
 * 10,000-file tree, with a warm git index; and the Review view's fill (`review list`) with 1,000
 * unreviewed turns.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
};
const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd, encoding: 'utf8', env: GIT_ENV, maxBuffer: 64 * 1024 * 1024 });

const THIS_REPOSITORY = 'this repository';
const TEN_THOUSAND_FILES = '10,000 files';

/** A repository to snapshot: a clone of this one (its tracked files) or a generated 10,000-file tree; index warm. */
function snapshotRepository(ctx: BenchContext): string {
  const repo = path.join(ctx.tmpDir, 'repo');
  if (ctx.caseLabel === THIS_REPOSITORY) {
    git(ctx.tmpDir, 'clone', '-q', '--no-hardlinks', ROOT, repo);
    git(repo, 'config', 'gc.auto', '0');
  } else {
    for (let d = 0; d < 100; d++) {
      const dir = path.join(repo, `src${d}`);
      fs.mkdirSync(dir, { recursive: true });
      for (let f = 0; f < 100; f++)
        fs.writeFileSync(path.join(dir, `file${f}.ts`), `export const v${d}_${f} = ${d * 100 + f};\n`.repeat(20));
    }
    git(repo, 'init', '-q', '-b', 'main');
    // No background gc: it would still write into the folder while the case removes it.
    git(repo, 'config', 'gc.auto', '0');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'generated');
  }
  git(repo, 'status', '--porcelain'); // warms the index's stat cache
  return repo;
}

export const turnSnapshot: RunnableBenchmark = {
  kind: 'in-process',
  name: 'turn-snapshot',
  title: 'Snapshot cost per turn (base + head)',
  description:
    "what snapshots add to one turn: recordTurnBase (private index copy, git add -A, write-tree, commit-tree, two refs) and recordTurnHead (the same, plus the diff of base and head) after an agent edits one file; the user's index is warm",
  baselineDescription: 'git status --porcelain on the same tree (git looking at the working tree once)',
  cases: [fixedCase(THIS_REPOSITORY, null, 10, 1), fixedCase(TEN_THOUSAND_FILES, null, 10, 1)],
  unitLabel: 'files',
  units: () => 0,
  targets: [
    { caseLabel: THIS_REPOSITORY, metric: 'median_ms', limit: 50, text: '≤ 50 ms added per turn (issue 32)' },
    { caseLabel: TEN_THOUSAND_FILES, metric: 'median_ms', limit: 50, text: '≤ 50 ms added per turn (issue 32)' },
  ],
  prepare: async (ctx) => {
    const repo = snapshotRepository(ctx);
    let n = 0;
    const edited = path.join(repo, 'bench-edited.txt');
    return {
      run: async () => {
        const turn = `bench-${n++}`;
        if ((await recordTurnBase(repo, 'bench', turn)) === null) throw new Error('no base snapshot');
        fs.writeFileSync(edited, `edited by turn ${turn}\n`);
        const snap = await recordTurnHead(repo, 'bench', turn);
        if (snap?.changed?.length !== 1) throw new Error(`expected one changed file, got ${JSON.stringify(snap)}`);
      },
      verify: () =>
        Promise.resolve(`${git(repo, 'ls-files').split('\n').length - 1} tracked files; user index untouched`),
    };
  },
  prepareBaseline: async (ctx) => {
    const repo = snapshotRepository(ctx);
    return {
      run: () => {
        git(repo, 'status', '--porcelain');
        return Promise.resolve();
      },
    };
  },
};

const FILL_TURNS = 1000;

/** A registry with one goal whose run index holds 1,000 turns with snapshots (and their records). */
function thousandTurns(ctx: BenchContext): string {
  const project = path.join(ctx.tmpDir, 'project');
  const runs = path.join(project, '.loopx', 'runtime', 'goals', 'g', 'runs');
  fs.mkdirSync(runs, { recursive: true });
  fs.writeFileSync(
    path.join(project, '.loopx', 'registry.json'),
    JSON.stringify({
      common_runtime_root: '.loopx/runtime',
      goals: [{ id: 'g', status: 'active', repo: project, state_file: 'STATE.md' }],
    }),
  );
  const rows: string[] = [];
  for (let i = 0; i < FILL_TURNS; i++) {
    const generatedAt = `2026-12-03T${String(Math.floor(i / 60) % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00+00:00-${i}`;
    const hex = (seed: number) => (seed.toString(16).padStart(8, '0') + 'a'.repeat(32)).slice(0, 40);
    const snapshot = {
      base: hex(i * 2),
      head: hex(i * 2 + 1),
      changed: [
        { path: `src/file${i}.ts`, status: 'modified' },
        { path: `test/file${i}.test.ts`, status: 'added' },
      ],
    };
    const record = {
      generated_at: generatedAt,
      goal_id: 'g',
      classification: 'validated_progress',
      agent_id: `agent-${i % 4}`,
      todo_id: `todo_${i}`,
      turn_instance_id: `turn-${i}`,
      summary: `turn ${i}`,
      validation: { status: 'passed', command: ['npm', 'test'], exit_code: 0 },
      usage: { input_tokens: 1000, output_tokens: 200, cost_usd: 0.05, duration_ms: 30000 },
      snapshot,
    };
    fs.writeFileSync(path.join(runs, `r${i}.json`), JSON.stringify(record));
    rows.push(
      JSON.stringify({
        generated_at: generatedAt,
        goal_id: 'g',
        classification: 'validated_progress',
        recommended_action: 'next',
        health_check: 'ok',
        json_path: `.loopx/runtime/goals/g/runs/r${i}.json`,
        markdown_path: `.loopx/runtime/goals/g/runs/r${i}.md`,
        agent_id: record.agent_id,
        todo_id: record.todo_id,
        turn_instance_id: record.turn_instance_id,
        snapshot,
      }),
    );
  }
  fs.writeFileSync(path.join(runs, 'index.jsonl'), `${rows.join('\n')}\n`);
  return project;
}

export const reviewViewFill: RunnableBenchmark = {
  kind: 'in-process',
  name: 'review-view-fill',
  title: 'Review view fill with 1,000 unreviewed turns',
  description:
    'review list (what the Review view runs to fill): read the run index, keep the rows with a snapshot, read each turn record (validation, cost, gate), sort newest first',
  baselineDescription: 'read index.jsonl and the 1,000 record files, JSON.parse each',
  cases: [fixedCase('1,000 turns', null, 10, 1)],
  unitLabel: 'turns',
  units: () => FILL_TURNS,
  targets: [{ caseLabel: '1,000 turns', metric: 'median_ms', limit: 300, text: '≤ 300 ms (issue 32)' }],
  prepare: async (ctx) => {
    const project = thousandTurns(ctx);
    const env = {
      cwd: project,
      env: {},
      clock: fixedClock('2026-12-03T12:00:00Z'),
      homeDir: ctx.homeDir,
      registryPath: path.join(project, '.loopx', 'registry.json'),
    };
    return {
      run: async () => {
        const list = await runOperation(reviewList, {}, env);
        if (list.turns.length !== FILL_TURNS) throw new Error(`listed ${list.turns.length} turns`);
      },
    };
  },
  prepareBaseline: async (ctx) => {
    const project = thousandTurns(ctx);
    const runs = path.join(project, '.loopx', 'runtime', 'goals', 'g', 'runs');
    return {
      run: async () => {
        const text = await fs.promises.readFile(path.join(runs, 'index.jsonl'), 'utf8');
        const rows = text
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as { json_path: string });
        await Promise.all(
          rows.map(
            async (r) => JSON.parse(await fs.promises.readFile(path.join(project, r.json_path), 'utf8')) as unknown,
          ),
        );
      },
    };
  },
};
