import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  classifyRegistry,
  inspectRegistryPrivacy,
  RegistryPrivacyReport,
  type RegistryPrivacyFailure,
} from '../../../src/core/privacy/classify';
import { probeGit } from '../../../src/core/privacy/gitProbe';
import { projectGoalForGlobal } from '../../../src/core/globalRegistry/project';
import { runLoopx } from '../cli/run';
import { tempDir } from '../../support/tempDir';

const NO_REQUIREMENTS = { requireGitignored: false, requireNotTracked: false };

/** The example registry LoopX ships (built here, since it is a fixture of this test). */
const EXAMPLE_REGISTRY = {
  schema_version: '0.1',
  registry_role: 'public-safe-projection',
  common_runtime_root: './runtime',
  goals: [
    {
      id: 'demo-goal',
      domain: 'demo',
      status: 'active',
      repo: '/path/to/project',
      state_file: '.codex/goals/demo-goal/ACTIVE_GOAL_STATE.md',
      adapter: { kind: 'generic_project_goal_v0', status: 'connected' },
      spawn_policy: {
        mode: 'multi_subagent',
        allowed: true,
        max_children: 3,
        allowed_domains: ['docs-map', 'validation-map'],
      },
      quota: { compute: 0.5, window_hours: 24, slot_minutes: 1 },
      authority_sources: [{ kind: 'doc', label: 'design notes' }],
      coordination: { agent_model: 'peer_v1', registered_agents: ['codex-alpha', 'codex-beta'] },
    },
  ],
};

function writeJson(file: string, value: unknown): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
  return file;
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd, stdio: 'ignore' });
}

function asReport(value: RegistryPrivacyReport | RegistryPrivacyFailure): RegistryPrivacyReport {
  assert.ok(!('error' in value), `unexpected failure: ${'error' in value ? value.error : ''}`);
  return RegistryPrivacyReport.parse(value);
}

