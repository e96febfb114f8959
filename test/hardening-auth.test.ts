// Hardening item 1: a key is checked before the body is read, and JSON routes bound their bodies' size and depth.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';
import { findApiKeyByHash, revokeApiKey } from '../src/store/api-keys.js';
import { hashApiKey } from '../src/auth/keys.js';

let fake: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ listen: true, channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.fakeChat + testModels.fakeEval }) } });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

const MiB = 1024 * 1024;

/**
 * Announces a 25 MiB JSON body, sends only its first 64 KiB and waits for the answer: a gateway that
 * reads the body before checking the key never answers, one that checks first answers at once.
 */
async function answerBeforeBody(path: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const req = httpRequest(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(25 * MiB), ...headers } });
  req.on('error', () => undefined);
  req.write(`{"model":"fake-chat","messages":[{"role":"user","content":"${'a'.repeat(64 * 1024)}`);
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  req.destroy();
  return { status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
}

describe('a key is checked before the body is read', () => {
  it('answers 401 to a missing key while a 25 MiB body is still arriving', { timeout: 10_000 }, async () => {
    const res = await answerBeforeBody('/v1/chat/completions', {});
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' });
  });

  it('answers 401 to an unknown key while the body is still arriving', { timeout: 10_000 }, async () => {
    const res = await answerBeforeBody('/v1/chat/completions', { authorization: 'Bearer sk-gw-unknown' });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_api_key');
  });

  it('answers 401 to a revoked key while the body is still arriving', { timeout: 10_000 }, async () => {
    const key = await gw.newKey();
    await revokeApiKey(gw.services.db, (await findApiKeyByHash(gw.services.db, hashApiKey(key)))!.id);
    const res = await answerBeforeBody('/v1/chat/completions', { authorization: `Bearer ${key}` });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('revoked_api_key');
  });

  it('answers 401 to an expired key while the body is still arriving', { timeout: 10_000 }, async () => {
    const key = await gw.newKey({ expiresAt: Math.floor(Date.now() / 1000) - 1 });
    const res = await answerBeforeBody('/v1/chat/completions', { 'x-api-key': key });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('expired_api_key');
  });

  it('answers 403 to a key without the scope while the body is still arriving', { timeout: 10_000 }, async () => {
    const key = await gw.newKey({ scopes: ['files.write'] });
    const res = await answerBeforeBody('/v1/chat/completions', { authorization: `Bearer ${key}` });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'missing_scope', param: 'llm.chat' });
  });

  it('answers 401 on the messages route in the Anthropic envelope while the body is still arriving', { timeout: 10_000 }, async () => {
    const res = await answerBeforeBody('/v1/messages', {});
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  it('answers 401 to an unauthenticated upload while its body is still arriving', { timeout: 10_000 }, async () => {
    const res = await answerBeforeBody('/v1/files', { 'content-type': 'multipart/form-data; boundary=x' });
    expect(res.status).toBe(401);
  });

  it('keeps a request id on answers refused before the body', { timeout: 10_000 }, async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/evaluate', headers: { 'x-request-id': 'trace-auth-1' }, payload: {} });
    expect(res.statusCode).toBe(401);
    expect(res.headers['x-request-id']).toBe('trace-auth-1');
  });
});

describe('JSON routes bound their bodies', () => {
  const auth = () => ({ authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' });
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('refuses a chat body over the route limit of 16 MiB with 413', async () => {
    const payload = `{"model":"fake-chat","messages":[{"role":"user","content":"${'a'.repeat(16 * MiB)}"}]}`;
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: auth(), payload });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('body_too_large');
  });

  it('refuses an evaluate body over the route limit of 4 MiB with 413', async () => {
    const payload = JSON.stringify({ model: 'fake-eval', state: 'a'.repeat(4 * MiB), questions: { q: { type: 'boolean', instructions: 'ok?' } } });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/evaluate', headers: auth(), payload });
    expect(res.statusCode).toBe(413);
  });

  it('refuses JSON nested 10,000 deep in a field the schema leaves open with 400', async () => {
    const payload = `{"model":"fake-chat","messages":[{"role":"user","content":"hi"}],"metadata":${nested(10_000)}}`;
    const before = fake.requests.length;
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: auth(), payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: 'json_too_deep' });
    expect(fake.requests.length).toBe(before);
  });

  it('refuses an evaluate state nested 100,000 deep with 400', async () => {
    const payload = `{"model":"fake-eval","state":${nested(100_000)},"questions":{"q":{"type":"boolean","instructions":"ok?"}}}`;
    const res = await gw.app.inject({ method: 'POST', url: '/v1/evaluate', headers: auth(), payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('json_too_deep');
  });

  it('accepts JSON nested 60 deep', async () => {
    const payload = `{"model":"fake-chat","messages":[{"role":"user","content":"hi"}],"metadata":{"x":${nested(60)}}}`;
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: auth(), payload });
    expect(res.statusCode).toBe(200);
  });

  it('does not count brackets inside strings as nesting', async () => {
    const payload = JSON.stringify({ model: 'fake-chat', messages: [{ role: 'user', content: `${'[{'.repeat(500)} "\\" ]` }] });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: auth(), payload });
    expect(res.statusCode).toBe(200);
  });

  it('refuses a body that is not valid UTF-8 with 400', async () => {
    const payload = Buffer.concat([Buffer.from('{"model":"fake-chat","messages":[{"role":"user","content":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}]}')]);
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: auth(), payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_encoding');
  });

  it('refuses a "__proto__" key with 400 naming it', async () => {
    const payload = '{"model":"fake-chat","messages":[{"role":"user","content":"hi"}],"__proto__":{"admin":true}}';
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: auth(), payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('forbidden_key');
  });
});
