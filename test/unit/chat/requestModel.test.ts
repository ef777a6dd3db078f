import assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import { chatRequestModel } from '../../../src/chat/requestModel';

/** A chat request as VS Code hands it; `model` only from 1.95 on. */
function request(extra: Record<string, unknown>): vscode.ChatRequest {
  return { command: undefined, prompt: 'hello', references: [], toolReferences: [], ...extra } as never;
}

describe('chatRequestModel: ChatRequest.model is newer than engines.vscode', () => {
  it('returns the model the chat view picked (VS Code 1.95 and later)', () => {
    const picked = { id: 'm1', name: 'Model one' };
    assert.equal(chatRequestModel(request({ model: picked })), picked);
  });

  it('returns undefined on a host whose requests carry no model, so the answer picks one from vscode.lm', () => {
    assert.equal(chatRequestModel(request({})), undefined);
    assert.equal(chatRequestModel(request({ model: null })), undefined);
  });
});
