import { readFileSync, readdirSync } from 'node:fs';
import ts from 'typescript';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** Import facts of the source tree, for the architecture tests. */

export const ROOT = join(__dirname, '..', '..');
const CORE = join(ROOT, 'src', 'core');

export interface ImportEdge {
  /** The importing file, relative to the repository root. */
  from: string;
  /** The imported module, resolved and relative to the repository root (without extension). */
  to: string;
  typeOnly: boolean;
}

export function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true })
    .map(String)
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(dir, file));
}

const IMPORT = /^(import|export)\s+(type\s+)?[^'"]*?from\s+['"](\.{1,2}\/[^'"]*)['"]/gm;
const DYNAMIC = /(?:import|require)\(\s*['"](\.{1,2}\/[^'"]*)['"]\s*\)/g;
const SIDE_EFFECT = /^import\s+['"](\.{1,2}\/[^'"]*)['"]/gm;

export function importsOf(file: string): ImportEdge[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const edges: ImportEdge[] = [];
  const add = (spec: string, typeOnly: boolean): void => {
    const target = relative(ROOT, resolve(ROOT, dirname(file), spec)).replace(/\.(ts|js)$/, '');
    edges.push({ from: file, to: target, typeOnly });
  };
  for (const match of text.matchAll(IMPORT)) add(match[3] ?? '', match[2] !== undefined);
  for (const match of text.matchAll(DYNAMIC)) add(match[1] ?? '', false);
  for (const match of text.matchAll(SIDE_EFFECT)) add(match[1] ?? '', false);
  return edges;
}

/** The folder of `src/core` a path belongs to (`status` for src/core/status/projection/x), or `.` for a root file. */
export function coreFolderOf(path: string): string | null {
  const rel = relative(CORE, join(ROOT, path));
  if (rel.startsWith('..')) return null;
  const parts = rel.split(sep);
  return parts.length > 1 ? (parts[0] ?? '.') : '.';
}

/** Folder → the folders it imports (values only: a type-only import is still a dependency). */
export function coreFolderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(join('src', 'core'))) {
    const from = coreFolderOf(file) ?? '.';
    if (!graph.has(from)) graph.set(from, new Set());
    for (const edge of importsOf(file)) {
      const to = coreFolderOf(edge.to);
      if (to !== null && to !== from && to !== '.') graph.get(from)?.add(to);
    }
  }
  return graph;
}

/** Cycles between folders (strongly connected components of more than one folder). */
export function folderCycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    indices.set(node, index);
    low.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, indices.get(next) ?? 0));
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      for (;;) {
        const member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
        if (member === node) break;
      }
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return cycles;
}

