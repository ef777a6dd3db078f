import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { startStatusServer, type ListeningStatusServer } from '../../../src/core/server/statusServer';
import { seededWorkspace, SERVER_TOKEN } from './helpers';

/**
 * Issue 34, defect 10: a pipelined second request on one connection is answered, or the first answer
 * says `Connection: close` and the server closes the socket; never silence on an open connection.
 */

/** Writes `first` then `second` on one connection; resolves once both are answered or the server closed. */
function pipelined(port: number, first: string, second: string): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(first + second));
    const answers = (): number => (text.match(/HTTP\/1\.1 \d{3} [A-Z]/g) ?? []).length;
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      // The second answer is the health check, whose body ends the reply.
      if (answers() >= 2 && text.endsWith('{"ok":true}')) {
        socket.destroy();
        resolve({ text, closed: false });
      }
    });
    socket.on('end', () => resolve({ text, closed: true }));
    socket.on('error', reject);
  });
}

describe('the status server and pipelined requests (issue 34, defect 10)', function () {
  this.timeout(30_000);
  let server: ListeningStatusServer;

  before(async () => {
    const ws = seededWorkspace();
    server = await startStatusServer({
      registryPath: ws.registryPath,
      homeDir: fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-home-')),
      clock: fixedClock('2026-11-28T09:30:00Z'),
      token: SERVER_TOKEN,
      port: 0,
    });
  });

  after(async () => {
    await server.close();
  });

  it('answers the second request after any first one, or closes with Connection: close', async () => {
    const host = `Host: 127.0.0.1:${server.port}\r\n`;
    const auth = `Authorization: Bearer ${SERVER_TOKEN}\r\n`;
    const second = `GET /healthz HTTP/1.1\r\n${host}\r\n`;
    const firsts: Record<string, string> = {
      status: `GET /status.json HTTP/1.1\r\n${host}${auth}\r\n`,
      gzip: `GET /status.json HTTP/1.1\r\n${host}${auth}Accept-Encoding: gzip\r\n\r\n`,
      head: `HEAD /status.json HTTP/1.1\r\n${host}${auth}\r\n`,
      options: `OPTIONS /status.json HTTP/1.1\r\n${host}\r\n`,
      unauthorized: `GET /status.json HTTP/1.1\r\n${host}\r\n`,
      wrongHost: `GET /status.json HTTP/1.1\r\nHost: example.com\r\n${auth}\r\n`,
      notFound: `GET /nowhere HTTP/1.1\r\n${host}${auth}\r\n`,
      post: `POST /status.json HTTP/1.1\r\n${host}${auth}Content-Length: 0\r\n\r\n`,
      goal: `GET /goals/tidy-notes HTTP/1.1\r\n${host}${auth}\r\n`,
      body: `GET /status.json HTTP/1.1\r\n${host}${auth}Content-Length: 5\r\n\r\nhello`,
      chunked: `GET /status.json HTTP/1.1\r\n${host}${auth}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    };
    for (const [name, first] of Object.entries(firsts)) {
      const { text, closed } = await pipelined(server.port, first, second);
      // A status line follows the previous body directly (no newline after a JSON body).
      const statuses = (text.match(/HTTP\/1\.1 \d{3} [A-Z]/g) ?? []).map((line) => line.slice(0, 12));
      if (closed && statuses.length < 2) {
        assert.equal(statuses.length, 1, `${name}: ${text.slice(0, 300)}`);
        assert.match(text, /\r\nConnection: close\r\n/i, `${name}: closed without saying so`);
      } else {
        assert.equal(statuses.length, 2, `${name}: ${text.slice(0, 300)}`);
        assert.equal(statuses[1], 'HTTP/1.1 200', name);
      }
    }
  });
});
