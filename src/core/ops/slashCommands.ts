import * as path from 'node:path';
import { z } from 'zod';
import { errorMessage, LoopxError } from '../errors';
import { expandHome } from '../registry/locate';
import { slashCatalog, type SlashCatalog } from '../slash/catalog';
import { installSlashCommands, parseSurfaces, uninstallSlashCommands, type SlashInstallResult } from '../slash/install';
import { defineOperation } from './operation';

/**
 * `slash-commands`: the slash-command catalog; with `install` / `uninstall` it writes or removes
 * the `/loopx` prompt files of terminal agents in the project (`dryRun` previews). Files without
 * LoopX's marker are never overwritten or removed.
 */

/** The marker that makes a prompt file LoopX's own (files without it are never touched). */
export { MANAGED_MARKER } from '../slash/install';

export type SlashCommandsOutput = SlashCatalog | SlashInstallResult;

export const slashCommands = defineOperation({
  key: 'slashCommands',
  args: z.strictObject({
    noLegacyAliases: z
      .boolean()
      .default(false)
      .meta({ flag: '--no-legacy-aliases' })
      .describe('leave out the /loop-global-* aliases'),
    install: z.boolean().default(false).describe('write the /loopx prompt files of terminal agents into the project'),
    uninstall: z
      .boolean()
      .default(false)
      .describe('remove the /loopx prompt files LoopX wrote (files without its marker are kept)'),
    surface: z
      .array(z.string())
      .optional()
      .meta({ placeholder: 'surface' })
      .describe(
        'claude-code, codex, opencode, copilot (VS Code prompt files) or all (commas allowed; default all: the first three)',
      ),
    project: z
      .string()
      .optional()
      .meta({ placeholder: 'dir' })
      .describe('the project folder to install into (default: the current folder)'),
    dryRun: z.boolean().default(false).describe('show what --install or --uninstall would do, write nothing'),
  }),
  applySwitch: { argument: 'dryRun', applyWhen: false },
  run: async (args, env): Promise<SlashCommandsOutput> => {
    if (args.install && args.uninstall) throw new LoopxError('usage', '--install and --uninstall exclude each other');
    const surfaceValues = args.surface ?? [];
    if (!args.install && !args.uninstall) {
      if (surfaceValues.length > 0 || args.dryRun || args.project !== undefined) {
        throw new LoopxError('usage', '--surface, --project and --dry-run go with --install or --uninstall');
      }
      return slashCatalog({ legacyAliases: !args.noLegacyAliases });
    }
    let surfaces;
    try {
      surfaces = parseSurfaces(surfaceValues);
    } catch (error) {
      throw new LoopxError('usage', errorMessage(error));
    }
    const projectRoot = path.resolve(env.cwd, expandHome(args.project ?? '.', env.homeDir));
    const request = { projectRoot, surfaces, dryRun: args.dryRun };
    return args.install ? installSlashCommands(request) : uninstallSlashCommands(request);
  },
});
