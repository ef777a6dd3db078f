import * as os from 'node:os';
import * as path from 'node:path';
import { quotaGoalOfRef } from '../../src/core/goal/ref';
import { goalOf as goalOfRegistry } from '../../src/core/ops/goalHandle';
import type { QuotaGoal } from '../../src/core/quota/goal';
import type { GoalRef } from '../../src/core/registry/goalRef';
import { registryProjectRoot, resolveRuntimeRoot } from '../../src/core/registry/locate';
import { readRegistrySync } from '../../src/core/registry/read';

/**
 * The goal handle a worker process passes the turn driver (the registry read once, now): its `GoalRef`,
 * with its quota view beside it for the tests that read the quota directly.
 */
export function goalRefOf(registryPath: string, goalId: string): GoalRef & QuotaGoal {
  const absolute = path.resolve(registryPath);
  const homeDir = os.homedir();
  const document = readRegistrySync(absolute);
  const ref = goalOfRegistry(
    {
      registryPath: absolute,
      source: 'flag',
      projectRoot: registryProjectRoot(absolute),
      runtimeRoot: resolveRuntimeRoot({ registryPath: absolute, registry: document, homeDir }),
      homeDir,
      document,
    },
    goalId,
  );
  return { ...ref, ...quotaGoalOfRef(ref) };
}
