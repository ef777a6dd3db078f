import { HostRequestSchema } from '../protocol/contract';
import { performDemoTurn } from './demoAgent';

/**
 * Process entry of the demo agent: reads a `loopx_turn_host_request_v0` on stdin, works in the
 * current directory (the project root the executor starts it in) and prints one result object
 * on stdout. Progress notes go to stderr. Exit 2 on a request it cannot read.
 */
async function main(): Promise<number> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    process.stderr.write(
      `demo agent: the request on stdin is not JSON: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 2;
  }
  const request = HostRequestSchema.safeParse(raw);
  if (!request.success) {
    process.stderr.write(
      `demo agent: the request does not match loopx_turn_host_request_v0: ${request.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}\n`,
    );
    return 2;
  }
  process.stderr.write(`demo agent: working on ${request.data.selected_todo?.todo_id ?? '(no todo)'}\n`);
  const result = performDemoTurn(process.cwd(), request.data);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`demo agent: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
