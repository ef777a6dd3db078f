import assert from 'node:assert/strict';
import {
  AGENT_TYPE_CATALOG,
  agentTypeErrorPayload,
  canonicalAgentTypes,
  normalizeHostSurface,
  resolveAgentType,
} from '../../../src/core/agents/agentTypes';

function resolved(value: string): string {
  const result = resolveAgentType(value);
  assert.ok(result.ok, `${value}: ${result.ok ? '' : result.reason}`);
  return result.agent_type;
}

describe('agent types', () => {
  it("keeps the original's 17 types and adds vscode-lm and command", () => {
    const original = [
      'ark-managed-agent',
      'codex-app',
      'codex-app-ssh',
      'codex-ide-plugin',
      'codex-cli',
      'claude-code',
      'kunluncode',
      'opencode',
      'opencode2',
      'traex-cli',
      'pi',
      'gemini-cli',
      'cursor-agent',
      'deepseek-harness',
      'deepseek-harness-native',
      'manual',
      'other-agent',
    ];
    assert.deepEqual([...canonicalAgentTypes()].sort(), [...original, 'vscode-lm', 'command'].sort());
    for (const entry of AGENT_TYPE_CATALOG) assert.equal(resolved(entry.agent_type), entry.agent_type);
  });

  it('case 8: resolves aliases and host surfaces', () => {
    assert.equal(resolved('Claude_Code'), 'claude-code');
    assert.equal(resolved('cc'), 'claude-code');
    assert.equal(resolved('codex app'), 'codex-app');
    assert.equal(resolved('Codex_IDE'), 'codex-ide-plugin');
    assert.equal(resolved('shell'), 'manual');
    assert.equal(resolved('custom agent'), 'other-agent');

    assert.equal(normalizeHostSurface(null), 'codex-app');
    assert.equal(normalizeHostSurface('chat-box'), 'codex-app');
    assert.equal(normalizeHostSurface('codex-cli-tui'), 'codex-cli');
    assert.equal(normalizeHostSurface('http'), 'other-agent');
    assert.equal(normalizeHostSurface('vim'), null);
  });

  it("resolves this product's hosts without taking over the original's names", () => {
    for (const alias of ['vscode', 'VS Code', 'copilot', 'vscode-language-model', 'vscode_lm'])
      assert.equal(resolved(alias), 'vscode-lm');
    for (const alias of ['command', 'process', 'script', 'SubProcess']) assert.equal(resolved(alias), 'command');
    assert.equal(resolved('shell'), 'manual', 'shell keeps the original mapping');
  });

  it('case 9: rejects ambiguous, unknown and empty types with suggestions', () => {
    const codex = resolveAgentType('codex');
    assert.equal(codex.ok, false);
    assert.ok(!codex.ok);
    assert.equal(codex.reason_kind, 'ambiguous');
    assert.deepEqual(codex.suggestions, ['codex-app', 'codex-app-ssh', 'codex-ide-plugin', 'codex-cli']);
    assert.match(codex.reason, /^agent_type 'codex' is ambiguous; /);
    for (const spelling of ['openai-codex', 'OpenAI Codex']) {
      const result = resolveAgentType(spelling);
      assert.ok(!result.ok && result.reason_kind === 'ambiguous', spelling);
    }

    const cli = resolveAgentType('cli');
    assert.ok(!cli.ok);
    assert.deepEqual(cli.suggestions, ['codex-cli', 'manual', 'other-agent']);

    const vim = resolveAgentType('vim');
    assert.ok(!vim.ok);
    assert.equal(vim.reason_kind, 'unsupported');
    assert.match(vim.reason, /^unsupported agent_type 'vim'/);

    const blank = resolveAgentType(' ');
    assert.ok(!blank.ok);
    assert.match(blank.reason, /^agent_type is required; supported: vscode-lm, command, /);
    // The suggestions are the original's 17 types in its supported-list order (codex-ide-plugin before codex-cli).
    for (const unresolved of [vim, blank]) {
      assert.ok(!unresolved.ok);
      assert.equal(unresolved.suggestions.length, 17);
      assert.deepEqual(unresolved.suggestions.slice(0, 5), [
        'ark-managed-agent',
        'codex-app',
        'codex-app-ssh',
        'codex-ide-plugin',
        'codex-cli',
      ]);
      assert.ok(!unresolved.suggestions.includes('vscode-lm') && !unresolved.suggestions.includes('command'));
    }

    const payload = agentTypeErrorPayload(cli);
    assert.equal(payload['schema_version'], 'loopx_agent_type_error_v0');
    assert.equal(payload['error_kind'], 'ambiguous_or_unsupported_agent_type');
    assert.equal(payload['agent_type'], 'cli');
    assert.equal((payload['agent_type_catalog'] as unknown[]).length, AGENT_TYPE_CATALOG.length);
  });
});
