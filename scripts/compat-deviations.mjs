// The machine-readable list of deliberate deviations from the original Python LoopX (test/compat/deviations.json),
// read by `npm run compat:seeds` (scripts/compat-seeds.mjs) and checked by test/unit/compat/deviations.test.ts.
//
// Each entry: {"family", "rule", "description", "cases"}. `family` is one of the kit's families, `rule` a short
// kebab-case name of the rule the deviation changes, `description` which shape of case it covers (so a reviewer can
// tell a new draw's difference is the same deviation), `cases` the case keys it covers: `<seed>:<case-id>` for a
// generated seed, `kit:<case-id>` for the shipped cases, or a glob of either (`*` any run of characters, `?` one).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const FAMILIES = Object.freeze([
  'registry',
  'status',
  'quota',
  'archive',
  'refresh',
  'todo',
  'slash',
  'onboard',
  'configure',
  'register',
]);

export const DEVIATIONS_FILE = resolve(
  new URL('..', import.meta.url).pathname,
  join('test', 'compat', 'deviations.json'),
);

const RULE = /^[a-z0-9]+(-[a-z0-9]+)*$/;
// A case key: a seed (a number, or `kit`, or a glob of them), a colon, a case id (or a glob of one).
const CASE_KEY = /^(kit|\d+|[\d*?]+):[a-z*?][a-z0-9*?-]*$/;

/** The problems of a parsed deviation list (an empty array when it is well formed). */
export function deviationProblems(list) {
  if (!Array.isArray(list)) return ['the deviation list is not a JSON array'];
  const problems = [];
  list.forEach((entry, i) => {
    const at = `entry ${i}${entry && typeof entry.rule === 'string' ? ` (${entry.rule})` : ''}`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      problems.push(`${at}: not an object`);
      return;
    }
    const keys = Object.keys(entry).sort().join(',');
    if (keys !== 'cases,description,family,rule')
      problems.push(`${at}: keys are ${keys}, not cases,description,family,rule`);
    if (!FAMILIES.includes(entry.family))
      problems.push(`${at}: family ${JSON.stringify(entry.family)} is not a kit family`);
    if (typeof entry.rule !== 'string' || !RULE.test(entry.rule))
      problems.push(`${at}: rule must be a kebab-case name`);
    if (typeof entry.description !== 'string' || entry.description.trim().length < 20)
      problems.push(`${at}: description must say which shape of case the deviation covers`);
    if (!Array.isArray(entry.cases) || entry.cases.length === 0)
      problems.push(`${at}: cases must be a non-empty array`);
    else
      for (const key of entry.cases)
        if (typeof key !== 'string' || !CASE_KEY.test(key))
          problems.push(`${at}: case ${JSON.stringify(key)} is not <seed>:<case-id>, kit:<case-id> or a glob of one`);
  });
  const seen = new Set();
  for (const entry of list)
    if (entry && typeof entry === 'object' && typeof entry.family === 'string' && typeof entry.rule === 'string') {
      const id = `${entry.family}/${entry.rule}`;
      if (seen.has(id)) problems.push(`${id} is listed twice`);
      seen.add(id);
    }
  return problems;
}

/** The list in `file`; throws with every problem when it is malformed. */
export function loadDeviations(file = DEVIATIONS_FILE) {
  const list = JSON.parse(readFileSync(file, 'utf8'));
  const problems = deviationProblems(list);
  if (problems.length > 0) throw new Error(`${file}:\n  ${problems.join('\n  ')}`);
  return list;
}

/** A case-key glob as a regular expression (`*` any run of characters, `?` one; nothing else is special). */
export function globRegExp(glob) {
  const body = [...glob].map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.+^${}()|[\]\\-]/g, '\\$&')));
  return new RegExp(`^${body.join('')}$`);
}

/**
 * The deviation that covers a differing case: `seed` is a number or `kit`, `caseId` the kit's id, `family` the
 * case's family (an entry covers only cases of its own family). Undefined when none does.
 */
export function deviationFor(list, seed, caseId, family) {
  const key = `${seed}:${caseId}`;
  return list.find((entry) => entry.family === family && entry.cases.some((glob) => globRegExp(glob).test(key)));
}

/**
 * Listed deviations that did not differ: the entries' exact keys (no glob) of `seed` whose case was compared
 * (`compared`, a set of case ids) and matched (not in `differing`, a set of case ids).
 */
export function matchingListedCases(list, seed, compared, differing) {
  const prefix = `${seed}:`;
  const found = [];
  for (const entry of list)
    for (const key of entry.cases) {
      const id = key.slice(prefix.length);
      if (key.startsWith(prefix) && !/[*?]/.test(key) && compared.has(id) && !differing.has(id)) found.push(key);
    }
  return found;
}
