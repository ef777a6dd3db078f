import { reduceAuthorityData } from '../privacy/authority';

/**
 * Projecting one project-registry goal into the global registry (docs/privacy.md): a deep copy whose
 * authority data is reduced to counts (the global registry is shared by every project on the
 * machine, so it must not hold another project's document names or topic maps), stamped with
 * where it came from and when.
 */
export function projectGoalForGlobal(
  goal: Record<string, unknown>,
  stamp: { sourceRegistry: string; syncedAt: string },
): Record<string, unknown> {
  const projected = reduceAuthorityData(structuredClone(goal));
  return { ...projected, source_registry: stamp.sourceRegistry, synced_at: stamp.syncedAt };
}
