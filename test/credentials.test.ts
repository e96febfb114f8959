// Credentials as data (schemas/channel.schema.json `$defs/credential`), each kind checked by an independent fake: an
// OAuth 2 client-credentials token endpoint (Entra ID's shape) that checks the form, a Google token_uri that verifies the
// RS256 assertion with jose against the public key of a key pair made here, and an AWS SigV4 check recomputed with
// node:crypto from the AWS reference (test/kit/fake-cloud-auth.ts), never with the @smithy signer the gateway uses.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerGate, entraTokenEndpoint, googleTokenEndpoint, newServiceAccount, sigV4Gate, testClock, type AwsKeys, type FakeTokenEndpoint } from './kit/fake-cloud-auth.js';
import { FakeUpstream, type RecordedRequest } from './kit/fake-upstream.js';
import { startGateway, testModels, type TestGateway } from './kit/gateway.js';
import { captureLogs } from './kit/log-capture.js';
import { installImages } from './kit/fake-images.js';
import { multipart } from './kit/files.js';
import { png } from './kit/media-samples.js';

const clock = testClock();
const SCOPE = 'https://cognitiveservices.azure.com/.default';
const CLIENT_SECRET = 'entra-client-secret-value-42';
const AWS: AwsKeys = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token-of-temporary-credentials', region: 'eu-west-3', service: 'bedrock' };

const chat = (gw: TestGateway, model: string, extra: Record<string, unknown> = {}) =>
  gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model, messages: [{ role: 'user', content: 'hi' }], ...extra } });
const messages = (gw: TestGateway, model: string) =>
  gw.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': gw.key }, payload: { model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });

/** A chat channel on `upstream` whose requests carry `credential` (YAML lines under `credential:`). */
const channel = (id: string, baseUrl: string, credential: string) => `id: ${id}
protocol: openai-chat
baseUrl: ${baseUrl}
credential:
${credential}
models:
${testModels.fakeChat.replace(/fake-chat/g, `${id}-chat`)}`;

