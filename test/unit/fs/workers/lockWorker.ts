/**
 * Child process for the lock and atomic-write tests. Usage:
 *   increment <file> <count> <agent>       updateJsonFile(+1) `count` times
 *   plain-increment <file> <count>         read/modify/write with NON-atomic fs calls under withFileLock
 *   exclusive-increment <file> <count>     the same, holding a few ms, and failing at once when another
 *                                          process is inside the lock too (an O_EXCL marker file)
 *   reader <file> <stopFile>               parse <file> continuously until <stopFile> exists
 *   hold <target> <agent> <operation>      take the lock, print "held", then stall until killed
 *   write-loop <file>                      rewrite a large file atomically forever, alternating versions
 */
import * as fs from 'node:fs';
import { writeFileAtomic } from '../../../../src/core/fs/atomicWrite';
import { withFileLock } from '../../../../src/core/fs/fileLock';
import { updateJsonFile } from '../../../../src/core/fs/jsonFile';
import { awaitGo } from '../../../support/barrier';

const generous = { timeoutMs: 120_000, pollMs: 2 };

export function largeVersion(version: number): string {
  return `${JSON.stringify({ version, filler: String(version % 10).repeat(4_000_000) })}\n`;
}

async function main(): Promise<void> {
  const [mode, file = '', a = '', b = ''] = process.argv.slice(2);
  await awaitGo(); // behind startTogether: start racing with the others
  switch (mode) {
    case 'increment': {
      for (let i = 0; i < Number(a); i++) {
        await updateJsonFile(
          file,
          (current) => {
            const doc = (current ?? { count: 0 }) as { count: number };
            return { ...doc, count: doc.count + 1 };
          },
          { ...generous, agentId: b, operation: 'increment' },
        );
      }
      return;
    }
    case 'plain-increment': {
      for (let i = 0; i < Number(a); i++) {
        await withFileLock(file, { ...generous, operation: 'plain-increment' }, () => {
          const count = fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8')) : 0;
          fs.writeFileSync(file, String(count + 1));
        });
      }
      return;
    }
    case 'exclusive-increment': {
      const inside = `${file}.inside`;
      for (let i = 0; i < Number(a); i++) {
        await withFileLock(file, { ...generous, operation: 'exclusive-increment' }, async () => {
          try {
            fs.writeFileSync(inside, String(process.pid), { flag: 'wx' });
          } catch {
            throw new Error(`two holders at once: pid ${fs.readFileSync(inside, 'utf8')} is inside the lock too`);
          }
          const count = fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8')) : 0;
          await new Promise((resolve) => setTimeout(resolve, 3));
          fs.writeFileSync(file, String(count + 1));
          fs.rmSync(inside);
        });
      }
      return;
    }
    case 'reader': {
      let reads = 0;
      let invalid = 0;
      while (!fs.existsSync(a)) {
        try {
          JSON.parse(fs.readFileSync(file, 'utf8'));
          reads++;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') invalid++;
        }
      }
      process.stdout.write(JSON.stringify({ reads, invalid }));
      return;
    }
    case 'hold': {
      await withFileLock(file, { agentId: a, operation: b }, async () => {
        process.stdout.write('held\n');
        await new Promise(() => setInterval(() => undefined, 1000));
      });
      return;
    }
    case 'write-loop': {
      for (let version = 1; ; version++) {
        await writeFileAtomic(file, largeVersion(version));
        if (version === 1) process.stdout.write('started\n');
      }
    }
    default:
      throw new Error(`unknown mode ${mode}`);
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  });
}
