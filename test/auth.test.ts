import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { revokeApiKey } from '../src/store/api-keys.js';
import { findApiKeyByHash } from '../src/store/api-keys.js';
import { hashApiKey } from '../src/auth/keys.js';

const METRICS_TOKEN = 'metrics-token-for-tests';
let fake: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`) }, extraConfig: `metrics:\n  token: ${METRICS_TOKEN}\n` });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

const chat = (headers: Record<string, string>) =>
  gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload: { model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] } });

describe('API keys', () => {
  it('accepts a key as Bearer or as x-api-key', async () => {
    expect((await chat({ authorization: `Bearer ${gw.key}` })).statusCode).toBe(200);
    expect((await chat({ 'x-api-key': gw.key })).statusCode).toBe(200);
  });

  it('refuses two different keys at once with 401', async () => {
    const other = await gw.newKey();
    const res = await chat({ authorization: `Bearer ${gw.key}`, 'x-api-key': other });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.message).toContain('two different API keys');
  });

  it('refuses a missing or unknown key with 401 in the OpenAI envelope', async () => {
    const missing = await chat({});
    expect(missing.statusCode).toBe(401);
    expect(missing.json().error).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' });
    const unknown = await chat({ authorization: 'Bearer sk-gw-nope' });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json().error.code).toBe('invalid_api_key');
  });

  it('stores keys only as SHA-256 with a display prefix', async () => {
    const key = await gw.newKey();
    const row = await findApiKeyByHash(gw.services.db, hashApiKey(key));
    expect(row).toBeDefined();
    expect(JSON.stringify(row)).not.toContain(key);
    expect(key.startsWith(row!.prefix)).toBe(true);
  });

  it('makes revocation effective on the next request', async () => {
    const key = await gw.newKey();
    expect((await chat({ authorization: `Bearer ${key}` })).statusCode).toBe(200);
    const row = await findApiKeyByHash(gw.services.db, hashApiKey(key));
    await revokeApiKey(gw.services.db, row!.id);
    const res = await chat({ authorization: `Bearer ${key}` });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('revoked_api_key');
  });

  it('refuses an expired key with 401', async () => {
    const key = await gw.newKey({ expiresAt: Math.floor(Date.now() / 1000) - 1 });
    const res = await chat({ authorization: `Bearer ${key}` });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('expired_api_key');
  });

  it('refuses a key without the route scope with 403 naming the scope', async () => {
    const key = await gw.newKey({ scopes: ['llm.evaluate'] });
    const res = await chat({ authorization: `Bearer ${key}` });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toMatchObject({ type: 'permission_error', code: 'missing_scope', param: 'llm.chat' });
  });

  it('lists the models a key may use, with their kind', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/api/v1/models', headers: { authorization: `Bearer ${gw.key}` } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ object: 'list', data: [expect.objectContaining({ id: 'fake-chat', object: 'model', kind: 'chat', owned_by: 'fake' })] });
    const evalOnly = await gw.newKey({ scopes: ['llm.evaluate'] });
    const none = await gw.app.inject({ method: 'GET', url: '/v1/models', headers: { authorization: `Bearer ${evalOnly}` } });
    expect(none.json().data).toEqual([]);
  });
});

describe('operations endpoints', () => {
  it('answers /healthz and /readyz without a key', async () => {
    expect((await gw.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await gw.app.inject({ method: 'GET', url: '/readyz' })).json()).toMatchObject({ status: 'ready' });
  });

  it('exposes Prometheus metrics for requests, upstream latency, tokens and cost', async () => {
    await chat({ authorization: `Bearer ${gw.key}` });
    const res = await gw.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/gateway_requests_total\{route="chat-completions",method="POST",status="200"\} \d+/);
    expect(res.body).toMatch(/gateway_upstream_latency_seconds_count\{channel="fake",status="200"\} \d+/);
    expect(res.body).toMatch(/gateway_tokens_total\{model="fake-chat",direction="input"\} \d+/);
    expect(res.body).toMatch(/gateway_cost_micros_total\{model="fake-chat",currency="USD"\} \d+/);
  });

  it('echoes a caller x-request-id and sets one on every answer, errors and unknown routes included', async () => {
    const echoed = await gw.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-123' } });
    expect(echoed.headers['x-request-id']).toBe('trace-123');
    const missing = await gw.app.inject({ method: 'GET', url: '/v1/nothing-here' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['x-request-id']).toMatch(/^req_/);
    expect(missing.json().error.type).toBe('not_found_error');
  });

  it('refuses malformed JSON with 400 in the endpoint envelope', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, payload: '{"model": ' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_json');
  });
});