describe('oauth2-client-credentials (Entra ID shape)', () => {
  let tokens: FakeTokenEndpoint;
  let upstream: FakeUpstream;
  let gw: TestGateway;
  const refused: RecordedRequest[] = [];
  const logs = captureLogs('debug');

  beforeAll(async () => {
    tokens = await entraTokenEndpoint({ tenant: 'tenant-1', clientId: 'client-1', clientSecret: CLIENT_SECRET, scope: SCOPE, clock });
    upstream = await FakeUpstream.start();
    upstream.route(bearerGate((req) => tokens.accepts(req.headers.authorization), refused));
    const credential = (secretEnv: string) => `  kind: oauth2-client-credentials
  tokenUrl: \${TOKEN_HOST}/\${TENANT}/oauth2/v2.0/token
  requiresEnv: [TENANT]
  clientIdEnv: CLIENT_ID
  clientSecretEnv: ${secretEnv}
  scope: ${SCOPE}`;
    gw = await startGateway({
      channels: {
        entra: channel('entra', `${upstream.url}/v1`, credential('CLIENT_SECRET')),
        wrong: channel('wrong', `${upstream.url}/v1`, credential('WRONG_SECRET')),
        // The same credential (so the same token cache) on a channel whose calls have 300 ms.
        hasty: channel('hasty', `${upstream.url}/v1`, credential('CLIENT_SECRET')).replace('models:', 'timeouts: { deadlineMs: 300 }\nmodels:'),
      },
      env: { TOKEN_HOST: tokens.url, TENANT: 'tenant-1', CLIENT_ID: 'client-1', CLIENT_SECRET, WRONG_SECRET: 'not-the-secret' },
      overrides: { now: clock.now },
      logger: logs.logger,
    });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.close();
    await tokens.close();
  });

  it('asks the token endpoint once with the client-credentials form, then reuses the token while it is valid', async () => {
    tokens.requests.length = 0;
    upstream.reset();
    for (let i = 0; i < 3; i++) expect((await chat(gw, 'entra-chat')).statusCode).toBe(200);
    expect(tokens.requests).toHaveLength(1);
    expect(Object.fromEntries(tokens.requests[0])).toEqual({ grant_type: 'client_credentials', client_id: 'client-1', client_secret: CLIENT_SECRET, scope: SCOPE });
    expect(new Set(upstream.requests.map((r) => r.headers.authorization)).size).toBe(1);
    expect(upstream.last!.headers['api-key']).toBeUndefined();
  });

  it('refreshes before the token expires: no request reaches the upstream with an expired token', async () => {
    tokens.requests.length = 0;
    refused.length = 0;
    // Within the token's last five minutes the gateway takes a new one before sending; the old one is still valid then.
    clock.advance((tokens.lifetimeSeconds - 200) * 1000);
    expect((await chat(gw, 'entra-chat')).statusCode).toBe(200);
    expect(tokens.requests).toHaveLength(1);
    // Across a whole lifetime: the next token, never the expired one.
    clock.advance(tokens.lifetimeSeconds * 1000);
    expect((await chat(gw, 'entra-chat')).statusCode).toBe(200);
    expect(tokens.requests).toHaveLength(2);
    expect(refused).toEqual([]);
  });

  it('shares one refresh among concurrent requests', async () => {
    clock.advance(tokens.lifetimeSeconds * 1000);
    tokens.requests.length = 0;
    const release = tokens.hold();
    const answers = Array.from({ length: 8 }, () => chat(gw, 'entra-chat'));
    await expect.poll(() => tokens.requests.length).toBe(1);
    release();
    expect((await Promise.all(answers)).map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    expect(tokens.requests).toHaveLength(1);
  });

  it("answers a hanging token endpoint with the call's 504 at the request's deadline, and the fetch serves the requests after it", async () => {
    clock.advance(tokens.lifetimeSeconds * 1000);
    tokens.requests.length = 0;
    const release = tokens.hold();
    try {
      const res = await chat(gw, 'hasty-chat');
      expect(res.statusCode).toBe(504);
      expect(res.json().error).toMatchObject({ code: 'upstream_timeout', message: 'channel "hasty" did not finish within its deadline' });
    } finally {
      release();
    }
    // The fetch the hasty request gave up on went on under its own limit: its token serves the next request.
    expect((await chat(gw, 'entra-chat')).statusCode).toBe(200);
    expect(tokens.requests).toHaveLength(1);
  });

  it('answers a refused secret with a typed 502 naming the channel, on OpenAI and Anthropic routes, and never repeats a secret', async () => {
    upstream.reset();
    const res = await chat(gw, 'wrong-chat');
    expect(res.statusCode).toBe(502);
    expect(res.json().error).toMatchObject({ code: 'upstream_auth_failed', message: expect.stringContaining('channel "wrong"') });
    expect(res.json().error.message).toContain('401 (invalid_client)');
    const anthropic = await messages(gw, 'wrong-chat');
    expect(anthropic.statusCode).toBe(502);
    expect(anthropic.json()).toMatchObject({ type: 'error', error: { type: 'api_error', message: expect.stringContaining('channel "wrong"') } });
    expect(upstream.requests).toEqual([]);
    const seen = [res.body, anthropic.body, JSON.stringify(logs.lines)].join('\n');
    for (const secret of ['not-the-secret', CLIENT_SECRET, ...tokens.tokens()]) expect(seen).not.toContain(secret);
  });

  it('answers an unreachable token endpoint with the same typed 502', async () => {
    const closed = await entraTokenEndpoint({ tenant: 't', clientId: 'c', clientSecret: 's', scope: SCOPE, clock });
    await closed.close();
    const gone = await startGateway({
      channels: { gone: channel('gone', `${upstream.url}/v1`, `  kind: oauth2-client-credentials\n  tokenUrl: ${closed.tokenUrl}\n  clientIdEnv: CLIENT_ID\n  clientSecretEnv: CLIENT_SECRET\n  scope: ${SCOPE}`) },
      env: { CLIENT_ID: 'c', CLIENT_SECRET: 's' },
    });
    try {
      const res = await chat(gone, 'gone-chat');
      expect(res.statusCode).toBe(502);
      expect(res.json().error).toMatchObject({ code: 'upstream_auth_failed', message: 'channel "gone" could not get an access token: its token endpoint is unreachable or did not answer in time' });
    } finally {
      await gone.close();
    }
  });
});

describe('google-service-account', () => {
  const account = newServiceAccount();
  const scope = 'https://www.googleapis.com/auth/cloud-platform';
  let tokens: FakeTokenEndpoint;
  let upstream: FakeUpstream;
  let gw: TestGateway;
  const refused: RecordedRequest[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'service-account-'));

  beforeAll(async () => {
    tokens = await googleTokenEndpoint({ account, scope, clock });
    upstream = await FakeUpstream.start();
    upstream.route(bearerGate((req) => tokens.accepts(req.headers.authorization), refused));
    writeFileSync(join(dir, 'key.json'), account.keyFile(tokens.tokenUrl));
    // Another account's key, its token_uri the same endpoint: the assertion does not verify against the account's key.
    writeFileSync(join(dir, 'other.json'), newServiceAccount().keyFile(tokens.tokenUrl));
    const credential = (variable: string) => `  kind: google-service-account\n  keyFileEnv: ${variable}\n  scope: ${scope}`;
    gw = await startGateway({
      channels: {
        google: channel('google', `${upstream.url}/v1`, credential('KEY_FILE')),
        // The same service account, through another variable: the same credential, so the same token.
        twin: channel('twin', `${upstream.url}/v1`, credential('SAME_KEY_FILE')),
        impostor: channel('impostor', `${upstream.url}/v1`, credential('OTHER_KEY_FILE')),
      },
      env: { KEY_FILE: join(dir, 'key.json'), SAME_KEY_FILE: join(dir, 'key.json'), OTHER_KEY_FILE: join(dir, 'other.json') },
      overrides: { now: clock.now },
    });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.close();
    await tokens.close();
  });

  it("posts an RS256 JWT-bearer assertion (aud: the key file's token_uri) and sends the token it gets as a bearer", async () => {
    tokens.requests.length = 0;
    expect((await chat(gw, 'google-chat')).statusCode).toBe(200);
    expect((await chat(gw, 'google-chat')).statusCode).toBe(200);
    expect(tokens.requests).toHaveLength(1);
    expect(tokens.requests[0].get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    expect(refused).toEqual([]);
    clock.advance(tokens.lifetimeSeconds * 1000);
    expect((await chat(gw, 'google-chat')).statusCode).toBe(200);
    expect(tokens.requests).toHaveLength(2);
    expect(refused).toEqual([]);
  });

  it('shares one token among the channels that hold the same credential', async () => {
    tokens.requests.length = 0;
    clock.advance(tokens.lifetimeSeconds * 1000);
    expect((await chat(gw, 'google-chat')).statusCode).toBe(200);
    expect((await chat(gw, 'twin-chat')).statusCode).toBe(200);
    expect(tokens.requests).toHaveLength(1);
    expect(new Set(upstream.requests.slice(-2).map((r) => r.headers.authorization)).size).toBe(1);
  });

  it('answers an assertion the token endpoint refuses with a typed 502 naming the channel', async () => {
    const res = await chat(gw, 'impostor-chat');
    expect(res.statusCode).toBe(502);
    expect(res.json().error).toMatchObject({ code: 'upstream_auth_failed', message: 'channel "impostor" could not get an access token: the token endpoint answered 400 (invalid_grant)' });
  });

  it('disables a channel whose key file is missing or not a service-account key, naming the file and never its contents', async () => {
    writeFileSync(join(dir, 'user.json'), JSON.stringify({ type: 'authorized_user', client_secret: 'user-secret' }));
    const broken = await startGateway({
      channels: {
        missing: channel('missing', `${upstream.url}/v1`, `  kind: google-service-account\n  keyFileEnv: MISSING\n  scope: ${scope}`),
        user: channel('user', `${upstream.url}/v1`, `  kind: google-service-account\n  keyFileEnv: USER_KEY\n  scope: ${scope}`),
      },
      env: { MISSING: join(dir, 'nowhere.json'), USER_KEY: join(dir, 'user.json') },
    });
    try {
      const warnings = broken.services.config.warnings.join('\n');
      expect(warnings).toContain(`channel "missing" is disabled: the service-account key file MISSING names (${join(dir, 'nowhere.json')}) cannot be read (ENOENT)`);
      expect(warnings).toContain('channel "user" is disabled: the service-account key file USER_KEY names');
      expect(warnings).not.toContain('user-secret');
      expect((await chat(broken, 'user-chat')).statusCode).toBe(503);
    } finally {
      await broken.close();
    }
  });
});

describe('aws-sigv4', () => {
  const signedChat = `id: signed-chat
description: An OpenAI-compatible chat API behind a SigV4-signed path naming the model (as Bedrock's does).
dialect: openai-chat
operations:
  chat:
    path: /model/{{ model }}/chat/completions
    streamFlag: stream
    usage:
      from: "{{ answer.usage }}"
      events:
        message: { from: "{{ event.usage }}", final: true }
      tokens:
        inputTokens: "{{ usage.prompt_tokens }}"
        outputTokens: "{{ usage.completion_tokens }}"
`;
  const sigv4 = (secretEnv: string, sessionEnv?: string) =>
    `  kind: aws-sigv4\n  service: bedrock\n  regionEnv: REGION\n  accessKeyIdEnv: KEY_ID\n  secretAccessKeyEnv: ${secretEnv}${sessionEnv ? `\n  sessionTokenEnv: ${sessionEnv}` : ''}`;
  const models = (id: string) => `  - id: ${id}-chat\n    upstream: "vendor.model-v1:0"\n    kind: chat\n    price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }\n`;
  const awsChannel = (id: string, credential: string) => `id: ${id}\nprotocol: signed-chat\nbaseUrl: \${UPSTREAM}\ncredential:\n${credential}\nmodels:\n${models(id)}`;
  let upstream: FakeUpstream;
  let gw: TestGateway;
  const refusals: string[] = [];

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    installImages(upstream);
    upstream.route(sigV4Gate(AWS, clock.now, refusals));
    gw = await startGateway({
      protocols: { 'signed-chat.yaml': signedChat, 'signed-openai.yaml': 'id: signed-openai\nextends: openai-chat\noperations: {}\n' },
      channels: {
        aws: awsChannel('aws', sigv4('SECRET', 'SESSION')),
        forged: awsChannel('forged', sigv4('WRONG', 'SESSION')),
        // A variant of openai-chat behind SigV4: its multipart edits are signed over the encoded form.
        'aws-images': `id: aws-images\nprotocol: signed-openai\noperations: [edits]\nbaseUrl: \${UPSTREAM}/v1\ncredential:\n${sigv4('SECRET', 'SESSION')}\nmodels:\n  - id: signed-image\n    kind: image\n    price: { perImage: { "1024x1024:low": 0.01 } }\n`,
      },
      env: { UPSTREAM: upstream.url, REGION: AWS.region, KEY_ID: AWS.accessKeyId, SECRET: AWS.secretAccessKey, SESSION: AWS.sessionToken, WRONG: 'not-the-secret-key' },
      overrides: { now: clock.now },
    });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.close();
  });

  it('signs host, x-amz-date and the session token over the exact body, the model id encoded in the path', async () => {
    upstream.reset();
    const res = await chat(gw, 'aws-chat');
    expect(refusals).toEqual([]);
    expect(res.statusCode).toBe(200);
    expect(upstream.last!.path).toBe('/model/vendor.model-v1%3A0/chat/completions');
    expect(upstream.last!.headers['x-amz-security-token']).toBe(AWS.sessionToken);
    expect(upstream.last!.body.model).toBe('vendor.model-v1:0');
  });

  it('signs a streamed request the same way', async () => {
    const res = await chat(gw, 'aws-chat', { stream: true });
    expect(refusals).toEqual([]);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('data: [DONE]');
  });

  it('signs a multipart request over the form as sent, boundary and file bytes included', async () => {
    refusals.length = 0;
    const form = multipart([
      { name: 'model', value: 'signed-image' },
      { name: 'prompt', value: 'add a hat' },
      { name: 'size', value: '1024x1024' },
      { name: 'quality', value: 'low' },
      { name: 'image', value: png(256), filename: 'cat.png', contentType: 'image/png' },
    ]);
    const res = await gw.app.inject({ method: 'POST', url: '/v1/images/edits', headers: { authorization: `Bearer ${gw.key}`, ...form.headers }, payload: form.payload });
    expect(refusals).toEqual([]);
    expect(res.statusCode).toBe(200);
    expect(upstream.last!.path).toBe('/v1/images/edits');
    expect(upstream.last!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(upstream.last!.raw.includes(png(256))).toBe(true);
  });

  it('answers a signature the platform refuses with a typed 502 naming the channel, without the secret', async () => {
    const res = await chat(gw, 'forged-chat');
    expect(refusals).toEqual(['signature does not match']);
    expect(res.statusCode).toBe(502);
    expect(res.json().error).toMatchObject({ code: 'upstream_auth_failed', message: 'channel "forged" refused the gateway\'s credentials' });
    expect(res.body).not.toContain('not-the-secret-key');
  });
});

