import assert from 'node:assert/strict';
import { readAgentExecutorConfig, createAgentExecutor } from '../../../src/core/executors/config';
import {
  inWriteScope,
  languageModelPrompt,
  normalizeProjectPath,
  readLanguageModelReply,
} from '../../../src/core/executors/languageModel';
import { isLoopxError } from '../../../src/core/errors';
import { demoRequest, demoWorkspace } from './helpers';

const TURN_KEY = `sha256:${'a'.repeat(64)}`;
const request = { turn_key: TURN_KEY, selected_todo: null };

function result(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema_version: 'loopx_turn_result_v0',
    turn_key: TURN_KEY,
    result_kind: 'wait',
    summary: 'nothing to do',
    next_action: 'wait for the gate',
    ...extra,
  };
}

function fenced(value: unknown): string {
  return `Here is my answer.\n\n\`\`\`json\n${JSON.stringify(value)}\n\`\`\`\n`;
}

describe('vscode-lm: the write scope', () => {
  it('covers folders, globs and exact files, and nothing when empty', () => {
    assert.equal(inWriteScope('notes/a.md', ['notes']), true);
    assert.equal(inWriteScope('notes/deep/a.md', ['notes/']), true);
    assert.equal(inWriteScope('notes/deep/a.md', ['notes/**']), true);
    assert.equal(inWriteScope('notes/a.md', ['notes/*.md']), true);
    assert.equal(inWriteScope('notes/deep/a.md', ['notes/*.md']), false);
    assert.equal(inWriteScope('notesx/a.md', ['notes']), false);
    assert.equal(inWriteScope('README.md', ['README.md']), true);
    assert.equal(inWriteScope('notes/a.md', []), false);
  });

  it('never covers a path that climbs out or is absolute', () => {
    assert.equal(inWriteScope('notes/../scripts/x.js', ['notes/**']), false);
    assert.equal(inWriteScope('../x.md', ['**']), false);
    assert.equal(inWriteScope('/etc/passwd', ['**']), false);
    assert.equal(normalizeProjectPath('./notes/a.md'), 'notes/a.md');
    assert.equal(normalizeProjectPath('C:\\x'), null);
  });
});

describe('vscode-lm: reading a reply', () => {
  it('reads the envelope: the result, and the edits inside the write scope, added to changed_files', () => {
    const reading = readLanguageModelReply(
      fenced({ edits: [{ path: 'notes/a.md', content: '# A\n' }], result: result() }),
      request,
      ['notes/**'],
    );
    assert.ok(reading.ok);
    assert.deepEqual(reading.edits, [{ path: 'notes/a.md', content: '# A\n' }]);
    assert.deepEqual(reading.result.changed_files, ['notes/a.md']);
  });

  it('reads a bare result object as a reply without edits', () => {
    const reading = readLanguageModelReply(JSON.stringify(result()), request, []);
    assert.ok(reading.ok);
    assert.deepEqual(reading.edits, []);
  });

  it('refuses the whole reply when one edit lies outside the write scope', () => {
    const reading = readLanguageModelReply(
      fenced({
        edits: [
          { path: 'notes/a.md', content: 'ok' },
          { path: 'scripts/check.js', content: 'process.exit(0)' },
        ],
        result: result(),
      }),
      request,
      ['notes/**'],
    );
    assert.equal(reading.ok, false);
    assert.ok(!reading.ok && reading.reason === 'contract_violation');
    assert.match(!reading.ok ? reading.problems.join('\n') : '', /edits\.1\.path: scripts\/check\.js is outside/);
  });

  it('refuses an edit path that climbs out of the project', () => {
    const reading = readLanguageModelReply(
      fenced({ edits: [{ path: 'notes/../../x', content: '' }], result: result() }),
      request,
      ['**'],
    );
    assert.ok(!reading.ok && /must be relative to the project/.test(reading.problems[0] ?? ''));
  });

  it('says a reply without JSON is malformed', () => {
    const reading = readLanguageModelReply('I did it!', request, ['notes/**']);
    assert.ok(!reading.ok && reading.reason === 'malformed_result');
  });

  it('checks the result against the contract and the request (the turn key)', () => {
    const reading = readLanguageModelReply(
      fenced({ result: result({ turn_key: `sha256:${'b'.repeat(64)}` }) }),
      request,
      [],
    );
    assert.ok(!reading.ok && reading.reason === 'contract_violation');
    assert.match(!reading.ok ? reading.problems.join('\n') : '', /turn_key/);
  });

  it('refuses unknown envelope fields', () => {
    const reading = readLanguageModelReply(fenced({ result: result(), shell: 'rm -rf /' }), request, []);
    assert.ok(!reading.ok && reading.reason === 'contract_violation');
  });
});

describe('vscode-lm: the agent profile and the prompt', () => {
  const goal = (executor: unknown): Record<string, unknown> => ({
    id: 'g',
    coordination: { registered_agents: ['lm'], agent_profiles: { lm: { executor } } },
  });

  it('accepts the vscode-lm preset with vendor, family and a token budget', () => {
    const config = readAgentExecutorConfig(
      goal({ preset: 'vscode-lm', vendor: 'copilot', family: 'gpt-4o', max_tokens_per_turn: 8000 }),
      'lm',
    );
    assert.equal(config?.preset, 'vscode-lm');
    assert.equal(config?.max_tokens_per_turn, 8000);
  });

  it('refuses a command for vscode-lm, and vendor on other presets', () => {
    for (const executor of [
      { preset: 'vscode-lm', command: ['x'] },
      { preset: 'command', command: ['x'], vendor: 'copilot' },
    ]) {
      assert.throws(
        () => readAgentExecutorConfig(goal(executor), 'lm'),
        (e: unknown) => isLoopxError(e) && e.code === 'executor_config_invalid',
      );
    }
  });

  it('outside the editor, says the vscode-lm agent runs only inside VS Code', () => {
    assert.throws(
      () => createAgentExecutor({ preset: 'vscode-lm' }),
      (e: unknown) => isLoopxError(e) && e.code === 'executor_unavailable_here',
    );
  });

  it('appends the reply format and the write scope to the turn prompt', async () => {
    const request = await demoRequest(demoWorkspace());
    const prompt = languageModelPrompt(request, ['notes/**']);
    assert.match(prompt, /write scope: `notes\/\*\*`/);
    assert.match(prompt, /"edits"/);
    assert.match(languageModelPrompt(request, []), /no write scope: propose no edits/);
  });
});
