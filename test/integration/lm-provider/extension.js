// A deterministic language model for LoopX's integration tests. The reply depends on the scenario the
// test sets through this extension's exports, and on the turn key and todo id in the prompt.
const vscode = require('vscode');

let scenario = 'edit';
const prompts = [];
// How many tools each request offered, in order.
const offeredTools = [];

function textOf(messages) {
  return messages
    .map((m) => m.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join(''))
    .join('\n');
}

function reply(prompt) {
  const turnKey = (/sha256:[0-9a-f]{64}/.exec(prompt) || [''])[0];
  const todoId = (/- id: `([^`]+)`/.exec(prompt) || [null, 'todo_related'])[1];
  const result = {
    schema_version: 'loopx_turn_result_v0',
    turn_key: turnKey,
    result_kind: 'validated_progress',
    summary: 'Wrote notes/lm-note.md with a Related section.',
    classification: 'related_section_started',
    recommended_action: 'Link the remaining notes.',
    next_action: 'Link the remaining notes.',
    delivery_batch_scale: 'single_surface',
    delivery_outcome: 'outcome_progress',
    evidence: ['notes/lm-note.md starts with a title'],
    todo: { todo_id: todoId, disposition: 'in_progress', note: 'one note linked' },
    changed_files: ['notes/lm-note.md'],
  };
  const edit = { path: 'notes/lm-note.md', content: '# LM note\n\n## Related\n- [Bread](bread.md)\n' };
  switch (scenario) {
    case 'edit':
      return `I linked one note.\n\n\`\`\`json\n${JSON.stringify({ edits: [edit], result })}\n\`\`\`\n`;
    case 'outside':
      return `\`\`\`json\n${JSON.stringify({ edits: [edit, { path: 'scripts/check-notes.js', content: 'process.exit(0)\n' }], result })}\n\`\`\`\n`;
    case 'malformed':
      return 'I did it, trust me! (no JSON here)';
    case 'goal':
      return `Here is a draft.\n\n\`\`\`json\n${JSON.stringify({
        goal_id: 'weekly-digest',
        objective: 'Publish a weekly digest of the notes.',
        todos: ['Collect the notes changed this week.', 'Write the digest draft.', 'Link each note from the digest.'],
        gates: ['Approve the digest before it is sent.'],
      })}\n\`\`\`\n`;
    case 'bad-goal':
      return '```json\n{"goal_id": "Weekly Digest!", "objective": "", "todos": []}\n```\n';
    case 'answer':
      return 'The goal tidy-notes waits on the publish gate.';
    default:
      return `unknown scenario ${scenario}`;
  }
}

// The 'tools' scenario is an agent in a tool-calling loop (as Copilot's agent mode runs one): the prompt names
// the goal, agent and turn; each reply is the next LoopX tool call, read off the tool results so far, until
// the turn is settled. It calls only tools the request offers.
const TOOL_STEPS = ['loopx_should_run', 'loopx_todo_complete', 'loopx_refresh_state', 'loopx_spend_slot'];

function toolResults(messages) {
  const results = [];
  for (const message of messages)
    for (const part of message.content)
      if (part && typeof part.callId === 'string' && Array.isArray(part.content)) {
        const json = part.content
          .map((inner) => (inner && typeof inner.value === 'string' ? inner.value : ''))
          .find((v) => v.startsWith('{'));
        results.push(json === undefined ? {} : JSON.parse(json));
      }
  return results;
}

function nextToolCall(prompt, messages, offered) {
  const [, goalId, agentId, turnInstanceId] = /goal=(\S+) agent=(\S+) turn=(\S+)/.exec(prompt) || [];
  const results = toolResults(messages);
  const step = results.length;
  if (step > 0 && results[step - 1].ok === false) return `LoopX refused: ${results[step - 1].error}`;
  if (step === 1 && results[0].should_run !== true) return `Not now: ${results[0].reason}`;
  if (step >= TOOL_STEPS.length) return 'The turn is done: todo completed, delivery recorded, slot spent.';
  const name = TOOL_STEPS[step];
  if (!offered.includes(name)) return `the request offers no ${name}`;
  const who = { goalId, agentId, turnInstanceId };
  const todoId = step === 0 ? undefined : results[0].heartbeat_receipt.todo_id;
  const input = [
    who,
    { ...who, todoId, evidence: 'notes/tools-note.md written', noFollowUp: true },
    { ...who, todoId, classification: 'validated_progress' },
    { ...who, todoId, execute: true },
  ][step];
  return new vscode.LanguageModelToolCallPart(`call-${turnInstanceId}-${step}`, name, input);
}

// The 'workspace-tools' scenario is LoopX's vscode-lm executor offering its workspace tools: the model reads a
// note, lists the notes, tries three edits LoopX must refuse (a ".." path, a file outside the write scope, a path
// through a symbolic link out of the project), makes one edit inside the scope, then answers with the result JSON.
// Every tool result it was handed is kept in `workspaceToolResults` for the test.
const workspaceToolResults = [];

