// Preloaded (`node --require`) into every process a benchmark spawns: on exit, writes the
// process's peak resident set size in kilobytes to $LOOPX_BENCH_RSS_FILE.
'use strict';
const fs = require('node:fs');

const target = process.env.LOOPX_BENCH_RSS_FILE;
if (target) {
  process.on('exit', () => {
    fs.writeFileSync(target, String(process.resourceUsage().maxRSS));
  });
}
