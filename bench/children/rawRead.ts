import * as fs from 'node:fs';
import { rawRead } from '../core/files';

/** The whole-process raw limit: a node process that reads (and JSON.parses) the files listed in argv[2], nothing else. */
async function main(): Promise<void> {
  const listFile = process.argv[2];
  if (listFile === undefined) throw new Error('usage: rawRead.cjs <file with one path per line>');
  const files = fs
    .readFileSync(listFile, 'utf8')
    .split('\n')
    .filter((line) => line !== '');
  const values = await rawRead(files);
  process.stdout.write(`${JSON.stringify({ files: files.length, values })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
