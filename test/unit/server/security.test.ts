import assert from 'node:assert/strict';
import {
  corsHeaders,
  generateStatusToken,
  hostHeaderIsLoopback,
  loopbackOrigin,
  presentedToken,
  STATUS_TOKEN_PATTERN,
  tokenMatches,
} from '../../../src/core/server/security';

describe('status server gates', () => {
  it('case H1: CORS headers are echoed for loopback origins only', () => {
    assert.deepEqual(corsHeaders('http://127.0.0.1:8123'), {
      'Access-Control-Allow-Origin': 'http://127.0.0.1:8123',
      'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
      'Access-Control-Allow-Headers': 'Authorization, Content-Type',
      Vary: 'Origin',
    });
    assert.equal(corsHeaders('http://localhost:8123')['Access-Control-Allow-Origin'], 'http://localhost:8123');
    assert.equal(corsHeaders('http://[::1]:5173')['Access-Control-Allow-Origin'], 'http://[::1]:5173');
    assert.equal(corsHeaders('https://localhost')['Access-Control-Allow-Origin'], 'https://localhost');
    for (const origin of [
      'https://evil.example',
      undefined,
      'null',
      'http://127.0.0.1.evil.example',
      'http://localhost.evil.example',
      'http://localhost@evil.example',
      'http://[::1',
      'file:///etc/passwd',
      'vscode-webview://abc',
      'http://user:pw@localhost:1',
      'http://127.0.0.2',
    ]) {
      assert.deepEqual(corsHeaders(origin), {}, String(origin));
      assert.equal(loopbackOrigin(origin), null, String(origin));
    }
  });

  it('accepts only loopback Host headers, with or without a port (DNS rebinding)', () => {
    for (const host of ['127.0.0.1', '127.0.0.1:8787', 'localhost', 'LOCALHOST:1', '[::1]', '[::1]:8787'])
      assert.equal(hostHeaderIsLoopback(host), true, host);
    for (const host of [
      undefined,
      '',
      'evil.example',
      'evil.example:8787',
      '127.0.0.1.evil.example',
      'localhost.evil.example:80',
      '127.0.0.1@evil.example',
      '[::1].evil.example',
      '10.0.0.1:8787',
      '0.0.0.0',
      '::1',
      'localhost:8787:1',
      '127.0.0.1:99999x',
    ]) {
      assert.equal(hostHeaderIsLoopback(host), false, String(host));
    }
  });

  it('takes the token from Authorization: Bearer first, then from ?token=', () => {
    const none = new URLSearchParams();
    assert.equal(presentedToken('Bearer abc', none), 'abc');
    assert.equal(presentedToken('bearer   abc ', none), 'abc');
    assert.equal(presentedToken('Basic abc', new URLSearchParams('token=q')), 'q');
    assert.equal(presentedToken(undefined, new URLSearchParams('token=q')), 'q');
    assert.equal(presentedToken('Bearer h', new URLSearchParams('token=q')), 'h');
    assert.equal(presentedToken(undefined, new URLSearchParams('token=')), null);
    assert.equal(presentedToken(undefined, none), null);
  });

  it('compares tokens whatever their lengths, and generates URL-safe random ones', () => {
    const token = generateStatusToken();
    assert.match(token, STATUS_TOKEN_PATTERN);
    assert.notEqual(generateStatusToken(), token);
    assert.equal(tokenMatches(token, token), true);
    assert.equal(tokenMatches(token, `${token}x`), false);
    assert.equal(tokenMatches(token, ''), false);
    assert.equal(tokenMatches(token, token.slice(0, -1)), false);
  });
});
