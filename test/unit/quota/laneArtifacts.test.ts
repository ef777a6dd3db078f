import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  laneArtifactLooks,
  laneArtifactsExist,
  QUIET_FOLDER_MS,
  summarizeRunRows,
  type RunHistory,
} from '../../../src/core/quota/runHistory';
import type { RunIndexRow } from '../../../src/core/runtime/runIndex';

/** Three agent-lane runs with their records in `runs/` under the project. */
function laneHistory(dir: string): RunHistory {
  const rows: RunIndexRow[] = [];
  fs.mkdirSync(path.join(dir, 'runs'), { recursive: true });
  for (let i = 3; i >= 1; i--) {
    for (const ext of ['json', 'md']) fs.writeFileSync(path.join(dir, 'runs', `r${i}.${ext}`), ext);
    rows.push({
      generated_at: `2026-01-15T06:0${i}:00Z`,
      goal_id: 'g',
      agent_id: 'agent-a',
      progress_scope: 'agent_lane',
      classification: 'progress',
      json_path: `runs/r${i}.json`,
      markdown_path: `runs/r${i}.md`,
    } as RunIndexRow);
  }
  const history = summarizeRunRows(rows, dir);
  assert.equal(history.lane_artifacts.length, 3);
  return history;
}

describe("lane artifacts: checked on every use, a full check kept by its folders' stamps", () => {
  let dir = '';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-lane-artifacts-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  // Folders written just now are "racy"; a clock ahead of them lets the check be kept.
  const later = () => Date.now() + QUIET_FOLDER_MS + 1_000;

  it('keeps a check that found every file while the folder is unchanged, and notices a removed record', () => {
    const history = laneHistory(dir);
    let looked = laneArtifactLooks.files;
    assert.equal(laneArtifactsExist(history, dir, later()), true);
    assert.equal(laneArtifactLooks.files, looked + 6, 'the first look (all a CLI call makes) is the plain check');
    assert.equal(laneArtifactsExist(history, dir, later()), true); // the second is kept
    looked = laneArtifactLooks.files;
    assert.equal(laneArtifactsExist(history, dir, later()), true);
    assert.equal(laneArtifactLooks.files, looked, 'the kept check answered: no file looked at');
    fs.rmSync(path.join(dir, 'runs', 'r2.md'));
    assert.equal(laneArtifactsExist(history, dir, later()), false, 'the folder changed: every file looked at again');
    fs.writeFileSync(path.join(dir, 'runs', 'r2.md'), 'md');
    assert.equal(laneArtifactsExist(history, dir, later()), true);
  });

  it('a record renamed away is noticed too', () => {
    const history = laneHistory(dir);
    assert.equal(laneArtifactsExist(history, dir, later()), true);
    assert.equal(laneArtifactsExist(history, dir, later()), true);
    fs.renameSync(path.join(dir, 'runs', 'r1.json'), path.join(dir, 'r1.json'));
    assert.equal(laneArtifactsExist(history, dir, later()), false);
  });

  it('does not keep a check of a folder changed within the quiet time, or of a symlinked record', () => {
    const history = laneHistory(dir);
    assert.equal(laneArtifactsExist(history, dir), true); // folders written just now
    let looked = laneArtifactLooks.files;
    assert.equal(laneArtifactsExist(history, dir), true);
    assert.equal(laneArtifactLooks.files, looked + 6, 'not kept: looked at every file again');

    // A record that is a symbolic link: its target can go without the folder changing.
    const target = path.join(dir, 'elsewhere.md');
    fs.writeFileSync(target, 'md');
    fs.rmSync(path.join(dir, 'runs', 'r3.md'));
    fs.symlinkSync(target, path.join(dir, 'runs', 'r3.md'));
    assert.equal(laneArtifactsExist(history, dir, later()), true);
    looked = laneArtifactLooks.files;
    fs.rmSync(target);
    assert.equal(laneArtifactsExist(history, dir, later()), false, 'the dangling link is found');
    assert.ok(laneArtifactLooks.files > looked);
  });

  it('a run without a record path is never sound', () => {
    const history = laneHistory(dir);
    const broken: RunHistory = { ...history, lane_artifacts: [...history.lane_artifacts, ['runs/r1.json', null]] };
    assert.equal(laneArtifactsExist(broken, dir, later()), false);
  });
});
