import { runMochaSuite } from '../mochaRunner';

export function run(): Promise<void> {
  return runMochaSuite(__dirname);
}
