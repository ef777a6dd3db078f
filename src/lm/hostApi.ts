import * as vscode from 'vscode';

/**
 * The parts of VS Code's API newer than engines.vscode (1.90) that LoopX uses, typed here because
 * `@types/vscode` is pinned to 1.90: language-model tools (1.95) and MCP server definition providers
 * (1.101). Each is read through a feature check; on an older host it is absent and LoopX registers
 * nothing for it (nothing throws).
 */

export interface ToolInvocationOptions<T> {
  input: T;
  toolInvocationToken?: unknown;
}

export interface PreparedToolInvocation {
  invocationMessage?: string | vscode.MarkdownString;
  confirmationMessages?: { title: string; message: string | vscode.MarkdownString };
}

/** A tool result: a list of parts (`LanguageModelTextPart`s here). */
export type ToolResult = { content: unknown[] };

export interface LanguageModelToolImpl<T> {
  invoke(options: ToolInvocationOptions<T>, token: vscode.CancellationToken): Promise<ToolResult>;
  prepareInvocation?(
    options: ToolInvocationOptions<T>,
    token: vscode.CancellationToken,
  ): PreparedToolInvocation | Promise<PreparedToolInvocation>;
}

export interface McpStdioServerDefinitionLike {
  label: string;
  command: string;
  args: string[];
  env: Record<string, string | number | null>;
  version?: string;
  cwd?: vscode.Uri;
}

interface NewerLm {
  registerTool?: <T>(name: string, tool: LanguageModelToolImpl<T>) => vscode.Disposable;
  registerMcpServerDefinitionProvider?: (
    id: string,
    provider: {
      onDidChangeMcpServerDefinitions?: vscode.Event<void>;
      provideMcpServerDefinitions(token: vscode.CancellationToken): McpStdioServerDefinitionLike[];
    },
  ) => vscode.Disposable;
}

interface NewerVscode {
  LanguageModelTextPart?: new (value: string) => unknown;
  LanguageModelToolResult?: new (content: unknown[]) => ToolResult;
  McpStdioServerDefinition?: new (
    label: string,
    command: string,
    args?: string[],
    env?: Record<string, string | number | null>,
    version?: string,
  ) => McpStdioServerDefinitionLike;
}

function newerLm(): NewerLm {
  return (vscode.lm ?? {}) as NewerLm;
}

const newer = vscode as unknown as NewerVscode;

/** What the language-model tools need, or undefined on a host without them (VS Code before 1.95). */
export function languageModelToolsApi():
  | {
      registerTool: NonNullable<NewerLm['registerTool']>;
      result: (texts: string[]) => ToolResult;
    }
  | undefined {
  const lm = newerLm();
  const { LanguageModelTextPart: TextPart, LanguageModelToolResult: Result } = newer;
  if (typeof lm.registerTool !== 'function' || TextPart === undefined || Result === undefined) return undefined;
  return {
    registerTool: lm.registerTool.bind(vscode.lm),
    result: (texts) => new Result(texts.map((text) => new TextPart(text))),
  };
}

/** What the MCP server definition provider needs, or undefined on a host without it (VS Code before 1.101). */
export function mcpProviderApi():
  | {
      registerProvider: NonNullable<NewerLm['registerMcpServerDefinitionProvider']>;
      stdioServer: NonNullable<NewerVscode['McpStdioServerDefinition']>;
    }
  | undefined {
  const lm = newerLm();
  const Definition = newer.McpStdioServerDefinition;
  if (typeof lm.registerMcpServerDefinitionProvider !== 'function' || Definition === undefined) return undefined;
  return { registerProvider: lm.registerMcpServerDefinitionProvider.bind(vscode.lm), stdioServer: Definition };
}
