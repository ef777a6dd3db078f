import { registryPrivacy, type RegistryPrivacyOutput } from '../../core/ops/registry';
import type { RegistryPrivacyFailure, RegistryPrivacyReport } from '../../core/privacy/classify';
import { operationCommand } from '../operationHandler';

/** `loopx registry-privacy`: classifies the registry, lists private markers and publication risks. */
export const registryPrivacyCommand = operationCommand(registryPrivacy, (report: RegistryPrivacyOutput) =>
  'error' in report ? failureMarkdown(report) : reportMarkdown(report),
);

function failureMarkdown(report: RegistryPrivacyFailure): string {
  return ['# LoopX registry privacy', '', `- Registry: \`${report.path_label}\``, `- Result: ${report.error}`].join(
    '\n',
  );
}

function reportMarkdown(report: RegistryPrivacyReport): string {
  const git = report.git.available
    ? `${report.git.tracked ? 'tracked' : 'not tracked'}, ${report.git.ignored ? 'ignored' : 'not ignored'}`
    : 'unavailable (git missing or not a repository)';
  const lines = [
    '# LoopX registry privacy',
    '',
    `- Registry: \`${report.path_label}\` (absolute path not recorded)`,
    `- Classification: ${report.classification} (${report.boundary_kind})`,
    `- Private markers: ${report.private_marker_count}${report.private_markers_truncated ? ' (first 25 shown)' : ''}`,
    `- GitHub push allowed: ${report.github_push_allowed ? 'yes' : 'no'}; should be gitignored: ${report.should_be_gitignored ? 'yes' : 'no'}`,
    `- Git: ${git}`,
    `- Result: ${report.ok ? 'ok' : `${report.blocking_risks.length} blocking risk${report.blocking_risks.length === 1 ? '' : 's'}`}`,
  ];
  if (report.private_markers.length > 0) {
    lines.push(
      '',
      '## Private markers',
      '',
      ...report.private_markers.map((marker) => `- \`${marker.path}\`: ${marker.kind}`),
    );
  }
  if (report.risks.length > 0) {
    lines.push(
      '',
      '## Risks',
      '',
      ...report.risks.map((risk) => `- ${risk.severity}: ${risk.message} (\`${risk.code}\`)`),
    );
  }
  return lines.join('\n');
}
