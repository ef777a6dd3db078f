import {
  loadStatus,
  readStatusRegistry,
  type StatusPayload,
  type StatusRequest,
} from '../../src/core/status/statusPayload';

/**
 * `loopx status`'s two steps for tests: the registry read through the request's cache (`readStatusRegistry`),
 * then the payload projected from it (`loadStatus`).
 */
export async function loadStatusAt(
  request: Omit<StatusRequest, 'registry'> & {
    registryPath: string;
    homeDir: string;
    runtimeRootOverride?: string | null;
  },
): Promise<StatusPayload> {
  const { registryPath, homeDir, runtimeRootOverride, ...rest } = request;
  const registry = await readStatusRegistry(
    { registryPath, homeDir, runtimeRootOverride: runtimeRootOverride ?? null },
    rest.cache,
  );
  return loadStatus({ ...rest, registry });
}
