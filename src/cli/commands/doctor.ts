import { doctor, doctorMarkdown } from '../../core/ops/doctor';
import { operationCommand } from '../operationHandler';

/** `loopx doctor`: the setup's findings, each with its fix; exit 1 when one is an error. */
export const doctorCommand = operationCommand(doctor, doctorMarkdown);
