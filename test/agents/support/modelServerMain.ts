/**
 * The scripted model server as a process of its own, for a test whose agent CLI runs in a network namespace
 * the test process is not in (the new-user e2e: code-server, Chromium and this server share a loopback-only
 * namespace, entered with nsenter). Prints `listening <url>` once ready; on SIGTERM writes
 * `{ requests, toolResults }` to the report file and exits.
 *
 * Usage: node --import tsx modelServerMain.ts <script.json> <report.json>
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { startModelServer, toolResultText, type ModelScript } from './modelServer';

async function main(): Promise<void> {
  const [scriptFile, reportFile] = process.argv.slice(2) as [string, string];
  const server = await startModelServer(JSON.parse(readFileSync(scriptFile, 'utf8')) as ModelScript);
  process.once('SIGTERM', () => {
    writeFileSync(
      reportFile,
      JSON.stringify({ requests: server.log, toolResults: toolResultText(server.lastBodies) }, null, 2),
    );
    void server.close().then(() => process.exit(0));
  });
  process.stdout.write(`listening ${server.url}\n`);
}

void main();
