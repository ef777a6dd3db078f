import { accessSync, constants, statSync } from 'node:fs';
import { posix, win32 } from 'node:path';

/**
 * Whether the integrated terminals get LoopX for VS Code's `loopx` first on their PATH. Many users
 * also have the Python `loopx` installed, whose skills run commands this CLI does not have
 * (`loopx review-packet`, `loopx quota monitor-poll`): shadowing it would break them. So by default ours goes on
 * the PATH only where no other `loopx` is found; `LOOPX_CLI` always names ours. Pure (no `vscode`):
 * the unit tests run it on a temporary PATH.
 */

/** The values of the `loopx.terminal.cliOnPath` setting (package.json declares the same enum). */
export const CLI_ON_PATH_MODES = ['whenMissing', 'always', 'never'] as const;
export type CliOnPathMode = (typeof CLI_ON_PATH_MODES)[number];
export const DEFAULT_CLI_ON_PATH_MODE: CliOnPathMode = 'whenMissing';

/** The environment variable every integrated terminal gets: the absolute path of our launcher. */
export const LOOPX_CLI_VARIABLE = 'LOOPX_CLI';

/** A setting's value read strictly: anything but a known mode is the default. */
export function cliOnPathMode(value: unknown): CliOnPathMode {
  return CLI_ON_PATH_MODES.find((mode) => mode === value) ?? DEFAULT_CLI_ON_PATH_MODE;
}

/** The launcher's file name on a platform (`loopx.cmd` on Windows, `loopx` elsewhere). */
export function launcherFileName(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'loopx.cmd' : 'loopx';
}

export interface PathLookup {
  /** The PATH to search, as the terminals inherit it (the extension host's `process.env.PATH`). */
  path: string | undefined;
  /** Folders that do not count (our own launcher's folder, which a terminal may have passed on). */
  exclude: readonly string[];
  platform: NodeJS.Platform;
  /** Windows' executable extensions (`PATHEXT`); ignored elsewhere. */
  pathext?: string | undefined;
}

/** The file names a shell runs for `loopx`: `loopx`, or on Windows `loopx` plus each `PATHEXT` extension. */
export function loopxFileNames(platform: NodeJS.Platform, pathext: string | undefined): string[] {
  if (platform !== 'win32') return ['loopx'];
  return (pathext ?? '.COM;.EXE;.BAT;.CMD')
    .split(';')
    .filter((ext) => ext !== '')
    .map((ext) => `loopx${ext.toLowerCase()}`);
}

/**
 * The folders of a PATH value a shell searches for an installed command: split on the platform's
 * delimiter, Windows' quotes removed; empty and relative entries (the current folder to a shell)
 * are left out, an installed `loopx` does not live there.
 */
export function pathFolders(path: string | undefined, platform: NodeJS.Platform): string[] {
  const windows = platform === 'win32';
  const paths = windows ? win32 : posix;
  return (path ?? '')
    .split(windows ? ';' : ':')
    .map((entry) => entry.replace(/^"(.*)"$/, '$1'))
    .filter((dir) => dir !== '' && paths.isAbsolute(dir))
    .map((dir) => {
      // `C:\bin\` and `C:\bin` are one folder; a root (`/`, `C:\`) keeps its separator.
      const folder = paths.normalize(dir);
      return folder === paths.parse(folder).root ? folder : folder.replace(/[\\/]+$/, '');
    });
}

/** The first other `loopx` a shell would run from `lookup.path`, or undefined when there is none. */
export function findOtherLoopx(lookup: PathLookup): string | undefined {
  const windows = lookup.platform === 'win32';
  const paths = windows ? win32 : posix;
  const same = (a: string, b: string) => (windows ? a.toLowerCase() === b.toLowerCase() : a === b);
  const excluded = pathFolders(lookup.exclude.join(windows ? ';' : ':'), lookup.platform);
  const names = loopxFileNames(lookup.platform, lookup.pathext);
  for (const folder of pathFolders(lookup.path, lookup.platform)) {
    if (excluded.some((other) => same(other, folder))) continue;
    for (const name of names) {
      const file = paths.join(folder, name);
      if (isExecutableFile(file, windows)) return file;
    }
  }
  return undefined;
}

function isExecutableFile(file: string, windows: boolean): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    if (!windows) accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** What the terminals get: our folder first on PATH or not, and why (shown in the collection's description). */
export interface TerminalCliPlan {
  prependPath: boolean;
  reason: string;
}

/** The decision for a setting and the other `loopx` found on the PATH (undefined: none). */
export function terminalCliPlan(mode: CliOnPathMode, otherLoopx: string | undefined): TerminalCliPlan {
  if (mode === 'never') return { prependPath: false, reason: 'loopx.terminal.cliOnPath is "never"' };
  if (mode === 'always') return { prependPath: true, reason: 'loopx.terminal.cliOnPath is "always"' };
  return otherLoopx === undefined
    ? { prependPath: true, reason: 'no other loopx is on the PATH' }
    : { prependPath: false, reason: `another loopx comes first on the PATH (${otherLoopx})` };
}
