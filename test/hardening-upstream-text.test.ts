// Hardening items 3 and 5: upstream error text is bounded, scrubbed in linear time, and leaks no URL, credential or upstream model id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';

const CHANNEL_SECRET = 'chan-secret-Zq8vX2mN4pL7';
let fake: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({
    env: { HARDENING_UPSTREAM_KEY: CHANNEL_SECRET },
    channels: { fake: chatChannel('fake', `${fake.url}/v1`, { credentialEnv: 'HARDENING_UPSTREAM_KEY', models: testModels.fakeChat }) },
  });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

/** The message a client gets when the upstream refuses the request with 400 and this message. */
async function relayedMessage(upstreamMessage: string): Promise<{ status: number; message: string; ms: number }> {
  fake.next({ kind: 'status', status: 400, body: { error: { message: upstreamMessage, type: 'invalid_request_error' } } });
  const started = performance.now();
  const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] } });
  return { status: res.statusCode, message: res.json().error.message as string, ms: performance.now() - started };
}

describe('upstream error text is scrubbed in linear time', () => {
  it('answers a 62 KB "a.a.a..." upstream message in well under a second', async () => {
    const { status, ms } = await relayedMessage('a.'.repeat(31 * 1024));
    expect(status).toBe(400);
    expect(ms).toBeLessThan(1000);
  });

  it('answers a 62 KB run of key-shaped fragments in well under a second', async () => {
    const { status, ms } = await relayedMessage('eyJ-sk-'.repeat(8800));
    expect(status).toBe(400);
    expect(ms).toBeLessThan(1000);
  });

  it('cuts a long upstream message to a bounded length', async () => {
    const { message } = await relayedMessage(`too long: ${'word '.repeat(100_000)}`);
    expect(message.length).toBeLessThan(600);
  });
});

describe('upstream error text leaks no credentials', () => {
  it.each([
    ['an OpenAI project key', 'Incorrect API key provided: sk-proj-AbCdEf0123456789xyzXYZ.', 'sk-proj-AbCdEf0123456789xyzXYZ'],
    ['an Anthropic key', 'invalid x-api-key sk-ant-api03-Zm9vYmFyYmF6cXV4MTIzNDU2', 'sk-ant-api03-Zm9vYmFyYmF6cXV4MTIzNDU2'],
    ['a bearer token', 'token rejected: Bearer eyJhbGciOi.eyJzdWIiOiIx.c2lnbmF0dXJl', 'eyJhbGciOi'],
    ['the channel credential', `credential ${CHANNEL_SECRET} has no access to this model`, CHANNEL_SECRET],
    ['an api_key parameter', 'bad request: api_key=hunter2hunter2 is not allowed', 'hunter2hunter2'],
    ['a quoted secret field', 'echo: {"password": "correct-horse-battery"}', 'correct-horse-battery'],
    ['an AWS access key id', 'signature for AKIAIOSFODNN7EXAMPLE does not match', 'AKIAIOSFODNN7EXAMPLE'],
    ['a long hex secret', 'bad signature 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', '9f86d081884c7d659a2feaa0c55ad015'],
    ['a base64 secret', 'session c2VjcmV0LXRva2VuLWZvci1UZXN0aW5nMTIzNDU2Nzg5MA is invalid', 'c2VjcmV0LXRva2VuLWZvci1UZXN0aW5nMTIzNDU2Nzg5MA'],
    ['an upstream URL', 'see https://internal.example:8443/v1/secret-path?key=x for details', 'internal.example'],
    ['an internal address', 'connect to 10.1.2.3 refused', '10.1.2.3'],
  ])('removes %s from an upstream 400 message', async (_kind, upstreamMessage, secret) => {
    const { status, message } = await relayedMessage(upstreamMessage);
    expect(status).toBe(400);
    expect(message).toContain('upstream rejected the request');
    expect(message).not.toContain(secret);
  });

  it('keeps the useful part of an upstream message', async () => {
    const { message } = await relayedMessage("Invalid value for 'temperature': must be at most 2.");
    expect(message).toBe("upstream rejected the request: Invalid value for 'temperature': must be at most 2.");
  });

  it('names the client model instead of the upstream model', async () => {
    const { message } = await relayedMessage('The model upstream-chat does not support tools');
    expect(message).toContain('fake-chat');
    expect(message).not.toContain('upstream-chat');
  });
});
