import assert from 'node:assert/strict';
import { hostHeaderAllowed } from '../../../src/core/server/security';
import { portToListenOn, preferredStatusPort } from '../../../src/server/statusServerPorts';

describe('status server ports of a multi-root window (issue 27)', () => {
  it('gives the first registry the configured port and the next ones the ports after it', () => {
    assert.deepEqual(
      [0, 1, 2].map((i) => preferredStatusPort(8787, i, 8787)),
      [8787, 8788, 8789],
    );
  });

  it('asks for a free port when the setting is 0, out of range, or the next port would pass 65535', () => {
    assert.equal(preferredStatusPort(0, 3, 8787), 0);
    assert.equal(preferredStatusPort(65535, 1, 8787), 0);
    assert.equal(preferredStatusPort(70000, 1, 8787), 8788);
    assert.equal(preferredStatusPort(1.5, 0, 8787), 8787);
  });

  it('keeps the free port chosen after a busy one for the session', () => {
    const busy = new Map([[8787, 41234]]);
    assert.equal(portToListenOn(8787, busy), 41234);
    assert.equal(portToListenOn(8788, busy), 8788);
  });
});

describe('Host gate with an external address (asExternalUri, issue 27)', () => {
  const external = new Set(['ide.example.com:8443']);
  it('accepts loopback hosts and exactly the authority the URL was handed out under', () => {
    assert.equal(hostHeaderAllowed('127.0.0.1:8787', 8787, external), true);
    assert.equal(hostHeaderAllowed('IDE.example.com:8443', 8787, external), true);
  });
  it('refuses every other host (DNS rebinding), and the external host on another port', () => {
    assert.equal(hostHeaderAllowed('evil.example.com', 8787, external), false);
    assert.equal(hostHeaderAllowed('ide.example.com', 8787, external), false);
    assert.equal(hostHeaderAllowed('127.0.0.1:9999', 8787, external), false);
    assert.equal(hostHeaderAllowed(undefined, 8787, external), false);
  });
});
