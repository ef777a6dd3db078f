import type * as vscode from 'vscode';

/**
 * The language model picked in the chat view for this request. `ChatRequest.model` came with VS Code 1.95 and
 * engines.vscode is older: there the request has none, and the answer falls back to the first model `vscode.lm`
 * offers (as it does when no model is picked).
 */
export function chatRequestModel(request: vscode.ChatRequest): vscode.LanguageModelChat | undefined {
  const model: unknown = (request as { model?: unknown }).model;
  return typeof model === 'object' && model !== null ? (model as vscode.LanguageModelChat) : undefined;
}
