// Mocha reporter: the usual spec output, plus a JSON summary of the run written to
// $LOOPX_TEST_SUMMARY (when set) so scripts/test-all.mjs can count each tier's tests.
const Mocha = require('mocha');
const { writeFileSync } = require('node:fs');

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const failures = [];
    runner.on('fail', (test, err) => failures.push({ title: test.fullTitle(), message: String(err && err.message) }));
    runner.once('end', () => {
      const file = process.env.LOOPX_TEST_SUMMARY;
      if (!file) return;
      const s = runner.stats || {};
      writeFileSync(
        file,
        JSON.stringify({ passed: s.passes || 0, failed: s.failures || 0, pending: s.pending || 0, failures }, null, 2),
      );
    });
  }
}

module.exports = SummaryReporter;
