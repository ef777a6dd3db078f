import assert from 'node:assert/strict';
import {
  cleanCopyOf,
  containsPrivateData,
  findCredentials,
  isCredentialClean,
  markCredentialClean,
  redactCredentials,
  redactCredentialsShared,
  scrubText,
  scrubValue,
  type ScrubContext,
} from '../../../src/core/privacy/scrub';

const context: ScrubContext = {
  projectRoots: ['/work/acme-app', 'C:\\Projects\\Widget'],
  homeDir: '/home/alice',
  runtimeRoot: '/home/alice/.codex/loopx',
};

const GITHUB_BODY = 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
const JWT =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';

/** [input, expected output]: everything private must be replaced exactly like this. */
const CAUGHT: readonly (readonly [string, string])[] = [
  ['/work/acme-app/src/main.ts', '<project>/src/main.ts'],
  ['/work/acme-app', '<project>'],
  ['open /work/acme-app/docs/a b.md now', 'open <project>/docs/a b.md now'],
  ['/home/alice/.codex/loopx/goals/g1/runs/index.jsonl', '<runtime>/goals/g1/runs/index.jsonl'],
  ['/home/alice/notes/plan.md', '<home>/notes/plan.md'],
  ['~/notes/plan.md', '<home>/notes/plan.md'],
  ['see /tmp/build/out.log.', 'see <abs>/out.log.'],
  ['{"path":"/var/folders/xy/T/tmp1"}', '{"path":"<abs>/tmp1"}'],
  ['--registry=/srv/data/registry.json', '--registry=<abs>/registry.json'],
  ['at file:///Users/bob/site/index.html', 'at <abs>/index.html'],
  ['error in /Users/bob/x.ts:12:3', 'error in <abs>/x.ts:12:3'],
  ['(/opt/tools/bin/run)', '(<abs>/run)'],
  ['C:\\Users\\bob\\secret-plans\\q3.docx', '<abs>/q3.docx'],
  ['"C:\\\\Users\\\\bob\\\\x.txt"', '"<abs>/x.txt"'],
  ['D:/data/exports/dump.csv', '<abs>/dump.csv'],
  ['C:\\Projects\\Widget\\src\\app.ts', '<project>/src/app.ts'],
  ['\\\\fileserver\\share\\team\\doc.md', '<abs>/doc.md'],
  ['Authorization: Bearer abc.def.ghi', 'Authorization: [redacted:authorization]'],
  ['authorization=Basic dXNlcjpwYXNzd29yZA==', 'authorization=[redacted:authorization]'],
  ['curl -H "Authorization: token 0123456789abcdef"', 'curl -H "Authorization: [redacted:authorization]"'],
  ['header Bearer abcdef0123456789xyz', 'header Bearer [redacted:bearer_token]'],
  ['https://api.example.com/v1?token=s3cr3t&page=2', 'https://api.example.com/v1?token=[redacted:token]&page=2'],
  ['api_key=AbCdEf123456', 'api_key=[redacted:api_key]'],
  ['X-API-KEY: live_123', 'X-API-KEY: [redacted:api_key]'],
  ['password=hunter2', 'password=[redacted:password]'],
  ['{"password": "hunter2"}', '{"password": "[redacted:password]"}'],
  ['secret=shh-quiet', 'secret=[redacted:secret]'],
  ['client_secret=abcdef', 'client_secret=[redacted:client_secret]'],
  ['access_token=ya29.a0AfH6', 'access_token=[redacted:access_token]'],
  [`ghp_${GITHUB_BODY}`, '[redacted:github_token]'],
  [`token is gho_${GITHUB_BODY}`, 'token is [redacted:github_token]'],
  [`ghs_${GITHUB_BODY}`, '[redacted:github_token]'],
  [`github_pat_11ABCDEFG0_${GITHUB_BODY}`, '[redacted:github_token]'],
  ['key sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234', 'key [redacted:openai_key]'],
  // Project and service-account keys are redacted by their prefix, digits or not.
  ['key sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEf', 'key [redacted:openai_key]'],
  ['sk-proj-abcdefghijklmnopqrstuvwxyz_abcdefgh-ijkl', '[redacted:openai_key]'],
  ['sk-svcacct-AbCdEfGhIjKlMnOpQrStUvWxYz', '[redacted:openai_key]'],
  ['sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx-1234', '[redacted:anthropic_key]'],
  ['sk-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd', '[redacted:openai_key]'],
  ['AKIAIOSFODNN7EXAMPLE', '[redacted:aws_access_key_id]'],
  ['id=ASIAY34FZKBOKMUTVV7A,', 'id=[redacted:aws_access_key_id],'],
  [
    'aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    'aws_secret_access_key=[redacted:aws_secret_access_key]',
  ],
  [`jwt ${JWT} end`, 'jwt [redacted:jwt] end'],
  [
    '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----\nnext',
    '[redacted:private_key]\nnext',
  ],
  ['-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA (truncated', '[redacted:private_key]'],
];

