import { z } from 'zod';
import { registeredAgentsForGoal } from '../registry/agentIds';
import { LOOPX_ERROR_CODES } from '../errorCodes';
import { errorMessage, isLoopxError } from '../errors';
import { registryProjectRoot, resolveRuntimeRoot, resolveStateFile } from '../registry/locate';
import { GoalLoader } from '../goal/loader';
import { registryGoals } from '../registry/read';
import { NormalizedQuotaSchema, normalizeQuota } from '../registry/schema';

/**
 * One goal as the editor's rows and the extension API show it (`LoopxGoal`, `listGoals`): a view of the registry
 * entry for the surfaces, made here in the operations layer from the registry as read. Code below `ops/` takes the
 * `GoalRef` instead (issue 31: one goal type below the operations).
 */
export const GoalSummarySchema = z.object({
  goalId: z.string(),
  displayName: z.string(),
  status: z.string(),
  domain: z.string().nullable(),
  registryPath: z.string(),
  projectRoot: z.string(),
  runtimeRoot: z.string(),
  stateFile: z.string().nullable(),
  agents: z.array(z.string()),
  quota: NormalizedQuotaSchema,
});
export type GoalSummary = z.infer<typeof GoalSummarySchema>;

export const RegistryLoadErrorSchema = z.object({
  code: z.enum(LOOPX_ERROR_CODES),
  message: z.string(),
  line: z.number().optional(),
  column: z.number().optional(),
});

/** The goals of one registry file, or why they could not be read (the file is never touched). */
export type RegistrySnapshot =
  | { registryPath: string; exists: boolean; ok: true; goals: GoalSummary[] }
  | { registryPath: string; exists: true; ok: false; error: z.infer<typeof RegistryLoadErrorSchema> };

export async function loadRegistrySnapshot(
  registryPath: string,
  options: { homeDir: string; runtimeRootOverride?: string },
): Promise<RegistrySnapshot> {
  let registry: Record<string, unknown>;
  try {
    registry = await new GoalLoader().registry(registryPath);
  } catch (error) {
    const details = isLoopxError(error) ? error.details : {};
    const line = typeof details['line'] === 'number' ? details['line'] : undefined;
    const column = typeof details['column'] === 'number' ? details['column'] : undefined;
    return {
      registryPath,
      exists: true,
      ok: false,
      error: {
        code: isLoopxError(error) ? error.code : 'registry_unreadable',
        message: errorMessage(error),
        ...(line !== undefined ? { line } : {}),
        ...(column !== undefined ? { column } : {}),
      },
    };
  }
  const exists = Object.keys(registry).length > 0;
  const projectRoot = registryProjectRoot(registryPath);
  const runtimeRoot = resolveRuntimeRoot({
    registryPath,
    registry,
    override: options.runtimeRootOverride,
    homeDir: options.homeDir,
  });
  const goals = registryGoals(registry).map((goal): GoalSummary => {
    const raw = goal as Record<string, unknown>;
    const text = (key: string): string | null =>
      typeof raw[key] === 'string' && raw[key] !== '' ? (raw[key] as string) : null;
    return {
      goalId: goal.id,
      displayName: text('display_name') ?? goal.id,
      status: text('status') ?? 'unknown',
      domain: text('domain'),
      registryPath,
      projectRoot,
      runtimeRoot,
      stateFile: resolveStateFile(goal, options.homeDir),
      agents: registeredAgentsForGoal(raw),
      quota: normalizeQuota(goal),
    };
  });
  return { registryPath, exists, ok: true, goals };
}
