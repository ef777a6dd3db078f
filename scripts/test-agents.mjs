// `npm run test:agents`: the field conformance tier (docs/agents-conformance.md). The real Claude Code, Codex
// and opencode CLIs, pinned in test/agents/support/agentClis.ts and installed on first use into .agent-clis/
// (or LOOPX_AGENT_CLI_CACHE), run LoopX turns against scripted local model servers, each scenario inside a
// loopback-only network namespace. Making one needs root (unshare -n) and iproute2 (ip link set lo up): where
// that is impossible the tier says so plainly and exits 0 with a "skipped" summary; under CI (CI set) it fails.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { npmChildEnv } from './npm-env.cjs';

const root = new URL('..', import.meta.url).pathname;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function namespaceUnavailableReason() {
  if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'making a network namespace needs root (unshare -n); CI runs as root';
  const probe = spawnSync(
    'unshare',
    ['--net', '--pid', '--fork', '--kill-child', '--mount-proc', 'sh', '-c', 'ip link set lo up'],
    {
      encoding: 'utf8',
    },
  );
  if (probe.error) return `cannot run unshare (${probe.error.message}); install util-linux`;
  if (probe.status !== 0)
    return `unshare -n / ip link set lo up failed: ${(probe.stderr || probe.stdout).trim()} (iproute2 installed?)`;
  return null;
}

const reason = namespaceUnavailableReason();
if (reason !== null) {
  const ci = Boolean(process.env.CI);
  console.log(`agents: ${ci ? 'CANNOT RUN' : 'skipped'}: ${reason}`);
  if (process.env.LOOPX_TEST_SUMMARY)
    writeFileSync(
      process.env.LOOPX_TEST_SUMMARY,
      JSON.stringify({ passed: 0, failed: 0, pending: 0, skipped: reason }),
    );
  process.exit(ci ? 1 : 0);
}

const run = (command, args) =>
  spawnSync(command, args, { cwd: root, stdio: 'inherit', env: npmChildEnv(process.env) }).status ?? 1;
if (run(npm, ['run', '-s', 'build']) !== 0) process.exit(1);
// One CLI at a time on a busy machine: LOOPX_AGENTS_ONLY=claudeCode|codex|opencode (a test file's name) and
// LOOPX_AGENTS_GREP=<pattern> (mocha --grep on the scenario titles).
const only = process.env.LOOPX_AGENTS_ONLY;
if (only !== undefined && !/^(claudeCode|codex|opencode)$/.test(only)) {
  console.error(`agents: LOOPX_AGENTS_ONLY=${only} is not one of claudeCode, codex, opencode`);
  process.exit(1);
}
const grep = process.env.LOOPX_AGENTS_GREP ? ['--grep', process.env.LOOPX_AGENTS_GREP] : [];
process.exit(run('npx', ['mocha', '--timeout', '300000', ...grep, `test/agents/${only ?? '**/*'}.test.ts`]));
