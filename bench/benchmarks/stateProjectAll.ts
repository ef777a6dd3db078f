import * as fs from 'node:fs';
import { readStateText } from '../../src/core/state/stateFile';
import { parseStateDocument } from '../../src/core/state/document';
import { analyzeGates } from '../../src/core/state/gates';
import { projectStateDocument } from '../../src/core/state/structured';
import { FIVE_HUNDRED_TODOS, fixedCase, scalingCases } from '../core/cases';
import { rawRead, requireWorkspace, stateFiles } from '../core/files';
import type { RunnableBenchmark } from '../core/types';

const FIVE_HUNDRED = '1 goal × 500 todos';

export const stateProjectAll: RunnableBenchmark = {
  kind: 'in-process',
  name: 'state-project',
  title: 'Parse and project every state file',
  description: 'for every goal: readStateText, parseStateDocument, projectStateDocument and analyzeGates',
  baselineDescription: 'read the text of every state file',
  cases: [...scalingCases(), fixedCase(FIVE_HUNDRED, FIVE_HUNDRED_TODOS, 30, 3)],
  unitLabel: 'todos',
  units: (shape) => (shape === null ? 0 : shape.goals * shape.todos),
  targets: [
    {
      caseLabel: FIVE_HUNDRED,
      metric: 'median_ms',
      limit: 5,
      text: 'state file of 500 todos parsed + projected well under 5 ms',
    },
  ],
  prepare: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    const files = stateFiles(workspace);
    return {
      run: async () => {
        let todos = 0;
        for (const file of files) {
          const doc = parseStateDocument(await readStateText(file));
          const projection = projectStateDocument(doc);
          analyzeGates(doc);
          if (projection.diagnostics.error_count > 0)
            throw new Error(`${file}: ${JSON.stringify(projection.diagnostics.errors)}`);
          todos += projection.todos.user.total_count + projection.todos.agent.total_count;
        }
        if (todos !== workspace.counts.todos)
          throw new Error(`projected ${todos} todos, expected ${workspace.counts.todos}`);
      },
    };
  },
  prepareBaseline: async (ctx) => {
    const files = stateFiles(requireWorkspace(ctx.workspace));
    if (!files.every((file) => fs.existsSync(file))) throw new Error('a state file is missing');
    return {
      run: async () => {
        await rawRead(files);
      },
    };
  },
};
