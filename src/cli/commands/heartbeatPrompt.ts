import { heartbeatPrompt } from '../../core/ops/heartbeat';
import { operationCommand } from '../operationHandler';

/**
 * `loopx heartbeat-prompt --goal-id G --agent-id A [--thin|--brief|--compact|--full]`: the
 * heartbeat prompt operation; the Markdown is the prompt itself.
 */
export const heartbeatPromptCommand = operationCommand(heartbeatPrompt, (result) => result.prompt);
