import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultStateFile } from '../../src/core/registry/bootstrap';
import { runIndexPath } from '../../src/core/runtime/layout';
import type { GeneratedWorkspace } from '../workspace/generate';

/**
 * The files of a generated workspace, located by string joins alone (the generator's fixed
 * layout), so the raw-limit baselines use none of the logic they are compared with.
 */
export function stateFiles(workspace: GeneratedWorkspace): string[] {
  return workspace.goalIds.map((goalId) => path.join(workspace.root, defaultStateFile(goalId)));
}

export function runIndexFiles(workspace: GeneratedWorkspace): string[] {
  return workspace.goalIds.map((goalId) => runIndexPath(workspace.runtimeRoot, goalId));
}

export function requireWorkspace(workspace: GeneratedWorkspace | null): GeneratedWorkspace {
  if (workspace === null) throw new Error('this benchmark needs a generated workspace');
  return workspace;
}

/** Reads each file: `.json` is JSON.parsed, `.jsonl` is JSON.parsed line by line, anything else is read as text. */
export async function rawRead(files: readonly string[]): Promise<number> {
  let values = 0;
  for (const file of files) {
    const text = await fs.promises.readFile(file, 'utf8');
    if (file.endsWith('.jsonl')) {
      for (const line of text.split('\n')) {
        if (line !== '') {
          JSON.parse(line);
          values++;
        }
      }
    } else if (file.endsWith('.json')) {
      JSON.parse(text);
      values++;
    } else {
      values += text.length > 0 ? 1 : 0;
    }
  }
  return values;
}

/** Writes the list of files for a raw-read child process and returns the list file's path. */
export function writeFileList(tmpDir: string, files: readonly string[]): string {
  const listFile = path.join(tmpDir, `files-${files.length}.txt`);
  fs.writeFileSync(listFile, files.join('\n'));
  return listFile;
}
