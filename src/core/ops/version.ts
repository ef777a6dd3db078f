import { z } from 'zod';
import { LOOPX_VERSION } from '../version';
import { defineOperation } from './operation';

/** `version`: the installed LoopX version, in the original's `loopx_version_v0` shape (`loopx --version` prints the same line). */

export interface VersionResult {
  ok: true;
  schema_version: 'loopx_version_v0';
  name: 'loopx';
  version: string;
}

export const version = defineOperation({
  key: 'version',
  args: z.strictObject({}),
  run: (): Promise<VersionResult> =>
    Promise.resolve({ ok: true, schema_version: 'loopx_version_v0', name: 'loopx', version: LOOPX_VERSION }),
});
