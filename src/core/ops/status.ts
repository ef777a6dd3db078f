import { z } from 'zod';
import { isLoopxError, LoopxError } from '../errors';
import { redactCredentialsShared, scrubValue } from '../privacy/scrub';
import { registryProjectRoot } from '../registry/locate';
import { loadStatus, readStatusRegistry, type StatusPayload } from '../status/statusPayload';
import { persistentCacheEnabled } from '../goal/persistentCache';
import { statusQuotaSummaries } from '../status/statusQuota';
import { agentIdArg, goalIdArg, limitArg } from './common';
import { locateRegistryOf } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `status`: per goal the durable Next Action, what the latest run recommends, drift warnings with
 * the command that resolves each, todo counts, open gates, quota and the latest runs. Fails only
 * when the registry cannot be read; a goal that is not in it is a usage error.
 */
export const status = defineOperation({
  key: 'status',
  args: z.strictObject({
    goalId: goalIdArg('only this goal').optional(),
    agentId: agentIdArg(
      'look at the goals as this agent: its lane runs win, its own and unclaimed todos are listed',
    ).optional(),
    limit: limitArg('latest runs listed per goal (default 5)').optional(),
  }),
  run: async (args, env): Promise<StatusPayload> => {
    // readStatusRegistry says when the registry is missing.
    const registryPath = locateRegistryOf(env).path;
    try {
      // A state file may hold a secret someone else wrote; every display keeps paths but not secrets.
      const registry = await readStatusRegistry({
        registryPath,
        homeDir: env.homeDir,
        runtimeRootOverride: env.runtimeRootOverride ?? null,
      });
      const payload = await loadStatus({
        registry,
        goalId: args.goalId ?? null,
        agentId: args.agentId ?? null,
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
        persistentCache: persistentCacheEnabled(env.env),
        redact: true,
        quotaSummary: statusQuotaSummaries({
          registryPath,
          clock: env.clock,
          homeDir: env.homeDir,
        }),
      });
      // Items already redacted (this call or, through the persistent cache, an earlier one) are skipped.
      return redactCredentialsShared(payload);
    } catch (error) {
      if (isLoopxError(error, 'goal_not_found')) throw new LoopxError('usage', error.message, error.details);
      throw error;
    }
  },
});

/**
 * A status result as context for a language model (the `@loopx` chat participant's free questions):
 * the status server's scrubber applied, so no absolute path leaves the machine: paths under a workspace
 * folder or the registry's project become `<project>/…`, under the runtime root `<runtime>/…`, under the
 * home folder `<home>/…`, any other `<abs>/<name>`; credentials stay redacted.
 */
export function statusForLanguageModel(
  payload: StatusPayload,
  place: { workspaceFolders: readonly string[]; homeDir: string },
): StatusPayload {
  return scrubValue(payload, {
    projectRoots: [...place.workspaceFolders, registryProjectRoot(payload.registry)],
    homeDir: place.homeDir,
    runtimeRoot: payload.runtime_root,
  });
}

// The status result as Markdown for people (the CLI's default output, the palette's status preview, the
// chat's reply): a surface renders it through this export, not from core/status.
export { statusMarkdown } from '../status/statusMarkdown';
export type { StatusPayload } from '../status/statusPayload';
