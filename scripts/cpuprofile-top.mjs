#!/usr/bin/env node
// Summarizes a V8 .cpuprofile: the functions with the most self time and the most total time
// (inclusive of what they call), as `ms  function  file:line`.
//
//   node scripts/cpuprofile-top.mjs PROFILE [--top 25] [--filter out/extension.js]
import * as fs from 'node:fs';

const args = process.argv.slice(2);
const file = args[0];
if (!file) throw new Error('usage: node scripts/cpuprofile-top.mjs PROFILE [--top N] [--filter TEXT]');
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1] : fallback;
};
const top = Number(option('top', '25'));
const filter = option('filter', '');
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const deltas = profile.timeDeltas;
const selfMs = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  selfMs.set(id, (selfMs.get(id) ?? 0) + (deltas[i + 1] ?? 0) / 1000);
}
const label = (node) => {
  const f = node.callFrame;
  // line:column: the CLI bundle is written without line breaks (scripts/build.mjs), so the column places a function.
  const where = f.url
    ? `${f.url.replace(/^.*\/(out|node_modules)\//, '$1/')}:${f.lineNumber + 1}:${f.columnNumber + 1}`
    : '';
  return `${f.functionName || '(anonymous)'}  ${where}`;
};
const self = new Map();
const total = new Map();
for (const [id, ms] of selfMs) {
  const node = byId.get(id);
  self.set(label(node), (self.get(label(node)) ?? 0) + ms);
  const seen = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const name = label(byId.get(at));
    if (seen.has(name)) continue;
    seen.add(name);
    total.set(name, (total.get(name) ?? 0) + ms);
  }
}
const all = [...selfMs.values()].reduce((a, b) => a + b, 0);
const print = (title, map) => {
  console.log(`\n${title}`);
  for (const [name, ms] of [...map]
    .filter(([n]) => n.includes(filter))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top))
    console.log(`${ms.toFixed(1).padStart(9)} ms  ${name}`);
};
console.log(`${file}: ${all.toFixed(0)} ms sampled`);
print('self time', self);
print('total time', total);
