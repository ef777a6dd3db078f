import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGENT_TOOLS, checkAgentToolArguments, LANGUAGE_MODEL_TOOL_NAMES } from '../../../src/core/agentTools';
import { commandByKey } from '../../../src/core/commands/catalog';
import { isLoopxError } from '../../../src/core/errors';
import { languageModelToolsNls, LM_TOOL_SPECS, manifestLanguageModelTools } from '../../../src/lm/toolSpecs';

/**
 * The language-model tools are agent tools (src/core/agentTools), named for the editor there; package.json's
 * contribution is generated from them (src/lm/toolSpecs.ts), and no tool takes a human decision.
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

  it('are the heartbeat steps; writes follow the catalog and exist only when trusted', () => {
    assert.deepEqual(
      LM_TOOL_SPECS.map((spec) => spec.tool.op),
      ['quotaShouldRun', 'heartbeatPrompt', 'todoComplete', 'refreshState', 'quotaSpendSlot'],
    );
    const contributed = manifestLanguageModelTools();
    for (const [index, spec] of LM_TOOL_SPECS.entries()) {
      assert.equal(spec.writes, commandByKey(spec.tool.op).mutation !== 'read_only', spec.name);
      assert.equal(contributed[index]?.['when'], spec.writes ? 'isWorkspaceTrusted' : undefined, spec.name);
    }
  });

  it('are a subset of the agent tools (AGENT_TOOLS), chosen there by name, with identical descriptions and input schemas', () => {
    assert.deepEqual(
      LM_TOOL_SPECS.map((spec) => spec.name),
      LANGUAGE_MODEL_TOOL_NAMES.map((name) => `loopx_${name}`),
    );
    const contributed = manifestLanguageModelTools();
    for (const [index, spec] of LM_TOOL_SPECS.entries()) {
      const agentTool = AGENT_TOOLS.find((tool) => `loopx_${tool.name}` === spec.name);
      assert.ok(agentTool, `${spec.name} is no agent tool`);
      assert.equal(spec.tool, agentTool, spec.name);
      // What package.json gives VS Code is what tools/list gives an MCP client.
      assert.deepEqual(contributed[index]?.['inputSchema'], agentTool.inputSchema, spec.name);
      assert.equal(contributed[index]?.['modelDescription'], agentTool.description, spec.name);
    }
  });

  it('take no human decision: a gate outcome is not an argument, checked before anything runs', () => {
    for (const spec of LM_TOOL_SPECS) {
      const properties = Object.keys(spec.tool.inputSchema.properties ?? {});
      assert.equal(properties.includes('goalId'), true, spec.name);
      assert.equal(properties.includes('decisionOutcome'), false, `${spec.name} takes decisionOutcome`);
      assert.throws(
        () => checkAgentToolArguments(spec.tool.name, { goalId: 'g', decisionOutcome: 'approve' }),
        (error: unknown) =>
          isLoopxError(error) && error.code === 'invalid_argument' && /decisionOutcome/.test(error.message),
        spec.name,
      );
    }
  });
});
