// Protocol operations as data: body encodings, per-request auth, URL-encoded paths, error mappings, the overall deadline,
// and charges that another process can bill by id.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { createReservingMeter } from '../src/billing/meter.js';
import { issueApiKey } from '../src/auth/keys.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';

let fake: FakeUpstream;
let gw: TestGateway;

/** A chat protocol (OpenAI dialect, so OpenAI clients pass through) whose operation and auth are the test's to shape. */
const protocol = (id: string, operation: string, auth = '') => `id: ${id}
dialect: openai-chat
${auth}operations:
  chat:
${operation}`;

const channel = (id: string, protocolId: string, path: string, extra = '') => `id: ${id}
protocol: ${protocolId}
baseUrl: ${fake.url}/${path}
${extra}models:
  - id: ${id}-model
    upstream: "up/stream?model#1"
    kind: chat
    price: { perRequest: 0.001 }
`;

const completion = { id: 'c', object: 'chat.completion', created: 1, model: 'x', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } };

beforeAll(async () => {
  fake = await FakeUpstream.start();
  fake.route((req, res) => {
    if (req.method !== 'POST' || !req.path.startsWith('/form/')) return false;
    json(res, 200, completion);
    return true;
  });
  gw = await startGateway({
    channels: {
      'protocols/form-chat.yaml': protocol('form-chat', '    path: /chat\n    encoding: multipart\n'),
      'protocols/path-chat.yaml': protocol('path-chat', '    path: "/models/{{ model }}/chat"\n'),
      'protocols/signed-chat.yaml': protocol('signed-chat', '    path: /chat/completions\n', 'auth:\n  header: authorization\n  value: "Bearer {{ credential | jwt_hs256: secret, 60 }}"\n'),
      'protocols/detail-chat.yaml': protocol('detail-chat', '    path: /chat/completions\n    errors:\n      message: "{{ answer.detail.reason }}"\n'),
      'protocols/slow-chat.yaml': protocol('slow-chat', '    path: /chat/completions\n    streamFlag: stream\n    deadlineMs: 400\n'),
      form: channel('form', 'form-chat', 'form'),
      paths: channel('paths', 'path-chat', 'v1'),
      signed: channel('signed', 'signed-chat', 'v1', 'credential:\n  env: SIGNED_ISSUER\n  secretEnv: SIGNED_SECRET\n'),
      detail: channel('detail', 'detail-chat', 'v1'),
      slow: channel('slow', 'slow-chat', 'v1'),
    },
    env: { SIGNED_ISSUER: 'issuer-7', SIGNED_SECRET: 'top-secret' },
  });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => fake.reset());

const chat = (model: string, extra: Record<string, unknown> = {}) =>
  gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }], ...extra } });

describe('operation encodings', () => {
  it('sends a multipart form when the operation declares it, objects as JSON fields', async () => {
    const res = await chat('form-model');
    expect(res.statusCode).toBe(200);
    const sent = fake.last!;
    expect(sent.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const raw = sent.raw.toString('utf8');
    expect(raw).toContain('name="model"\r\n\r\nup/stream?model#1\r\n');
    expect(raw).toContain(`name="messages"\r\n\r\n${JSON.stringify([{ role: 'user', content: 'hi' }])}\r\n`);
    expect(raw).toContain('name="max_tokens"\r\n\r\n8\r\n');
  });

  it('URL-encodes every value rendered into an operation path', async () => {
    fake.next({ kind: 'json', body: completion });
    expect((await chat('paths-model')).statusCode).toBe(200);
    expect(fake.last!.path).toBe('/v1/models/up%2Fstream%3Fmodel%231/chat');
  });
});

describe('per-request auth', () => {
  const verify = (header: string | undefined) => {
    const [, token] = /^Bearer (.+)$/.exec(header ?? '') ?? [];
    const [head, payload, signature] = token.split('.');
    expect(createHmac('sha256', 'top-secret').update(`${head}.${payload}`).digest('base64url')).toBe(signature);
    return JSON.parse(Buffer.from(payload, 'base64url').toString()) as { iss: string; exp: number; iat: number };
  };

  it('signs a fresh HS256 token for each request when the protocol renders its auth with jwt_hs256', async () => {
    fake.next({ kind: 'json', body: completion }).next({ kind: 'json', body: completion });
    expect((await chat('signed-model')).statusCode).toBe(200);
    expect((await chat('signed-model')).statusCode).toBe(200);
    const claims = fake.requests.map((r) => verify(r.headers.authorization as string));
    expect(claims).toHaveLength(2);
    for (const c of claims) {
      expect(c.iss).toBe('issuer-7');
      expect(c.exp - c.iat).toBe(60);
      expect(Math.abs(c.iat - Date.now() / 1000)).toBeLessThan(5);
    }
  });
});

describe('operation error mappings', () => {
  it('reads the upstream message where the operation says it is', async () => {
    fake.next({ kind: 'status', status: 400, body: { detail: { reason: 'prompt is too spicy' } } });
    const res = await chat('detail-model');
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toBe('upstream rejected the request: prompt is too spicy');
  });
});

describe('the overall deadline', () => {
  it('answers 504 when an upstream trickles its answer past the operation deadline, though each byte beats the body timeout', async () => {
    fake.next({ kind: 'trickle', text: JSON.stringify(completion), delayMs: 60 });
    const res = await chat('slow-model');
    expect(res.statusCode).toBe(504);
    expect(res.json().error.code).toBe('upstream_timeout');
  });

  it('ends a stream with a timeout error event at the deadline', async () => {
    const chunk = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'x', choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }] };
    fake.next({ kind: 'sse', events: Array.from({ length: 40 }, () => ({ data: chunk })), delayMs: 50 });
    const res = await chat('slow-model', { stream: true });
    expect(res.statusCode).toBe(200);
    expect(res.body.split('\n\n').filter(Boolean).at(-1)).toContain('upstream_timeout');
  });
});

describe('charges addressed by id', () => {
  it('are billed once by another process that resumes them, however often either side settles', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 1_000_000 });
    const route = gw.services.config.models.get('form-model')![0];
    const charge = await gw.services.meter.begin({ auth: { keyId: key.id, workspaceId: gw.workspace.id, scopes: [], spendCapMicros: 1_000_000 }, route, requestId: 'req_task', estimateMicros: 5_000 });
    // Another process: its own meter over the same store, given only the charge's reference.
    const elsewhere = createReservingMeter({ store: gw.services.spend, reservationTtlMs: 60_000 }).resume(JSON.parse(JSON.stringify(charge.ref)));
    expect((await elsewhere.settle({ costMicros: 3_000 })).chargedMicros).toBe(3_000);
    expect((await charge.settle({ costMicros: 3_000 })).charged).toBe(false);
    await charge.close();
    expect((await ledgerForRequest(gw.services.db, 'req_task')).map((r) => r.cost_micros)).toEqual([3_000]);
    expect(await gw.services.spend.balance('key', key.id, Date.now())).toEqual({ spentMicros: 3_000, reservedMicros: 0 });
  });
});
