import { version } from '../../core/ops/version';
import { operationCommand } from '../operationHandler';

/** `loopx version`: the original's spelling of `loopx --version`, the same line (`loopx 0.1.0`). */
export const versionCommand = operationCommand(version, (result) => `${result.name} ${result.version}`);
