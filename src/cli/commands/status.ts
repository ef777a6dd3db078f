import { status, statusMarkdown } from '../../core/ops/status';
import { operationCommand } from '../operationHandler';

/** `loopx status`: the status operation; exits 0 even with warnings, fails only when the registry cannot be read. */
export const statusCommand = operationCommand(status, statusMarkdown);
