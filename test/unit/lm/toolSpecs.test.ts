import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandByKey } from '../../../src/core/commands/catalog';
import { languageModelToolsNls, LM_TOOL_SPECS, manifestLanguageModelTools } from '../../../src/lm/toolSpecs';

/**
 * The language-model tools are declared once (src/lm/toolSpecs.ts): package.json's contribution is generated
 * from them, their inputs are fields of their operations, and no tool takes a human decision.
 */

const root = join(__dirname, '..', '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  contributes: Record<string, unknown>;
};

describe('language-model tools', () => {
  it('package.json contributes exactly the generated tools (run `npm run sync:manifest`), with their texts in package.nls.json', () => {
    assert.deepEqual(manifest.contributes['languageModelTools'], manifestLanguageModelTools());
    const nls = JSON.parse(readFileSync(join(root, 'package.nls.json'), 'utf8')) as Record<string, string>;
    for (const [key, value] of Object.entries(languageModelToolsNls())) assert.equal(nls[key], value, key);
    assert.deepEqual(manifest.contributes['mcpServerDefinitionProviders'], [
      { id: 'loopx.mcpServers', label: 'LoopX' },
    ]);
    // languageModelToolSets needs a proposed API: marketplace extensions cannot contribute it.
    assert.equal(manifest.contributes['languageModelToolSets'], undefined);
  });

  it('are the heartbeat steps; writes follow the catalog, exist only when trusted, and take only their operation’s fields', () => {
    assert.deepEqual(
      LM_TOOL_SPECS.map((spec) => spec.operation.key),
      ['quotaShouldRun', 'heartbeatPrompt', 'todoComplete', 'refreshState', 'quotaSpendSlot'],
    );
    const contributed = manifestLanguageModelTools();
    for (const [index, spec] of LM_TOOL_SPECS.entries()) {
      assert.match(spec.name, /^loopx_[a-z_]+$/);
      assert.equal(spec.writes, commandByKey(spec.operation.key).mutation !== 'read_only', spec.name);
      assert.equal(contributed[index]?.['when'], spec.writes ? 'isWorkspaceTrusted' : undefined, spec.name);
      const fields = Object.keys(spec.input.shape);
      const operationFields = Object.keys(spec.operation.args.shape);
      assert.deepEqual(
        fields.filter((field) => !operationFields.includes(field)),
        [],
        spec.name,
      );
      assert.equal(fields.includes('goalId'), true, spec.name);
      // A gate is decided by a person, never through a tool; a write is applied by the tool after its confirmation.
      for (const human of ['decisionOutcome', 'execute', 'dryRun', 'source'])
        assert.equal(fields.includes(human), false, `${spec.name} takes ${human}`);
      assert.equal(spec.input.safeParse({ goalId: 'g', decisionOutcome: 'approve' }).success, false, spec.name);
    }
  });
});
