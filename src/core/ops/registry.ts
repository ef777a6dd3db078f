import { z } from 'zod';
import { inspectRegistryPrivacy, type RegistryPrivacyFailure, type RegistryPrivacyReport } from '../privacy/classify';
import { validateRegistryFile, type MissingRegistry, type RegistryValidation } from '../registry/validate';
import { locateRegistryOf } from './goalHandle';
import { defineOperation } from './operation';

/**
 * The registry's own checks: `registry` validates it and echoes its goals; `registry-privacy`
 * classifies it and lists private markers and publication risks. Both answer a missing registry
 * with `ok:false` in the result rather than an error.
 */

export type RegistryValidationOutput = RegistryValidation | MissingRegistry;

export const validateRegistry = defineOperation({
  key: 'validateRegistry',
  args: z.strictObject({}),
  run: async (_args, env): Promise<RegistryValidationOutput> =>
    validateRegistryFile(locateRegistryOf(env).path, { homeDir: env.homeDir }),
});

export type RegistryPrivacyOutput = RegistryPrivacyReport | RegistryPrivacyFailure;

export const registryPrivacy = defineOperation({
  key: 'registryPrivacy',
  args: z.strictObject({
    requireGitignored: z.boolean().default(false).describe('fail unless git confirms the registry is ignored'),
    requireNotTracked: z.boolean().default(false).describe('fail when git tracks the registry'),
  }),
  run: async (args, env): Promise<RegistryPrivacyOutput> =>
    inspectRegistryPrivacy(
      locateRegistryOf(env).path,
      { requireGitignored: args.requireGitignored, requireNotTracked: args.requireNotTracked },
      { env: env.env },
    ),
});
