import {
  agentToolByName,
  LANGUAGE_MODEL_TOOL_NAMES,
  type AgentTool,
  type LanguageModelToolName,
} from '../core/agentTools/catalog';

/**
 * The language-model tools LoopX offers an agent inside VS Code (Copilot's agent mode and any extension
 * that calls `vscode.lm.invokeTool`): the agent tools of src/core/agentTools that its catalog names for
 * the editor (LANGUAGE_MODEL_TOOL_NAMES), as `loopx_<name>` (tool names are global across extensions).
 * The description, the input schema and the call are the agent tool's, the same as over MCP (`loopx
 * mcp`), so an operation's tool is defined once; this file adds only what the editor shows (display
 * name, `#reference`, icon). Human-only actions are never tools. No `vscode` import: the manifest
 * generator (`npm run sync:manifest`) reads this file.
 */

export interface LanguageModelToolSpec {
  /** The tool's name (`loopx_<agent tool>`; models see it). */
  name: string;
  /** The agent tool it is: description, input schema, operation. */
  tool: AgentTool;
  /** `#loopx…` in a chat prompt. */
  referenceName: string;
  /** False for reads: registered in an untrusted workspace too. */
  writes: boolean;
  displayName: string;
  userDescription: string;
  icon: string;
}

export const LM_TOOL_TAG = 'loopx';

/** What the editor shows of each language-model tool (typed by the catalog's names: none missing, none extra). */
const PRESENTATION: Record<
  LanguageModelToolName,
  Pick<LanguageModelToolSpec, 'referenceName' | 'displayName' | 'userDescription' | 'icon'>
> = {
  should_run: {
    referenceName: 'loopxShouldRun',
    displayName: 'LoopX: Should Run',
    userDescription: 'Whether an agent may run a turn of a LoopX goal now, and on which todo.',
    icon: '$(pass)',
  },
  heartbeat_prompt: {
    referenceName: 'loopxTurnBrief',
    displayName: "LoopX: The Turn's Todo",
    userDescription: "The brief of an agent's turn: the goal, its todo, open gates and the budget left.",
    icon: '$(checklist)',
  },
  todo_complete: {
    referenceName: 'loopxCompleteTodo',
    displayName: 'LoopX: Complete Todo',
    userDescription: 'Mark an agent todo of a LoopX goal done, with evidence.',
    icon: '$(check)',
  },
  refresh_state: {
    referenceName: 'loopxRecordDelivery',
    displayName: 'LoopX: Record the Delivery',
    userDescription: "Record what an agent's turn delivered on a LoopX goal.",
    icon: '$(history)',
  },
  spend_slot: {
    referenceName: 'loopxSpendSlot',
    displayName: 'LoopX: Spend the Slot',
    userDescription: "Spend the quota slot of an agent's turn on a LoopX goal.",
    icon: '$(credit-card)',
  },
};

/** The language-model tool name of an agent tool. */
export const languageModelToolName = (agentToolName: string): string => `loopx_${agentToolName}`;

export const LM_TOOL_SPECS: readonly LanguageModelToolSpec[] = LANGUAGE_MODEL_TOOL_NAMES.map((name) => {
  const tool = agentToolByName(name);
  if (tool === undefined) throw new Error(`the agent tool catalog has no ${name}`);
  return { name: languageModelToolName(name), tool, writes: !tool.readOnly, ...PRESENTATION[name] };
});

/** `contributes.languageModelTools` of package.json (written by `npm run sync:manifest`). */
export function manifestLanguageModelTools(): Record<string, unknown>[] {
  return LM_TOOL_SPECS.map((spec) => ({
    name: spec.name,
    tags: [LM_TOOL_TAG, spec.writes ? 'loopx-writes' : 'loopx-reads'],
    toolReferenceName: spec.referenceName,
    displayName: `%lmTool.${spec.name}.displayName%`,
    userDescription: `%lmTool.${spec.name}.userDescription%`,
    modelDescription: spec.tool.description,
    canBeReferencedInPrompt: true,
    icon: spec.icon,
    // Writes exist only in a trusted workspace (the extension registers them only there, too).
    ...(spec.writes ? { when: 'isWorkspaceTrusted' } : {}),
    inputSchema: spec.tool.inputSchema,
  }));
}

/** The English texts of the tools' `%keys%` in package.nls.json. */
export function languageModelToolsNls(): Record<string, string> {
  return Object.fromEntries(
    LM_TOOL_SPECS.flatMap((spec) => [
      [`lmTool.${spec.name}.displayName`, spec.displayName],
      [`lmTool.${spec.name}.userDescription`, spec.userDescription],
    ]),
  );
}