describe('registry privacy classification', () => {
  it('case 31: classification table, first matching rule wins', () => {
    assert.equal(classifyRegistry('/a/.loopx/registry.json', null, 0).classification, 'project_local_private_registry');
    assert.equal(
      classifyRegistry('/a/runtime/examples/registry.example.json', null, 0).classification,
      'project_local_private_registry',
    );
    const global = classifyRegistry('/a/registry.global.json', null, 0);
    assert.deepEqual(global, {
      classification: 'shared_local_registry',
      boundary_kind: 'global_local_private_registry',
    });
    assert.equal(classifyRegistry('/a/b/r.json', 'global-local', 3).classification, 'shared_local_registry');
    assert.deepEqual(classifyRegistry('/a/examples/registry.example.json', null, 0), {
      classification: 'public_example_fixture',
      boundary_kind: 'public_fixture_registry_projection',
    });
    assert.deepEqual(classifyRegistry('/a/examples/reg.json', null, 0), {
      classification: 'public_safe_projection',
      boundary_kind: 'public_safe_registry_projection',
    });
    assert.equal(classifyRegistry('/a/b/r.json', null, 2).classification, 'local_private_registry');
    assert.equal(classifyRegistry('/a/b/r.json', 'public', 2).classification, 'public_safe_projection');
    assert.equal(classifyRegistry('C:\\a\\.codex\\r.json', null, 0).classification, 'project_local_private_registry');
  });

  it('case 32: the shipped example registry is a push-allowed public fixture with no markers', async () => {
    const dir = tempDir();
    const file = writeJson(path.join(dir, 'examples', 'registry.example.json'), EXAMPLE_REGISTRY);
    const report = asReport(await inspectRegistryPrivacy(file, NO_REQUIREMENTS));
    assert.equal(report.ok, true);
    assert.equal(report.classification, 'public_example_fixture');
    assert.equal(report.private_marker_count, 0);
    assert.equal(report.github_push_allowed, true);
    assert.equal(report.should_be_gitignored, false);
    assert.deepEqual(report.blocking_risks, []);
    const projected = projectGoalForGlobal(EXAMPLE_REGISTRY.goals[0] as Record<string, unknown>, {
      sourceRegistry: file,
      syncedAt: '2026-01-15T10:00:00Z',
    });
    assert.equal(projected['authority_source_count'], 1);
    assert.equal('authority_sources' in projected, false);
  });

  it('case 33: an example fixture with a source_ref is not push-allowed and fails', async () => {
    const dir = tempDir();
    const registry = structuredClone(EXAMPLE_REGISTRY) as { goals: Record<string, unknown>[] };
    (registry.goals[0] as Record<string, unknown>)['authority_sources'] = [{ source_ref: 'wiki-node-42' }];
    const file = writeJson(path.join(dir, 'examples', 'registry.example.json'), registry);
    const report = asReport(await inspectRegistryPrivacy(file, NO_REQUIREMENTS));
    assert.equal(report.ok, false);
    assert.equal(report.github_push_allowed, false);
    assert.deepEqual(report.blocking_risks, ['public_registry_contains_private_markers']);
    assert.deepEqual(report.private_markers, [
      { path: 'goals[0].authority_sources[0].source_ref', kind: 'raw_source_reference' },
    ]);
  });

  it('case 33: without git a .loopx registry reports git_unavailable and no risks; the absolute path is never in the output', async () => {
    const dir = tempDir();
    const file = writeJson(path.join(dir, '.loopx', 'registry.json'), {
      goals: [{ id: 'g', repo: dir, state_file: `${dir}/state.md`, note: `see ${dir}/x` }],
    });
    const missingGit = asReport(
      await inspectRegistryPrivacy(file, NO_REQUIREMENTS, { gitCommand: path.join(dir, 'no-such-git') }),
    );
    const notARepo = asReport(await inspectRegistryPrivacy(file, NO_REQUIREMENTS));
    for (const report of [missingGit, notARepo]) {
      assert.equal(report.git.probe_status, 'git_unavailable');
      assert.equal(report.git.available, false);
      assert.equal(report.classification, 'project_local_private_registry');
      assert.deepEqual(report.risks, []);
      assert.equal(report.ok, true);
      assert.equal(report.path_label, 'registry.json');
      assert.equal(report.path_recorded, false);
      assert.ok(report.private_marker_count >= 2);
      const text = JSON.stringify(report);
      assert.ok(!text.includes(dir), 'the absolute path leaked into the report');
      assert.ok(!text.includes(path.basename(dir)), 'the temp folder name leaked into the report');
    }
  });

  it('errors name only the file: missing, invalid JSON, non-object root', async () => {
    const dir = tempDir();
    const missing = await inspectRegistryPrivacy(path.join(dir, '.loopx', 'registry.json'), NO_REQUIREMENTS);
    assert.deepEqual(missing, {
      ok: false,
      schema_version: 'loopx_registry_privacy_v0',
      path_label: 'registry.json',
      path_recorded: false,
      error: 'registry file does not exist',
    });
    const broken = path.join(dir, 'broken.json');
    fs.writeFileSync(broken, `{\n  "repo": "${dir}/x",\n  oops\n}`);
    const invalid = await inspectRegistryPrivacy(broken, NO_REQUIREMENTS);
    assert.equal(invalid.ok, false);
    assert.match((invalid as RegistryPrivacyFailure).error, /broken\.json is not valid JSON at line 3, column 3/);
    assert.ok(!JSON.stringify(invalid).includes(dir));
    const list = writeJson(path.join(dir, 'list.json'), [1]);
    assert.match(
      ((await inspectRegistryPrivacy(list, NO_REQUIREMENTS)) as RegistryPrivacyFailure).error,
      /registry root must be a JSON object/,
    );
  });

  describe('with a real git repository', () => {
    let repo: string;
    before(function () {
      repo = tempDir();
      try {
        git(repo, 'init', '-q');
      } catch {
        this.skip();
      }
    });

    it('probes tracked and ignored files', async () => {
      const ignoredFile = writeJson(path.join(repo, '.loopx', 'registry.json'), { goals: [] });
      fs.writeFileSync(path.join(repo, '.gitignore'), '.loopx/\n');
      const trackedFile = writeJson(path.join(repo, 'config', 'tracked.json'), { goals: [] });
      const looseFile = writeJson(path.join(repo, 'config', 'loose.json'), { goals: [] });
      git(repo, 'add', '.gitignore', 'config/tracked.json');
      git(repo, 'commit', '-q', '-m', 'init');
      assert.deepEqual(await probeGit(ignoredFile), {
        available: true,
        probe_status: 'ok',
        inside_worktree: true,
        tracked: false,
        ignored: true,
      });
      assert.deepEqual(await probeGit(trackedFile), {
        available: true,
        probe_status: 'ok',
        inside_worktree: true,
        tracked: true,
        ignored: false,
      });
      assert.deepEqual(await probeGit(looseFile), {
        available: true,
        probe_status: 'ok',
        inside_worktree: true,
        tracked: false,
        ignored: false,
      });
    });

    it('raises the tracked and should-be-gitignored risks, and the --require-* failures', async () => {
      const tracked = asReport(
        await inspectRegistryPrivacy(path.join(repo, 'config', 'tracked.json'), NO_REQUIREMENTS),
      );
      assert.equal(tracked.classification, 'public_safe_projection');
      assert.deepEqual(tracked.blocking_risks, ['registry_tracked_but_not_push_allowed']);
      assert.deepEqual(tracked.advisory_risks, ['public_safe_projection_is_not_runtime_publish_artifact']);
      assert.equal(tracked.ok, false);

      const loose = asReport(await inspectRegistryPrivacy(path.join(repo, 'config', 'loose.json'), NO_REQUIREMENTS));
      assert.equal(loose.ok, true);
      assert.deepEqual(loose.advisory_risks, [
        'registry_should_be_gitignored',
        'public_safe_projection_is_not_runtime_publish_artifact',
      ]);

      const required = asReport(
        await inspectRegistryPrivacy(path.join(repo, 'config', 'tracked.json'), {
          requireGitignored: true,
          requireNotTracked: true,
        }),
      );
      assert.deepEqual(required.blocking_risks, [
        'registry_tracked_but_not_push_allowed',
        'registry_not_gitignored',
        'registry_tracked',
      ]);

      const ignored = asReport(
        await inspectRegistryPrivacy(path.join(repo, '.loopx', 'registry.json'), {
          requireGitignored: true,
          requireNotTracked: true,
        }),
      );
      assert.equal(ignored.ok, true);
      assert.deepEqual(ignored.risks, []);
    });
  });

  it('loopx registry-privacy prints the report and exits 1 on a blocking risk', async () => {
    const dir = tempDir();
    writeJson(path.join(dir, '.loopx', 'registry.json'), { goals: [{ id: 'g', repo: dir }] });
    const clean = await runLoopx(['--format', 'json', 'registry-privacy'], { cwd: dir });
    assert.equal(clean.code, 0);
    const json = clean.json();
    assert.equal(json['classification'], 'project_local_private_registry');
    assert.equal(json['path_label'], 'registry.json');
    assert.ok(!clean.stdout.includes(dir));

    const required = await runLoopx(['registry-privacy', '--require-gitignored'], { cwd: dir });
    assert.equal(required.code, 1);
    assert.match(required.stdout, /# LoopX registry privacy/);
    assert.match(required.stdout, /registry_not_gitignored/);
    assert.ok(!required.stdout.includes(dir));

    const missing = await runLoopx(['--format', 'json', 'registry-privacy', '--registry', 'nope.json'], { cwd: dir });
    assert.equal(missing.code, 1);
    assert.equal(missing.json()['error'], 'registry file does not exist');
  });
});