/** Every folder `start` reaches through imports, itself included. */
export function reachable(graph: Map<string, Set<string>>, start: string): Set<string> {
  const seen = new Set<string>([start]);
  const queue = [start];
  while (queue.length > 0) {
    for (const next of graph.get(queue.pop() as string) ?? []) {
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return seen;
}

/** Member names of every interface and type literal alias declared in src/core, by name (for the goal-lookup rule). */
function declaredShapes(files: readonly string[]): Map<string, { members: Set<string>; bases: string[] }> {
  const shapes = new Map<string, { members: Set<string>; bases: string[] }>();
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
    source.forEachChild((node) => {
      if (ts.isInterfaceDeclaration(node)) {
        const members = new Set(node.members.flatMap((m) => (m.name && ts.isIdentifier(m.name) ? [m.name.text] : [])));
        const bases = (node.heritageClauses ?? []).flatMap((h) => h.types.map((t) => t.expression.getText(source)));
        shapes.set(node.name.text, { members, bases });
      } else if (ts.isTypeAliasDeclaration(node) && ts.isTypeLiteralNode(node.type)) {
        const members = new Set(
          node.type.members.flatMap((m) => (m.name && ts.isIdentifier(m.name) ? [m.name.text] : [])),
        );
        shapes.set(node.name.text, { members, bases: [] });
      }
    });
  }
  return shapes;
}

/**
 * Exported functions of src/core outside `ops/` (and `api/`, the library layer being folded into
 * ops) that look a goal up by `(registryPath, goalId)`: as two parameters, or as an options object
 * (inline, or an interface/type declared in src/core, bases included) with both fields and no
 * resolved `runtimeRoot` (a handle is not a lookup). `file: name`.
 */
export function goalLookupFunctions(): string[] {
  const files = sourceFiles(join('src', 'core')).filter(
    (f) => !f.startsWith(join('src', 'core', 'ops') + sep) && !f.startsWith(join('src', 'core', 'api') + sep),
  );
  const shapes = declaredShapes(sourceFiles(join('src', 'core')));
  const fieldsOf = (name: string, seen = new Set<string>()): Set<string> => {
    const shape = shapes.get(name);
    if (shape === undefined || seen.has(name)) return new Set();
    seen.add(name);
    const all = new Set(shape.members);
    for (const base of shape.bases) for (const field of fieldsOf(base.replace(/<.*$/, ''), seen)) all.add(field);
    return all;
  };
  const typeFields = (type: ts.TypeNode | undefined, source: ts.SourceFile): Set<string> => {
    if (type === undefined) return new Set();
    if (ts.isTypeLiteralNode(type))
      return new Set(type.members.flatMap((m) => (m.name && ts.isIdentifier(m.name) ? [m.name.text] : [])));
    // `Pick<GoalRef, 'registryPath' | 'goalId'>`: the picked fields (a Pick of a handle is still a lookup without its runtime root).
    if (ts.isTypeReferenceNode(type) && type.typeName.getText(source) === 'Pick' && type.typeArguments?.length === 2) {
      const keys = type.typeArguments[1]!;
      const literals = ts.isUnionTypeNode(keys) ? keys.types : [keys];
      return new Set(
        literals.flatMap((k) => (ts.isLiteralTypeNode(k) && ts.isStringLiteral(k.literal) ? [k.literal.text] : [])),
      );
    }
    if (ts.isTypeReferenceNode(type)) return fieldsOf(type.typeName.getText(source));
    if (ts.isIntersectionTypeNode(type)) {
      const all = new Set<string>();
      for (const part of type.types) for (const field of typeFields(part, source)) all.add(field);
      return all;
    }
    return new Set();
  };
  const found: string[] = [];
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
    source.forEachChild((node) => {
      if (!ts.isFunctionDeclaration(node) || node.name === undefined) return;
      if (!(node.modifiers ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) return;
      const names = new Set<string>();
      for (const parameter of node.parameters) {
        if (ts.isIdentifier(parameter.name)) names.add(parameter.name.text);
        else if (ts.isObjectBindingPattern(parameter.name))
          for (const element of parameter.name.elements)
            if (ts.isIdentifier(element.name)) names.add(element.name.text);
        for (const field of typeFields(parameter.type, source)) names.add(field);
      }
      // A resolved goal (a handle carrying its runtime root: `GoalRef`) is not a lookup.
      if (names.has('registryPath') && names.has('goalId') && !names.has('runtimeRoot'))
        found.push(`${relative(join('src', 'core'), file).split(sep).join('/')}: ${node.name.text}`);
    });
  }
  return found.sort();
}

/** The functions that read a goal's files for deciding: the registry, the state file and the run index. */
export const GOAL_FILE_READERS: Readonly<Record<string, readonly string[]>> = {
  'src/core/registry/read': ['readRegistry', 'readRegistrySync'],
  'src/core/state/stateFile': ['readStateFile', 'readStateText'],
  'src/core/runtime/runIndex': ['readRunIndex', 'readGoalRuns'],
  'src/core/quota/runHistory': ['RunHistoryReader'],
};

const NAMED_IMPORT = /^import\s+(?:type\s+)?\{([^}]*)\}\s*from\s+['"](\.{1,2}\/[^'"]*)['"]/gm;

