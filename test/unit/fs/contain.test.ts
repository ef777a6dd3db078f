import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic, writeFileAtomicSync } from '../../../src/core/fs/atomicWrite';
import { assertInside, resolveReal } from '../../../src/core/fs/contain';
import { isLoopxError } from '../../../src/core/errors';
import { tempDir } from '../../support/tempDir';

/** `<base>/project` and `<base>/outside`, each with a file. */
function layout(): { project: string; outside: string } {
  const base = tempDir();
  const project = path.join(base, 'project');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(path.join(project, '.loopx'), { recursive: true });
  fs.mkdirSync(outside);
  return { project, outside };
}

const refused = (error: unknown): boolean => isLoopxError(error, 'path_outside_root');

describe('containment of writers (symlinks)', () => {
  it('resolves a dangling symlink to where a write would create the file', () => {
    const { project, outside } = layout();
    const link = path.join(project, 'link.json');
    fs.symlinkSync(path.join(outside, 'later', 'new.json'), link);
    assert.equal(resolveReal(link), path.join(outside, 'later', 'new.json'));
    assert.equal(resolveReal(path.join(project, 'a', 'b')), path.join(project, 'a', 'b'));
  });

  it('assertInside accepts paths inside the root and refuses a symlink out, naming link and target', () => {
    const { project, outside } = layout();
    assert.equal(assertInside(project, path.join(project, 'x', 'y.json')), path.join(project, 'x', 'y.json'));
    fs.symlinkSync(outside, path.join(project, 'escape'));
    assert.throws(
      () => assertInside(project, path.join(project, 'escape', 'f.json')),
      (error: unknown) =>
        refused(error) &&
        (error as Error).message.includes(path.join(project, 'escape', 'f.json')) &&
        (error as Error).message.includes(path.join(outside, 'f.json')),
    );
    // A sibling whose name starts like the root is not inside it.
    assert.throws(() => assertInside(project, `${project}-other/f`), refused);
  });

  it('writes through a symlinked file whose target is inside the root: the link stays, the target changes', async () => {
    const { project } = layout();
    const real = path.join(project, 'shared', 'registry.json');
    fs.mkdirSync(path.dirname(real));
    fs.writeFileSync(real, 'old\n');
    const link = path.join(project, '.loopx', 'registry.json');
    fs.symlinkSync(path.relative(path.dirname(link), real), link);
    await writeFileAtomic(link, 'new\n', { within: project });
    assert.ok(fs.lstatSync(link).isSymbolicLink(), 'the link was replaced by a plain file');
    assert.equal(fs.readFileSync(real, 'utf8'), 'new\n');
    assert.deepEqual(
      fs.readdirSync(path.dirname(real)).filter((n) => n.endsWith('.tmp')),
      [],
      'no temp file left next to the target',
    );
    writeFileAtomicSync(link, 'sync\n', { within: project });
    assert.ok(fs.lstatSync(link).isSymbolicLink());
    assert.equal(fs.readFileSync(real, 'utf8'), 'sync\n');
  });

  it('refuses to write through a symlink that leads outside the root, and changes nothing', async () => {
    const { project, outside } = layout();
    const real = path.join(outside, 'registry.json');
    fs.writeFileSync(real, 'old\n');
    const link = path.join(project, '.loopx', 'registry.json');
    fs.symlinkSync(real, link);
    await assert.rejects(writeFileAtomic(link, 'new\n', { within: project }), refused);
    assert.throws(() => writeFileAtomicSync(link, 'new\n', { within: project }), refused);
    assert.equal(fs.readFileSync(real, 'utf8'), 'old\n');
    assert.ok(fs.lstatSync(link).isSymbolicLink());
    assert.deepEqual(fs.readdirSync(outside), ['registry.json']);
  });

  it('without roots, a symlinked file is written through only when its target is in the same folder', async () => {
    const { project, outside } = layout();
    fs.writeFileSync(path.join(project, 'target.json'), 'old\n');
    fs.symlinkSync('target.json', path.join(project, 'near.json'));
    await writeFileAtomic(path.join(project, 'near.json'), 'new\n');
    assert.equal(fs.readFileSync(path.join(project, 'target.json'), 'utf8'), 'new\n');
    fs.symlinkSync(path.join(outside, 'far.json'), path.join(project, 'far.json'));
    await assert.rejects(writeFileAtomic(path.join(project, 'far.json'), 'x'), refused);
    assert.equal(fs.existsSync(path.join(outside, 'far.json')), false);
  });
});
