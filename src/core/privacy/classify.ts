import * as path from 'node:path';
import { z } from 'zod';
import { jsonErrorOffset, lineColumnAt } from '../fs/jsonFile';
import { GLOBAL_REGISTRY_FILE_NAME } from '../registry/locate';
import { probeGit, type GitProbe, type GitProbeOptions } from './gitProbe';
import { findPrivateMarkers, type PrivateMarker } from './markers';
import { readFileSafeSync } from '../fs/safeRead';

/**
 * Registry privacy classification (docs/privacy.md): what kind of registry a file is, whether it may be
 * published, and which risks that raises. The report names the file only by its base name
 * (`path_label`); the absolute path never appears in it.
 */

export const RegistryClassification = z.enum([
  'shared_local_registry',
  'project_local_private_registry',
  'public_example_fixture',
  'public_safe_projection',
  'local_private_registry',
]);
export type RegistryClassification = z.infer<typeof RegistryClassification>;

const BOUNDARY_KINDS: Record<RegistryClassification, string> = {
  shared_local_registry: 'global_local_private_registry',
  project_local_private_registry: 'project_local_private_registry',
  public_example_fixture: 'public_fixture_registry_projection',
  public_safe_projection: 'public_safe_registry_projection',
  local_private_registry: 'local_private_registry',
};

const PRIVATE_DIRECTORY_NAMES = new Set(['.loopx', '.local', '.codex', 'runtime']);
const PUBLIC_ROLES = new Set(['public-safe-projection', 'public_projection', 'public']);

export interface RegistryClass {
  classification: RegistryClassification;
  boundary_kind: string;
}

