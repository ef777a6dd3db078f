import Mocha from 'mocha';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

interface TestResult {
  title: string;
  state: 'passed' | 'failed' | 'pending';
  error?: string;
}

/**
 * Runs every `*.test.js` beside `dir` with mocha inside the extension host and writes a JSON
 * summary to $LOOPX_TEST_SUMMARY for the driver (the exit code alone says too little).
 */
export function runMochaSuite(dir: string): Promise<void> {
  const mocha = new Mocha({
    ui: 'bdd',
    timeout: 60_000,
    color: false,
    reporter: 'spec',
    forbidOnly: true,
    forbidPending: true,
    // While iterating (set by the developer, never by the full run): only the tests whose title matches.
    ...(process.env['LOOPX_IT_GREP'] ? { grep: process.env['LOOPX_IT_GREP'] } : {}),
  });
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.test.js'))
    .sort())
    mocha.addFile(join(dir, file));
  const results: TestResult[] = [];
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      const summaryFile = process.env['LOOPX_TEST_SUMMARY'];
      if (summaryFile) {
        const count = (state: TestResult['state']): number => results.filter((r) => r.state === state).length;
        writeFileSync(
          summaryFile,
          JSON.stringify(
            { passed: count('passed'), failed: count('failed'), pending: count('pending'), results },
            null,
            2,
          ),
        );
      }
      if (failures > 0) reject(new Error(`${failures} test(s) failed`));
      else resolve();
    });
    runner.on('pass', (test) => results.push({ title: test.fullTitle(), state: 'passed' }));
    runner.on('fail', (test, error: Error) =>
      results.push({ title: test.fullTitle(), state: 'failed', error: `${error.message}\n${error.stack ?? ''}` }),
    );
    runner.on('pending', (test) => results.push({ title: test.fullTitle(), state: 'pending' }));
  });
}
