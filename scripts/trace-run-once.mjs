// Follows runOnce's options from the operation to the disk reads (docs/architecture.md, "From runOnce's options to
// the disk"): a call graph over src/core from `runOnce`, restricted to calls whose arguments carry the caller's
// inputs (its parameters, or locals built from them), kept where it reaches a function that reads a file (an `fs`
// read, stat or lock). Prints the places (functions, plus the operation) and the folder crossings (calls from one
// src/core folder into another, plus op -> turn). `node scripts/trace-run-once.mjs [repo root] [-v]`.
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const rootArgument = process.argv.slice(2).find((a) => a !== '-v');
const ROOT = path.resolve(rootArgument ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
const cfg = ts.getParsedCommandLineOfConfigFile(
  path.join(ROOT, 'tsconfig.json'),
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic() {} },
);
const files = cfg.fileNames.filter((f) => f.startsWith(path.join(ROOT, 'src')));
const program = ts.createProgram(files, cfg.options);
const checker = program.getTypeChecker();
const CORE = path.join(ROOT, 'src', 'core') + path.sep;
const READ =
  /^(readFile|readFileSync|readdir|readdirSync|stat|statSync|lstat|lstatSync|existsSync|open|openSync|read|readSync|access|accessSync|realpath|realpathSync|createReadStream)$/;
const fnKey = (decl) =>
  `${path.relative(CORE, decl.getSourceFile().fileName)}:${decl.name ? decl.name.getText() : ts.isVariableDeclaration(decl.parent) ? decl.parent.name.getText() : '?'}`;
function declOf(callee) {
  let sym = checker.getSymbolAtLocation(ts.isPropertyAccessExpression(callee) ? callee.name : callee);
  if (!sym) return null;
  if (sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
  for (const d of sym.declarations ?? []) {
    if (!d.getSourceFile().fileName.startsWith(CORE)) continue;
    if ((ts.isFunctionDeclaration(d) || ts.isMethodDeclaration(d)) && d.body) return d;
    if (
      ts.isVariableDeclaration(d) &&
      d.initializer &&
      (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer))
    )
      return d.initializer;
  }
  return null;
}
const info = new Map();
function analyse(fn) {
  if (info.has(fn)) return info.get(fn);
  const entry = {
    key: fnKey(ts.isArrowFunction(fn) || ts.isFunctionExpression(fn) ? fn.parent : fn),
    fn,
    edges: [],
    reads: false,
  };
  info.set(fn, entry);
  const tainted = new Set();
  collectNames(
    fn.parameters.map((p) => p.name),
    tainted,
  );
  // locals built from tainted names, to a fixpoint
  const decls = [];
  (function walk(n) {
    if (ts.isVariableDeclaration(n) && n.initializer) decls.push(n);
    n.forEachChild(walk);
  })(fn.body);
  // and loop variables over tainted collections (`for (const file of leaseFiles(goal))`)
  const loops = [];
  (function walk(n) {
    if ((ts.isForOfStatement(n) || ts.isForInStatement(n)) && ts.isVariableDeclarationList(n.initializer))
      loops.push(n);
    n.forEachChild(walk);
  })(fn.body);
  for (let changed = true; changed;) {
    changed = false;
    const taint = (from, names) => {
      if (!mentions(from, tainted)) return;
      const before = tainted.size;
      collectNames(names, tainted);
      if (tainted.size > before) changed = true;
    };
    for (const d of decls) taint(d.initializer, d.name);
    for (const l of loops)
      taint(
        l.expression,
        l.initializer.declarations.map((d) => d.name),
      );
  }
  (function walk(n) {
    if (ts.isCallExpression(n)) {
      const callee = n.expression;
      const name = ts.isPropertyAccessExpression(callee)
        ? callee.name.text
        : ts.isIdentifier(callee)
          ? callee.text
          : '';
      if (
        READ.test(name) &&
        ts.isPropertyAccessExpression(callee) &&
        /^(fs|fsp|promises|fs\.promises|handle)$/.test(callee.expression.getText())
      )
        entry.reads = true;
      const target = declOf(callee);
      // A method called on an object built from the inputs carries them too (`dir.run(op)`, `handle.read()`).
      const receiver = ts.isPropertyAccessExpression(callee) ? [callee.expression] : [];
      if (target && target !== fn && [...receiver, ...n.arguments].some((a) => mentions(a, tainted)))
        entry.edges.push(target);
    }
    n.forEachChild(walk);
  })(fn.body);
  return entry;
}
function collectNames(node, set) {
  if (Array.isArray(node)) return node.forEach((x) => collectNames(x, set));
  if (ts.isIdentifier(node)) set.add(node.text);
  else node.forEachChild((c) => collectNames(c, set));
}
function mentions(node, set) {
  let hit = false;
  (function walk(n) {
    if (hit) return;
    if (ts.isIdentifier(n) && set.has(n.text)) hit = true;
    else n.forEachChild(walk);
  })(node);
  return hit;
}
// start: runOnce
const src = program.getSourceFile(path.join(ROOT, 'src/core/turn/runOnce.ts'));
let start;
src.forEachChild((n) => {
  if (ts.isFunctionDeclaration(n) && n.name?.text === 'runOnce') start = n;
});
const seen = new Set();
const order = [];
(function dfs(fn) {
  if (seen.has(fn)) return;
  seen.add(fn);
  order.push(fn);
  for (const t of analyse(fn).edges) dfs(t);
})(start);
// keep functions that reach a read
const reaches = new Map();
function reach(fn, stack = new Set()) {
  if (reaches.has(fn)) return reaches.get(fn);
  if (stack.has(fn)) return false;
  stack.add(fn);
  const e = analyse(fn);
  let r = e.reads;
  for (const t of e.edges) if (reach(t, stack)) r = true;
  stack.delete(fn);
  reaches.set(fn, r);
  return r;
}
const kept = order.filter((f) => reach(f));
const folder = (k) => (k.includes('/') ? k.split('/')[0] : '.');
let crossings = 0;
const crossList = [];
for (const f of kept)
  for (const t of new Set(analyse(f).edges))
    if (kept.includes(t)) {
      const a = analyse(f).key,
        b = analyse(t).key;
      if (folder(a) !== folder(b)) {
        crossings++;
        crossList.push(`${a} -> ${b}`);
      }
    }
const keys = [...new Set(kept.map((f) => analyse(f).key))];
// Folder pairs: the distinct (from folder, to folder) edges among the crossings; "each folder crossed once" is one call
// per pair.
const folderPairs = new Set(crossList.map((c) => c.split(' -> ').map(folder).join(' -> ')));
console.log(
  `places ${keys.length + 1} (the op + ${keys.length} core functions), folder crossings ${crossings + 1} (op -> turn + ${crossings}), folders ${new Set(keys.map(folder)).size}, folder pairs ${folderPairs.size + 1}`,
);
if (process.argv.includes('-v')) {
  console.log(keys.sort().join('\n'));
  console.log('--');
  console.log(crossList.sort().join('\n'));
}