function toolResultTexts(messages) {
  const texts = [];
  for (const message of messages)
    for (const part of message.content)
      if (part && typeof part.callId === 'string' && Array.isArray(part.content))
        texts.push(part.content.map((inner) => (inner && typeof inner.value === 'string' ? inner.value : '')).join(''));
  return texts;
}

function nextWorkspaceStep(prompt, messages, offered) {
  const results = toolResultTexts(messages);
  const step = results.length;
  const steps = [
    ['read_file', { path: 'notes/bread.md' }],
    ['list_files', { folder: 'notes' }],
    ['apply_edit', { path: '../escaped.md', new_text: 'escaped\n' }],
    ['apply_edit', { path: 'scripts/check-notes.js', new_text: 'process.exit(1)\n' }],
    ['apply_edit', { path: 'notes/away/escaped.md', new_text: 'escaped\n' }],
  ];
  if (step < steps.length) {
    const [name, input] = steps[step];
    if (!offered.includes(name)) return `the request offers no ${name}`;
    return new vscode.LanguageModelToolCallPart(`ws-${step}`, name, input);
  }
  if (step === steps.length) {
    const title = results[0].split('\n')[0];
    const notes = results[1].split('\n').filter((line) => line.endsWith('.md')).length;
    return new vscode.LanguageModelToolCallPart(`ws-${step}`, 'apply_edit', {
      path: 'notes/lm-note.md',
      new_text: `# LM note\n\nRead ${title}; ${notes} notes listed.\n`,
    });
  }
  workspaceToolResults.splice(0, workspaceToolResults.length, ...results);
  const turnKey = (/sha256:[0-9a-f]{64}/.exec(prompt) || [''])[0];
  const todoId = (/- id: `([^`]+)`/.exec(prompt) || [null, 'todo_related'])[1];
  const result = {
    schema_version: 'loopx_turn_result_v0',
    turn_key: turnKey,
    result_kind: 'validated_progress',
    summary: 'Wrote notes/lm-note.md through the workspace tools.',
    classification: 'related_section_started',
    recommended_action: 'Link the remaining notes.',
    next_action: 'Link the remaining notes.',
    delivery_batch_scale: 'single_surface',
    delivery_outcome: 'outcome_progress',
    evidence: ['notes/lm-note.md names the note it read'],
    todo: { todo_id: todoId, disposition: 'in_progress', note: 'one note written' },
    changed_files: [],
  };
  return `Done.\n\n\`\`\`json\n${JSON.stringify(result)}\n\`\`\`\n`;
}

module.exports.activate = function activate(context) {
  context.subscriptions.push(
    vscode.lm.registerLanguageModelChatProvider('loopx-test', {
      provideLanguageModelChatInformation: () => [
        {
          id: 'loopx-test-model',
          name: 'LoopX Test Model',
          family: 'deterministic',
          version: '1',
          maxInputTokens: 100000,
          maxOutputTokens: 8000,
          capabilities: { toolCalling: true },
        },
        // The same replies from a model that says it cannot call tools: LoopX's one-shot path.
        {
          id: 'loopx-test-one-shot',
          name: 'LoopX Test Model (no tools)',
          family: 'one-shot',
          version: '1',
          maxInputTokens: 100000,
          maxOutputTokens: 8000,
          capabilities: { toolCalling: false },
        },
      ],
      provideLanguageModelChatResponse: async (_model, messages, _options, progress, token) => {
        const prompt = textOf(messages);
        prompts.push(prompt);
        offeredTools.push(((_options && _options.tools) || []).length);
        if (scenario === 'slow') {
          // Streams until cancelled: the test cancels the turn.
          for (let i = 0; i < 600 && !token.isCancellationRequested; i++) {
            progress.report(new vscode.LanguageModelTextPart(`thinking ${i}\n`));
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          return;
        }
        if (scenario === 'tools' || scenario === 'workspace-tools') {
          const offered = ((_options && _options.tools) || []).map((tool) => tool.name);
          const next =
            scenario === 'tools'
              ? nextToolCall(prompt, messages, offered)
              : nextWorkspaceStep(prompt, messages, offered);
          progress.report(typeof next === 'string' ? new vscode.LanguageModelTextPart(next) : next);
          return;
        }
        // Stream in pieces, as a real model does.
        const text = reply(prompt);
        for (let i = 0; i < text.length; i += 64)
          progress.report(new vscode.LanguageModelTextPart(text.slice(i, i + 64)));
      },
      provideTokenCount: async (_model, text) =>
        Math.ceil((typeof text === 'string' ? text : textOf([text])).length / 4),
    }),
  );
  return {
    setScenario(name) {
      scenario = name;
    },
    prompts,
    offeredTools,
    workspaceToolResults,
  };
};
