import { z } from 'zod';
import { collectDoctorFindings, type DoctorFinding } from '../doctor/checks';
import { systemProbe } from '../doctor/probe';
import { DEFAULT_STATUS_PORT } from '../server/statusServer';
import { locateRegistryOf } from './goalHandle';
import { defineOperation } from './operation';

export {
  detectAgentClis,
  editorFindings,
  statusServerFinding,
  type DoctorFinding,
  type FindingLevel,
} from '../doctor/checks';
export { systemProbe } from '../doctor/probe';

/**
 * `doctor` ("Doctor"): the original's first command, for this port: is this machine ready to run
 * turns, and if not, what to do. Findings carry `id`, `level` (ok, warn, error), `message` and `fix`,
 * beside the original's check fields (`ok`, `required`, `detail`); `ok` is false (exit 1) when any
 * finding is an error.
 */

export interface DoctorResult {
  ok: boolean;
  schema_version: 'loopx_doctor_v0';
  /** The original's: `standard` (this port has no deep mode). */
  mode: 'standard';
  agent_type: null;
  node: { executable: string; version: string };
  path: { loopx: string | null };
  registry: string;
  runtime_root: string | null;
  goals: string[];
  summary: Record<'ok' | 'warn' | 'error', number>;
  /** The findings, in the original's `checks` list. */
  checks: DoctorFinding[];
  /** The fix of the first error (else of the first warning), as the original's one `fix` line; null when all is well. */
  fix: string | null;
}

export const doctor = defineOperation({
  key: 'doctor',
  args: z.strictObject({
    statusPort: z
      .number()
      .int()
      .min(0)
      .max(65535)
      .optional()
      .meta({ placeholder: 'port' })
      .describe(`the port loopx serve-status would use (default ${DEFAULT_STATUS_PORT}; 0 skips the check)`),
  }),
  run: async (args, env): Promise<DoctorResult> => {
    const located = locateRegistryOf(env);
    const port = args.statusPort ?? DEFAULT_STATUS_PORT;
    const facts = await collectDoctorFindings({
      registryPath: located.path,
      registryExists: located.exists,
      env: env.env,
      homeDir: env.homeDir,
      runtimeRootOverride: env.runtimeRootOverride,
      nodeVersion: process.versions.node,
      probe: systemProbe(env.env, env.cwd),
      statusPort: port === 0 ? null : port,
    });
    return doctorResult(facts.findings, {
      registry: located.path,
      runtimeRoot: facts.runtimeRoot,
      goals: facts.goals,
      loopx: env.env['LOOPX_CLI'] ?? null,
    });
  },
});

/** The result for a list of findings (the editor calls it again after adding its own). */
export function doctorResult(
  checks: DoctorFinding[],
  where: { registry: string; runtimeRoot: string | null; goals: string[]; loopx: string | null },
): DoctorResult {
  const summary = { ok: 0, warn: 0, error: 0 };
  for (const check of checks) summary[check.level]++;
  const firstFix =
    checks.find((c) => c.level === 'error' && c.fix !== null)?.fix ??
    checks.find((c) => c.level === 'warn' && c.fix !== null)?.fix ??
    null;
  return {
    ok: summary.error === 0,
    schema_version: 'loopx_doctor_v0',
    mode: 'standard',
    agent_type: null,
    node: { executable: process.execPath, version: process.versions.node },
    path: { loopx: where.loopx },
    registry: where.registry,
    runtime_root: where.runtimeRoot,
    goals: where.goals,
    summary,
    checks,
    fix: firstFix,
  };
}

const LEVEL_MARK: Record<DoctorFinding['level'], string> = { ok: 'ok', warn: 'WARN', error: 'ERROR' };

/** The Markdown of a doctor result (the CLI prints it; the palette shows it in the LoopX output). */
export function doctorMarkdown(result: DoctorResult): string {
  const lines = [
    '# LoopX doctor',
    '',
    `${result.summary.error} error(s), ${result.summary.warn} warning(s), ${result.summary.ok} ok.`,
    '',
    `- Node ${result.node.version}`,
    `- Registry: \`${result.registry}\``,
    `- Runtime root: \`${result.runtime_root ?? '(none)'}\``,
    '',
  ];
  for (const check of result.checks) {
    lines.push(`- **${LEVEL_MARK[check.level]}** \`${check.id}\`: ${check.message}`);
    if (check.level !== 'ok' && check.fix !== null) lines.push(`  - Fix: ${check.fix}`);
  }
  return lines.join('\n');
}