describe('static credentials', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    gw = await startGateway({
      channels: {
        // A key in a header of the credential's own choosing instead of the protocol's `authorization: Bearer`.
        own: channel('own', `${upstream.url}/v1`, '  env: OWN_KEY\n  header: api-key\n  value: "{{ credential }}"'),
        // Alternatives: the first whose variables are all set is used.
        second: channel('second', `${upstream.url}/v1`, '  - env: UNSET_KEY\n    header: api-key\n    value: "{{ credential }}"\n  - env: SECOND_KEY'),
      },
      env: { OWN_KEY: 'own-key-value', SECOND_KEY: 'second-key-value', UNSET_KEY: '' },
    });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.close();
  });

  it("sends a key in the credential's own header and not in the protocol's", async () => {
    expect((await chat(gw, 'own-chat')).statusCode).toBe(200);
    expect(upstream.last!.headers['api-key']).toBe('own-key-value');
    expect(upstream.last!.headers.authorization).toBeUndefined();
  });

  it('uses the first alternative whose variables are set', async () => {
    expect((await chat(gw, 'second-chat')).statusCode).toBe(200);
    expect(upstream.last!.headers.authorization).toBe('Bearer second-key-value');
    expect(upstream.last!.headers['api-key']).toBeUndefined();
  });
});
