import { readFileSync, readdirSync } from 'node:fs';
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