/** The registry's declared role: `registry_role`, else the legacy `role`. */
export function registryRole(document: Record<string, unknown>): string | null {
  for (const key of ['registry_role', 'role']) {
    const value = document[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return null;
}

/** The classification table (docs/privacy.md): the first matching rule wins. */
export function classifyRegistry(filePath: string, role: string | null, markerCount: number): RegistryClass {
  const parts = filePath.split(/[\\/]+/).filter((part) => part !== '');
  const fileName = parts[parts.length - 1] ?? '';
  const directories = parts.slice(0, -1);
  const pick = (classification: RegistryClassification): RegistryClass => ({
    classification,
    boundary_kind: BOUNDARY_KINDS[classification],
  });
  if (role === 'global-local' || fileName === GLOBAL_REGISTRY_FILE_NAME) return pick('shared_local_registry');
  if (directories.some((dir) => PRIVATE_DIRECTORY_NAMES.has(dir))) return pick('project_local_private_registry');
  if (directories.includes('examples') && fileName.includes('example')) return pick('public_example_fixture');
  if (role !== null && PUBLIC_ROLES.has(role)) return pick('public_safe_projection');
  if (markerCount > 0) return pick('local_private_registry');
  return pick('public_safe_projection');
}

export const PrivacyRiskCode = z.enum([
  'public_registry_contains_private_markers',
  'registry_tracked_but_not_push_allowed',
  'registry_not_gitignored',
  'registry_tracked',
  'registry_should_be_gitignored',
  'global_registry_is_local_control_plane_only',
  'public_safe_projection_is_not_runtime_publish_artifact',
]);
export type PrivacyRiskCode = z.infer<typeof PrivacyRiskCode>;

export const PrivacyRisk = z.object({
  code: PrivacyRiskCode,
  severity: z.enum(['blocking', 'advisory']),
  message: z.string(),
});
export type PrivacyRisk = z.infer<typeof PrivacyRisk>;

export interface PrivacyRequirements {
  /** Fail unless git confirms the file is ignored. */
  requireGitignored: boolean;
  /** Fail when git tracks the file. */
  requireNotTracked: boolean;
}

export interface PublicationFlags {
  github_push_allowed: boolean;
  should_be_gitignored: boolean;
}

export function publicationFlags(classification: RegistryClassification, markerCount: number): PublicationFlags {
  const fixture = classification === 'public_example_fixture';
  return { github_push_allowed: fixture && markerCount === 0, should_be_gitignored: !fixture };
}

/** Blocking risks first, then advisory ones; each code at most once. */
export function privacyRisks(
  classification: RegistryClassification,
  markerCount: number,
  flags: PublicationFlags,
  git: GitProbe,
  requirements: PrivacyRequirements,
): PrivacyRisk[] {
  const blocking: PrivacyRisk[] = [];
  const advisory: PrivacyRisk[] = [];
  const isPublic = classification === 'public_example_fixture' || classification === 'public_safe_projection';
  if (isPublic && markerCount > 0) {
    blocking.push({
      code: 'public_registry_contains_private_markers',
      severity: 'blocking',
      message: `a registry meant to be public holds ${markerCount} private marker(s); remove them or keep the file out of version control`,
    });
  }
  if (git.tracked && !flags.github_push_allowed) {
    blocking.push({
      code: 'registry_tracked_but_not_push_allowed',
      severity: 'blocking',
      message:
        'git tracks this registry but it is not safe to push; untrack it (git rm --cached) and add it to .gitignore',
    });
  }
  if (requirements.requireGitignored && !git.ignored) {
    const why = git.available ? 'git does not ignore it' : 'git could not confirm it is ignored';
    blocking.push({
      code: 'registry_not_gitignored',
      severity: 'blocking',
      message: `--require-gitignored: ${why}; add it to .gitignore`,
    });
  }
  if (requirements.requireNotTracked && git.tracked) {
    blocking.push({
      code: 'registry_tracked',
      severity: 'blocking',
      message: '--require-not-tracked: git tracks this registry; untrack it with git rm --cached',
    });
  }
  if (flags.should_be_gitignored && git.inside_worktree && !git.ignored && !git.tracked) {
    advisory.push({
      code: 'registry_should_be_gitignored',
      severity: 'advisory',
      message: 'this registry is in a git worktree but not ignored; add it to .gitignore before it gets committed',
    });
  }
  if (classification === 'shared_local_registry') {
    advisory.push({
      code: 'global_registry_is_local_control_plane_only',
      severity: 'advisory',
      message: 'the global registry is local control-plane state; never publish or share it',
    });
  }
  if (classification === 'public_safe_projection') {
    advisory.push({
      code: 'public_safe_projection_is_not_runtime_publish_artifact',
      severity: 'advisory',
      message: 'a public-safe projection is a documentation artifact, not something the runtime publishes',
    });
  }
  return [...blocking, ...advisory];
}

const GitProbeSchema = z.object({
  available: z.boolean(),
  probe_status: z.enum(['ok', 'git_unavailable']),
  inside_worktree: z.boolean(),
  tracked: z.boolean(),
  ignored: z.boolean(),
});

const PrivateMarkerSchema = z.object({
  path: z.string(),
  kind: z.enum(['local_path', 'raw_source_reference', 'private_text']),
});

/** The JSON contract of `loopx registry-privacy`. */
export const RegistryPrivacyReport = z.object({
  ok: z.boolean(),
  schema_version: z.literal('loopx_registry_privacy_v0'),
  path_label: z.string(),
  path_recorded: z.literal(false),
  registry_role: z.string().nullable(),
  classification: RegistryClassification,
  boundary_kind: z.string(),
  goal_count: z.number().int().nonnegative(),
  private_marker_count: z.number().int().nonnegative(),
  private_markers: z.array(PrivateMarkerSchema),
  private_markers_truncated: z.boolean(),
  github_push_allowed: z.boolean(),
  should_be_gitignored: z.boolean(),
  git: GitProbeSchema,
  requirements: z.object({ require_gitignored: z.boolean(), require_not_tracked: z.boolean() }),
  blocking_risks: z.array(PrivacyRiskCode),
  advisory_risks: z.array(PrivacyRiskCode),
  risks: z.array(PrivacyRisk),
});
export type RegistryPrivacyReport = z.infer<typeof RegistryPrivacyReport>;

/** The report when the file cannot be inspected: still names only the file. */
export const RegistryPrivacyFailure = z.object({
  ok: z.literal(false),
  schema_version: z.literal('loopx_registry_privacy_v0'),
  path_label: z.string(),
  path_recorded: z.literal(false),
  error: z.string(),
});
export type RegistryPrivacyFailure = z.infer<typeof RegistryPrivacyFailure>;

/** Builds the report for an already-parsed registry document. Pure except for the git probe. */
export function buildPrivacyReport(
  filePath: string,
  document: Record<string, unknown>,
  git: GitProbe,
  requirements: PrivacyRequirements,
): RegistryPrivacyReport {
  const role = registryRole(document);
  const scan = findPrivateMarkers(document);
  const markerCount = scan.markers.length;
  const registryClass = classifyRegistry(filePath, role, markerCount);
  const flags = publicationFlags(registryClass.classification, markerCount);
  const risks = privacyRisks(registryClass.classification, markerCount, flags, git, requirements);
  const blocking = risks.filter((risk) => risk.severity === 'blocking').map((risk) => risk.code);
  return RegistryPrivacyReport.parse({
    ok: blocking.length === 0,
    schema_version: 'loopx_registry_privacy_v0',
    path_label: path.basename(filePath),
    path_recorded: false,
    registry_role: role,
    ...registryClass,
    goal_count: Array.isArray(document['goals']) ? document['goals'].length : 0,
    private_marker_count: markerCount,
    private_markers: scan.markers satisfies PrivateMarker[],
    private_markers_truncated: scan.truncated,
    ...flags,
    git,
    requirements: {
      require_gitignored: requirements.requireGitignored,
      require_not_tracked: requirements.requireNotTracked,
    },
    blocking_risks: blocking,
    advisory_risks: risks.filter((risk) => risk.severity === 'advisory').map((risk) => risk.code),
    risks,
  });
}

function failure(filePath: string, error: string): RegistryPrivacyFailure {
  return {
    ok: false,
    schema_version: 'loopx_registry_privacy_v0',
    path_label: path.basename(filePath),
    path_recorded: false,
    error,
  };
}

/**
 * Reads, classifies and git-probes one registry file. Problems reading it come back as an
 * `ok:false` report naming only the file, so even errors never carry the absolute path.
 */
export async function inspectRegistryPrivacy(
  filePath: string,
  requirements: PrivacyRequirements,
  gitOptions: GitProbeOptions = {},
): Promise<RegistryPrivacyReport | RegistryPrivacyFailure> {
  const label = path.basename(filePath);
  let text: string;
  try {
    text = readFileSafeSync(filePath);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return failure(filePath, 'registry file does not exist');
    if (code === 'file_not_regular' || code === 'file_too_large')
      return failure(filePath, `${label} is not a regular file of a readable size; replace it with the registry file`);
    return failure(filePath, `cannot read ${label} (${code ?? 'unknown error'}); check the file's permissions`);
  }
  let document: unknown;
  try {
    document = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    // The engine's message quotes the file's text, which may hold the very paths we withhold.
    const body = text.replace(/^\uFEFF/, '');
    const { line, column } = lineColumnAt(body, jsonErrorOffset(body));
    return failure(
      filePath,
      `${label} is not valid JSON at line ${line}, column ${column}; fix the syntax and run the check again`,
    );
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    return failure(filePath, `registry root must be a JSON object (${label})`);
  }
  const git = await probeGit(filePath, gitOptions);
  return buildPrivacyReport(filePath, document as Record<string, unknown>, git, requirements);
}
