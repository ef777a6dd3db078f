import type { PendingBenchmark } from '../core/types';

/** Benchmarks of code being written now; each becomes one file in benchmarks/ when its code lands. */

export const reprojectionOneGoal: PendingBenchmark = {
  kind: 'pending',
  name: 'reprojection-one-goal',
  title: 'Incremental re-projection of one goal after a change',
  needs: 'an incremental status read model (re-project one goal when its state file or run index changes): edit one state file of L, time the re-projection',
  targets: [{ caseLabel: 'one goal of L', metric: 'median_ms', limit: 20, text: 'one-goal re-projection under 20 ms' }],
};

export const extensionActivation: PendingBenchmark = {
  kind: 'pending',
  name: 'extension-activation',
  title: 'Extension activation and view population in VS Code',
  needs: 'a timing hook in the real VS Code host run (test/support/vscodeHost.ts): time activate() and until the Goals view lists every goal of M and L',
};
