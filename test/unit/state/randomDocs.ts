/**
 * Seeded random state files built from a small grammar: front matter or not, headings at levels
 * 2–4 in any case, todos with every marker, metadata comments (some badly encoded), continuation
 * and comment lines, prose, blank lines, trailing whitespace, LF/CRLF/mixed endings and files
 * without a final newline.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomStateDocument(seed: number): string {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const chance = (p: number): boolean => random() < p;
  const lines: string[] = [];
  const words = [
    'Implement',
    'the',
    'parser',
    'validate',
    'release',
    'fix',
    'tests',
    'approve',
    'owner',
    '中文',
    'ünïcode',
    'a%b',
    'x=y',
    '-->',
    'P1:',
  ];
  const sentence = (): string =>
    Array.from({ length: 1 + Math.floor(random() * 6) }, () => pick(words)).join(pick([' ', ' ', '  ', '\t']));
  const trailing = (): string => (chance(0.15) ? pick([' ', '  ', '\t', ' \t ']) : '');

  if (chance(0.7)) {
    lines.push('---', `status: ${pick(['active', '"paused"', "'done'"])}`);
    if (chance(0.6)) lines.push(`updated_at: 2026-0${1 + Math.floor(random() * 9)}-01T00:00:00+00:00`);
    if (chance(0.3)) lines.push(`objective: "${sentence()}"`);
    if (chance(0.2)) lines.push('no colon line');
    lines.push('---');
  }
  const headings = [
    'Agent Todo',
    'agent todo',
    'Agent Todo',
    '  Agent   TODO ',
    'Project Agent Todo',
    'User Todo',
    'USER TODO / Owner Review Reading Queue',
    'Codex Todo',
    'Next Action',
    'next action',
    'Recent User Feedback',
    'Progress Ledger',
    'Completed Work Archive',
    'Agent Todo Archive',
    'Notes',
    '完成归档',
  ];
  const sectionCount = 2 + Math.floor(random() * 6);
  let idCounter = 0;
  for (let s = 0; s < sectionCount; s++) {
    if (chance(0.1)) lines.push(sentence());
    lines.push(`${'#'.repeat(2 + Math.floor(random() * 3))} ${pick(headings)}${trailing()}`);
    if (chance(0.4)) lines.push('');
    const itemCount = Math.floor(random() * 9);
    for (let i = 0; i < itemCount; i++) {
      const kind = random();
      if (kind < 0.6) {
        const priority = chance(0.4) ? `[P${Math.floor(random() * 5)}] ` : '';
        lines.push(
          `${pick(['-', '-', '*'])}${pick([' ', ' ', '  '])}[${pick([' ', ' ', 'x', 'X', '-'])}] ${priority}${sentence()}${trailing()}`,
        );
        if (chance(0.2)) lines.push(`  ${sentence()}`);
        if (chance(0.6)) {
          const tokens: string[] = [];
          if (chance(0.7))
            tokens.push(`todo_id=${chance(0.03) ? 'todo_dup' : chance(0.05) ? 'BAD' : `todo_r${seed}_${idCounter++}`}`);
          if (chance(0.5)) tokens.push(`status=${pick(['open', 'done', 'blocked', 'deferred', 'weird'])}`);
          if (chance(0.4)) tokens.push(`task_class=${pick(['advancement_task', 'user_gate', 'continuous_monitor'])}`);
          if (chance(0.3)) tokens.push(`claimed_by=${pick(['codex-main', 'codex-side'])}`);
          if (chance(0.2)) tokens.push(`note=${pick(['a%20b', '100%zz', '%E2%82', 'plain'])}`);
          if (chance(0.05)) tokens.push('stray');
          lines.push(`${pick(['  ', '    ', '\t'])}<!-- loopx:todo ${tokens.join(pick([' ', '  ']))} -->${trailing()}`);
        }
        if (chance(0.05)) lines.push('  <!-- a plain comment inside a todo -->');
      } else if (kind < 0.75) {
        lines.push(`- ${sentence()}${trailing()}`);
      } else if (kind < 0.85) {
        lines.push('');
      } else if (kind < 0.92) {
        lines.push(`<!-- ${sentence()} -->`);
      } else {
        lines.push(`${sentence()}${trailing()}`);
      }
    }
  }
  const eolStyle = random();
  let text = '';
  lines.forEach((line, i) => {
    const eol = eolStyle < 0.6 ? '\n' : eolStyle < 0.9 ? '\r\n' : pick(['\n', '\r\n', '\r']);
    text += line + (i === lines.length - 1 && chance(0.2) ? '' : eol);
  });
  return text;
}