/** Look-alikes that must come through unchanged. */
const LOOK_ALIKES: readonly string[] = [
  'https://example.com/a/b',
  'http://127.0.0.1:8765/status.json',
  'see https://github.com/owner/repo/pull/12',
  'src/core/privacy/scrub.ts',
  './scripts/build.sh and ../docs/x.md',
  'the tokenizer splits text',
  'ask the secretary',
  'a new skill for ask-me prompts',
  '2026-01-15T10:00:00Z and 2026-01-15T18:00:00+08:00',
  'sk-short-key',
  'sk-1234567890',
  'task-list-for-the-upcoming-release-2026',
  'run /loopx-commands',
  'and/or, 3/4 done, TCP/IP',
  'max_tokens=4096 tokens: 12',
  'password_hint_shown=true',
  'needs authorization from the owner',
  'Authorization: pending owner approval',
  'a bearer of bad news',
  'AKIA1234 is too short',
  'eyJhbGciOi alone',
  'ghp_short',
  '<project>/src/a.ts, <runtime>/goals/g, <home>/x and <abs>/y',
  'token=[redacted:token]',
  'email alice@example.com about v1.2.3',
  'sha256 3acbd5890cbc12cb',
  'secret-santa and token-bucket rate limits',
];

describe('privacy scrubber', () => {
  it(`replaces every private item (${CAUGHT.length} inputs)`, () => {
    assert.ok(CAUGHT.length >= 30);
    for (const [input, expected] of CAUGHT) {
      assert.equal(scrubText(input, context), expected, `input: ${JSON.stringify(input)}`);
      assert.equal(containsPrivateData(input, context), true, `containsPrivateData: ${JSON.stringify(input)}`);
    }
  });

  it(`leaves look-alikes untouched (${LOOK_ALIKES.length} inputs)`, () => {
    assert.ok(LOOK_ALIKES.length >= 20);
    for (const input of LOOK_ALIKES) {
      assert.equal(scrubText(input, context), input, `input: ${JSON.stringify(input)}`);
      assert.equal(containsPrivateData(input, context), false, `containsPrivateData: ${JSON.stringify(input)}`);
    }
  });

  it('is idempotent: scrubbed text contains nothing private', () => {
    for (const [input] of CAUGHT) {
      const once = scrubText(input, context);
      assert.equal(scrubText(once, context), once, `input: ${JSON.stringify(input)}`);
      assert.equal(containsPrivateData(once, context), false);
    }
  });

  it('prefers the most specific root: runtime under home, project under home', () => {
    const nested: ScrubContext = {
      projectRoots: ['/home/alice/code/app'],
      homeDir: '/home/alice',
      runtimeRoot: '/home/alice/code/app/runtime',
    };
    assert.equal(scrubText('/home/alice/code/app/runtime/goals/g', nested), '<runtime>/goals/g');
    assert.equal(scrubText('/home/alice/code/app/README.md', nested), '<project>/README.md');
    assert.equal(scrubText('/home/alice/code/other/x', nested), '<home>/code/other/x');
    assert.equal(
      scrubText('/home/alice/code/app2/x', nested),
      '<home>/code/app2/x',
      'a sibling folder with a common prefix is not the project',
    );
  });

  it('without context every absolute path is reduced to its base name', () => {
    assert.equal(containsPrivateData('/work/acme-app/a.ts'), true);
    assert.equal(scrubText('/work/acme-app/a.ts', { projectRoots: [], homeDir: '' }), '<abs>/a.ts');
  });

  it('scrubValue copies deeply, keeps keys, redacts credential keys and reduces authority data', () => {
    const input = {
      registry: '/work/acme-app/.loopx/registry.json',
      runtime_root: '/home/alice/.codex/loopx',
      headers: { Authorization: 'Basic abc', 'x-api-key': 'k', token_count: 5 },
      goals: [
        {
          id: 'g',
          password: 'hunter2',
          token: 12345,
          authority_sources: [{ source_ref: 'wiki-1' }, { source_ref: 'wiki-2' }],
          authority_registry: {
            path: '/work/acme-app/authority.json',
            topics: { a: 1, b: 2 },
            materials: ['m1'],
            enabled: true,
            owner: 'Alice Private',
          },
          notes: ['see /tmp/build/x.log', 'fine'],
        },
      ],
      count: 3,
      flag: null,
    };
    const before = structuredClone(input);
    const output = scrubValue(input, context);
    assert.deepEqual(input, before, 'the input is not modified');
    assert.deepEqual(output, {
      registry: '<project>/.loopx/registry.json',
      runtime_root: '<runtime>',
      headers: { Authorization: '[redacted:authorization]', 'x-api-key': '[redacted:x_api_key]', token_count: 5 },
      goals: [
        {
          id: 'g',
          password: '[redacted:password]',
          token: '[redacted:token]',
          authority_source_count: 2,
          authority_registry: {
            schema_version: 'loopx_authority_registry_summary_v0',
            present: true,
            path: '<project>/authority.json',
            topics_count: 2,
            materials_count: 1,
            enabled: true,
          },
          notes: ['see <abs>/x.log', 'fine'],
        },
      ],
      count: 3,
      flag: null,
    });
    assert.equal(containsPrivateData(JSON.stringify(output), context), false);
  });

  it('redactCredentials keeps paths but redacts credentials, also inside a path and under secret-like keys', () => {
    const input = {
      state_file: '/home/alice/app/ACTIVE_GOAL_STATE.md',
      next_action: `push /tmp/ghp_${GITHUB_BODY}/x then DB_PASSWORD=hunter2`,
      env: { STRIPE_SECRET_KEY: 'whatever', max_token: 4096, token_count: 3 },
    };
    assert.deepEqual(redactCredentials(input), {
      state_file: '/home/alice/app/ACTIVE_GOAL_STATE.md',
      next_action: 'push /tmp/[redacted:github_token]/x then DB_PASSWORD=[redacted:password]',
      env: { STRIPE_SECRET_KEY: '[redacted:stripe_secret_key]', max_token: 4096, token_count: 3 },
    });
    assert.deepEqual(findCredentials(`see /tmp/ghp_${GITHUB_BODY} and AKIAIOSFODNN7EXAMPLE`), [
      'github_token',
      'aws_access_key_id',
    ]);
    assert.deepEqual(findCredentials('/home/alice/notes.md and C:\\Users\\bob\\x'), []);
  });

  it('redactCredentialsShared answers the same JSON as redactCredentials, sharing (and remembering) clean objects', () => {
    const clean = { path: '/home/alice/app/x.md', runs: [{ id: 'r1', note: 'fine' }], n: 3 };
    const dirty = { next_action: `DB_PASSWORD=hunter2 then ghp_${GITHUB_BODY}`, nested: { token: 'abc', keep: 'x' } };
    const input = { clean, dirty, list: [clean, 'AKIAIOSFODNN7EXAMPLE', 7, null], when: new Date(0) };
    const shared = redactCredentialsShared(input);
    assert.equal(JSON.stringify(shared), JSON.stringify(redactCredentials(input)));
    assert.equal(shared.clean, clean, 'a clean object is returned itself');
    assert.equal(shared.list[0], clean);
    assert.notEqual(shared.dirty, dirty, 'an object with a credential is copied, the input is not changed');
    assert.equal(dirty.nested.token, 'abc');
    assert.ok(isCredentialClean(clean) && isCredentialClean(clean.runs[0]));
    assert.equal(isCredentialClean(dirty), false);
    assert.equal(isCredentialClean(input), false);
  });

  it('redactCredentialsShared equals redactCredentials on random nested values (credential keys, numbers, secrets at any position)', () => {
    let state = 12345;
    const random = (): number => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state / 2 ** 32;
    };
    const keys = ['note', 'token', 'Password', 'db-password', 'api_key', 'DB_PASSWORD', 'title', 'count', 'x'];
    const texts = [
      'fine',
      '',
      'DB_PASSWORD=hunter2',
      `ghp_${GITHUB_BODY}`,
      '<placeholder>',
      '***',
      'AKIAIOSFODNN7EXAMPLE',
    ];
    const value = (depth: number): unknown => {
      const pick = random();
      if (depth > 3 || pick < 0.3) return texts[Math.floor(random() * texts.length)];
      if (pick < 0.4) return Math.floor(random() * 100);
      if (pick < 0.45) return null;
      if (pick < 0.7) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      const out: Record<string, unknown> = {};
      for (let i = 0; i < Math.floor(random() * 5); i++)
        out[keys[Math.floor(random() * keys.length)] as string] = value(depth + 1);
      return out;
    };
    for (let i = 0; i < 300; i++) {
      const input = value(0);
      const before = JSON.stringify(input);
      assert.equal(JSON.stringify(redactCredentialsShared(input)), JSON.stringify(redactCredentials(input)), before);
      assert.equal(JSON.stringify(input), before, 'the input is not changed');
      // Again, now that clean parts are remembered.
      assert.equal(JSON.stringify(redactCredentialsShared(input)), JSON.stringify(redactCredentials(input)), before);
    }
  });

  it('an object marked clean is not looked at again (only marked objects are skipped)', () => {
    const kept = { note: 'DB_PASSWORD=hunter2' };
    // What the persistent status cache does with an item it recorded clean: trusted without a scan.
    markCredentialClean({ kept });
    assert.equal(redactCredentialsShared({ kept }).kept, kept);
    // Its texts are trusted too (wherever they appear again); any other text is still scanned.
    assert.equal(redactCredentialsShared({ copy: { note: 'DB_PASSWORD=hunter2' } }).copy.note, 'DB_PASSWORD=hunter2');
    const unmarked = { note: 'DB_PASSWORD=hunter3' };
    assert.deepEqual(redactCredentialsShared({ unmarked }), { unmarked: { note: 'DB_PASSWORD=[redacted:password]' } });
  });

  it('cleanCopyOf marks a copy clean only when its source is known clean', () => {
    const source = { title: 'Write the notes', id: 't1', nested: { a: 'b' } };
    redactCredentialsShared(source); // Scanned once: nothing to redact, remembered clean.
    assert.equal(isCredentialClean(source), true);
    const copy = cleanCopyOf({ kind: 'todo', title: source.title, nested: source.nested }, source);
    assert.equal(isCredentialClean(copy), true, 'made of a clean source: not walked again');
    assert.equal(redactCredentialsShared({ copy }).copy, copy);

    // A source that was never found clean (it holds a secret): the copy is walked, its secret redacted.
    const secretSource = { title: 'DB_PASSWORD=hunter4' };
    redactCredentialsShared(secretSource);
    const fromSecret = cleanCopyOf({ title: secretSource.title }, secretSource);
    assert.equal(isCredentialClean(fromSecret), false);
    assert.deepEqual(redactCredentialsShared({ fromSecret }), {
      fromSecret: { title: 'DB_PASSWORD=[redacted:password]' },
    });
  });
});
