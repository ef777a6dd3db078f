// Validation command of the demo goal: every note must start with a level-one title.
const fs = require('node:fs');
const path = require('node:path');
const dir = path.join(__dirname, '..', 'notes');
const bad = fs.readdirSync(dir).filter((f) => f.endsWith('.md') && !/^# \S/.test(fs.readFileSync(path.join(dir, f), 'utf8')));
if (bad.length > 0) {
  console.error(`notes without a level-one title: ${bad.join(', ')}`);
  process.exit(1);
}
console.log('all notes have a level-one title');
