// Runs @loopx's real chat handler for /status in this extension host (through LoopX's hidden
// _loopx.chatRequest command, which answers on a recorder instead of the chat view's stream), writes the
// answer as Markdown to .loopx-e2e/chat-status-answer.md, and opens it in VS Code's Markdown preview.
// Why: code-server's chat view needs a signed-in Copilot before a request reaches LoopX (docs/executors.md).
const vscode = require('vscode');

/** The recorded parts as the chat view shows them: Markdown as is, anchors and buttons as links. */
function toMarkdown(parts) {
  const lines = [];
  for (const part of parts) {
    if (part.kind === 'markdown') lines.push(part.value);
    else if (part.kind === 'anchor') lines.push(`[${part.value}](${part.command})`);
    else if (part.kind === 'button') lines.push(`\n\n**[${part.value}]** _(button: \`${part.command}\`)_\n`);
    else if (part.kind === 'progress') lines.push(`\n\n_${part.value}_\n\n`);
  }
  return lines.join('');
}

function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand('loopxTests.showChatAnswer', async () => {
      const reply = await vscode.commands.executeCommand('_loopx.chatRequest', 'status', '');
      const folder = vscode.workspace.workspaceFolders[0].uri;
      const file = vscode.Uri.joinPath(folder, '.loopx-e2e', 'chat-status-answer.md');
      const header = "**@loopx** `/status` — the answer of LoopX's chat handler\n\n---\n\n";
      await vscode.workspace.fs.writeFile(file, Buffer.from(header + toMarkdown(reply.parts) + '\n', 'utf8'));
      await vscode.commands.executeCommand('markdown.showPreview', file);
      return file.fsPath;
    }),
  );
}

module.exports = { activate };
