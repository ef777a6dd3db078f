/**
 * The agent tools: LoopX's operations an agent may call as tools (over MCP or VS Code's
 * language-model tools), the operations that are deliberately not tools, and the call itself.
 * The MCP server (`loopx mcp`) is in mcpServer.ts, loaded only by the command that serves it.
 */
export {
  AGENT_TOOLS,
  EXCLUDED_OPERATIONS,
  LANGUAGE_MODEL_TOOL_NAMES,
  agentToolByName,
  toolArgumentSchema,
  type AgentTool,
  type AgentToolOperationKey,
  type JsonSchemaObject,
  type LanguageModelToolName,
} from './catalog';
export {
  agentToolFailure,
  checkAgentToolArguments,
  invokeAgentTool,
  type AgentToolFailure,
  type AgentToolSuccess,
} from './invoke';
