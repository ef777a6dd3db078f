import assert from 'node:assert/strict';
import { LOOPX_VERSION } from '../../../src/core/version';
import { runLoopx } from './run';

describe('loopx CLI', () => {
  it('prints its version', async () => {
    const run = await runLoopx(['--version']);
    assert.equal(run.code, 0);
    // As the original prints it (and `loopx version`): the name, then the version.
    assert.equal(run.stdout.trim(), `loopx ${LOOPX_VERSION}`);
  });

  it('prints help grouped by the catalog groups', async () => {
    const run = await runLoopx(['--help']);
    assert.equal(run.code, 0);
    assert.match(run.stdout, /Usage: loopx/);
    assert.match(run.stdout, /Inspect:\n\s+commands/);
    assert.match(run.stdout, /--format <format>/);
  });

  it('lists the catalog as one JSON object', async () => {
    const run = await runLoopx(['--format', 'json', 'commands']);
    assert.equal(run.code, 0);
    const json = run.json();
    assert.equal(json['ok'], true);
    assert.ok(Array.isArray(json['commands']));
    assert.equal((json['commands'] as unknown[]).length, json['count']);
  });

  it('accepts global options after the command too', async () => {
    const run = await runLoopx(['commands', '--format', 'json']);
    assert.equal(run.code, 0);
    assert.equal(run.json()['schema_version'], 'loopx_command_catalog_v1');
  });

  it('prints Markdown by default', async () => {
    const run = await runLoopx(['commands']);
    assert.equal(run.code, 0);
    assert.match(run.stdout, /^# LoopX commands/);
    assert.match(run.stdout, /\| `loopx commands` \|/);
  });

  it('exits 2 on a usage error', async () => {
    const unknown = await runLoopx(['no-such-command']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command/);
    const badFormat = await runLoopx(['--format', 'yaml', 'commands']);
    assert.equal(badFormat.code, 2);
    assert.match(badFormat.stderr, /Allowed choices are json, markdown/);
  });

  it('exits 2 with "unknown command" for a command it does not have, whatever the flags (help included)', async () => {
    // Commands of the Python LoopX that this CLI lacks: a skill must see them fail, not print help and exit 0.
    for (const argv of [
      ['review-packet', '--help'],
      ['review-packet', '-h'],
      ['--format', 'json', 'review-packet', '--goal-id', 'g'],
      ['--registry', 'r.json', 'review-packet', '--format', 'json'],
      ['help', 'review-packet'],
      ['quota', 'monitor-poll', '--help'],
      ['todo', 'archive-completed', '--goal-id', 'g'],
    ]) {
      const run = await runLoopx(argv);
      assert.equal(run.code, 2, argv.join(' '));
      assert.match(
        run.stderr,
        /error: unknown command '(review-packet|monitor-poll|archive-completed)'/,
        argv.join(' '),
      );
      assert.equal(run.stdout, '', `${argv.join(' ')}: no help on stdout`);
    }
    // Help of the commands it has still exits 0.
    for (const argv of [
      ['doctor', '--help'],
      ['quota', '--help'],
      ['help', 'quota'],
      ['todo', 'help', 'add'],
      ['--format', 'json', 'status', '--help'],
    ]) {
      const run = await runLoopx(argv);
      assert.equal(run.code, 0, argv.join(' '));
      assert.match(run.stdout, /^Usage: loopx /, argv.join(' '));
    }
  });

  it('exits 2 and prints help when run without a command', async () => {
    const run = await runLoopx([]);
    assert.equal(run.code, 2);
  });
});