/** `file -> reader` for every value import of a goal-file reader (`GOAL_FILE_READERS`) in src/core. */
export function goalFileReaderImports(): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(join('src', 'core'))) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const match of text.matchAll(NAMED_IMPORT)) {
      if (/^import\s+type\b/.test(match[0])) continue;
      const target = relative(ROOT, resolve(ROOT, dirname(file), match[2] ?? '')).replace(/\.(ts|js)$/, '');
      const readers = GOAL_FILE_READERS[target.split(sep).join('/')];
      if (readers === undefined) continue;
      for (const spec of (match[1] ?? '').split(',')) {
        const name =
          spec
            .trim()
            .replace(/^type\s+/, '')
            .split(/\s+as\s+/)[0] ?? '';
        if (spec.trim().startsWith('type ')) continue;
        if (readers.includes(name))
          found.push(`${relative(join('src', 'core'), file).split(sep).join('/')} -> ${name}`);
      }
    }
  }
  return found.sort();
}

/** Files in src/core that name a persistent cache file (`*-cache.json` / `*cache.json` literals). */
export function persistentCacheFileNames(): string[] {
  const names = new Set<string>();
  for (const file of sourceFiles(join('src', 'core'))) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const match of text.matchAll(/['"`]([\w.-]*cache[\w.-]*\.json)['"`]/gi)) names.add(match[1] ?? '');
  }
  return [...names].sort();
}

/** Files in src/core that name a persistent cache file (see {@link persistentCacheFileNames}). */
export function persistentCacheFileHomes(): string[] {
  return sourceFiles(join('src', 'core'))
    .filter((file) => /['"`][\w.-]*cache[\w.-]*\.json['"`]/i.test(readFileSync(join(ROOT, file), 'utf8')))
    .sort();
}

/**
 * Files in src/core that keep goal files parsed across calls: a map whose values are parsed state
 * files (`StateFileSnapshot`, `StateRead`), run-index reads (`RunIndexRead`) or registry documents
 * held by stamp, or a `RunHistoryReader` built.
 */
export function goalFileCacheHomes(): string[] {
  const keeps =
    /new Map<string,\s*(?:StateFileSnapshot|KeptIndexRead|KeptRegistry|Stamped<(?:StateRead|RunIndexRead|Record<string, unknown>))|new RunHistoryReader\(/;
  return sourceFiles(join('src', 'core'))
    .filter((file) => keeps.test(readFileSync(join(ROOT, file), 'utf8')))
    .sort();
}

/** The goal file kinds an in-memory cache can keep, by the type of the values it holds. */
const GOAL_FILE_CACHE_KINDS: Readonly<Record<'state' | 'runIndex' | 'registry', RegExp>> = {
  // A map (or a field typed as one) whose values are, or wrap, parsed state files or their text.
  state: /new Map<string,\s*[^;=]*\b(?:StateFileSnapshot|StateRead|StateDocument|KeptState)\b/g,
  runIndex: /new Map<string,\s*[^;=]*\b(?:RunIndexRead|KeptIndexRead)\b|new RunHistoryReader\(/g,
  registry: /new Map<string,\s*[^;=]*\b(?:Stamped<Record<string, unknown>>|KeptRegistry)\b/g,
};

/**
 * Every in-memory cache of a goal file kind in src (`file` once per cache it declares), and where the
 * classes holding the process's caches are built (`new GoalCache(`, `new StateFileCache(`).
 */
export function goalFileCachesByKind(): Record<keyof typeof GOAL_FILE_CACHE_KINDS | 'builders', string[]> {
  const found: Record<keyof typeof GOAL_FILE_CACHE_KINDS | 'builders', string[]> = {
    state: [],
    runIndex: [],
    registry: [],
    builders: [],
  };
  for (const file of sourceFiles('src')) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const [kind, pattern] of Object.entries(GOAL_FILE_CACHE_KINDS) as [
      keyof typeof GOAL_FILE_CACHE_KINDS,
      RegExp,
    ][])
      for (const _ of text.matchAll(pattern)) found[kind].push(file);
    for (const _ of text.matchAll(/new (?:GoalCache|StateFileCache|RegistryCache|RunIndexCache)\(/g))
      found.builders.push(file);
  }
  for (const list of Object.values(found)) list.sort();
  return found;
}

/** What a doc comment says of an optional input the caller read before: "as the caller already read it: not read again". */
const PRE_READ_DOC =
  /not read again|reading it again|already (read|resolved|parsed|found)|as (status|the caller) (found|read|knows|just read)|the caller (read|holds)|instead of reading|nothing is read|is not read/i;

/**
 * Optional pre-read parameters in src/core outside `ops/`: an optional parameter, or an optional member of an
 * interface or type literal, whose doc comment says the caller may hand in what it already read so it is not
 * read again (issue 31: load the goal once through `core/goal` and pass the snapshot; no second way in).
 * `file: Owner.member` (`file: function(parameter)` for a parameter).
 */
export function optionalPreReadParameters(): string[] {
  const found: string[] = [];
  const files = sourceFiles(join('src', 'core')).filter((f) => !f.startsWith(join('src', 'core', 'ops') + sep));
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const rel = relative(join('src', 'core'), file).split(sep).join('/');
    const docOf = (node: ts.Node): string =>
      (ts.getLeadingCommentRanges(text, node.getFullStart()) ?? []).map((r) => text.slice(r.pos, r.end)).join('\n');
    const visit = (node: ts.Node, owner: string, ownerPreRead: boolean): void => {
      let next = owner;
      let nextPreRead = ownerPreRead;
      if (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) || ts.isClassDeclaration(node)) {
        next = node.name?.text ?? owner;
        nextPreRead = ts.isClassDeclaration(node) ? false : PRE_READ_DOC.test(docOf(node));
      } else if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name !== undefined)
        next = node.name.getText(source);
      if (
        ts.isPropertySignature(node) &&
        node.questionToken !== undefined &&
        ts.isIdentifier(node.name) &&
        (ownerPreRead || PRE_READ_DOC.test(docOf(node)))
      )
        found.push(`${rel}: ${owner}.${node.name.text}`);
      if (
        ts.isParameter(node) &&
        (node.questionToken !== undefined || node.initializer !== undefined) &&
        ts.isIdentifier(node.name) &&
        PRE_READ_DOC.test(docOf(node))
      )
        found.push(`${rel}: ${owner}(${node.name.text})`);
      ts.forEachChild(node, (child) => visit(child, next, nextPreRead));
    };
    visit(source, '', false);
  }
  return found.sort();
}

/**
 * What names a goal type: a handle of one goal (`…Goal`, `…GoalPlace`, `…GoalLocation`, `…GoalHandle`, `GoalRef`) or a
 * goal target of a reader (`Goal…Target`, `Goal…Location`). Issue 31: below `ops/` there is one, the `GoalRef`.
 */
const GOAL_TYPE_NAME = /Goal(Place|Location|Handle|Ref)?$|^Goal\w*(Target|Location)$/;

/**
 * Exported interfaces and type aliases of src/core outside `ops/` whose name says they are a goal type
 * (`GOAL_TYPE_NAME`), as `file: Name`: what the goal-type rule compares with its allow-list.
 */
export function goalTypes(): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(join('src', 'core'))) {
    if (file.startsWith(join('src', 'core', 'ops') + sep)) continue;
    const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
    source.forEachChild((node) => {
      if (!ts.isInterfaceDeclaration(node) && !ts.isTypeAliasDeclaration(node)) return;
      if (!(node.modifiers ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) return;
      if (GOAL_TYPE_NAME.test(node.name.text))
        found.push(`${relative(join('src', 'core'), file).split(sep).join('/')}: ${node.name.text}`);
    });
  }
  return found.sort();
}
