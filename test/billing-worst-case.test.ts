// Regression tests from the review of spending caps: every path that does upstream work is charged, and every worst case is bounded.
import { once } from 'node:events';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { issueApiKey } from '../src/auth/keys.js';

const models = `  - id: flat-chat
    upstream: hidden-upstream-id
    kind: chat
    price: { perRequest: 0.01, outputPerMillion: 1 }
`;
let fake: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ listen: true, channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models }) } });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

const ledgerOf = (keyId: string) => gw.services.db.selectFrom('usage_ledger').selectAll().where('key_id', '=', keyId).execute();
const chat = (key: string, body: Record<string, unknown>) =>
  gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload: { model: 'flat-chat', messages: [{ role: 'user', content: 'hi' }], ...body } });

describe('worst cases are bounded', () => {
  it('adds no output bound upstream when the client sets none: the default bound is for the estimate alone', async () => {
    fake.reset();
    expect((await chat(gw.key, {})).statusCode).toBe(200);
    expect(fake.last!.body).toEqual({ model: 'hidden-upstream-id', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('reserves max_tokens for each of n choices', async () => {
    // 0.01 per request + 8 choices x 4000 tokens at 1 USD/M = 0.042 worst case, over a 0.03 cap.
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 30_000 });
    const res = await chat(key.key, { max_tokens: 4000, n: 8 });
    expect(res.statusCode).toBe(402);
    expect(res.json().error.cap).toMatchObject({ spent: 0, reserved: 0 });
  });
});

describe('upstream work is never free', () => {
  it('charges the reservation when the client hangs up on a non-streaming request', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 1_000_000 });
    let upstreamClosed!: Promise<unknown>;
    fake.next({ kind: 'handler', fn: (_req, res) => { upstreamClosed = once(res, 'close'); } });
    const url = new URL(gw.url);
    const client = request({ host: url.hostname, port: url.port, path: '/v1/chat/completions', method: 'POST', headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' } });
    client.on('error', () => undefined);
    client.end(JSON.stringify({ model: 'flat-chat', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] }));
    await vi.waitFor(() => expect(upstreamClosed).toBeDefined());
    client.destroy();
    await upstreamClosed;
    // 0.01 per request + 1000 output tokens at 1 USD/M: the reserved worst case.
    await vi.waitFor(async () => expect((await ledgerOf(key.id)).map((r) => r.cost_micros)).toEqual([11_000]));
  });

  it('charges the reservation when the upstream answers without usage', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace);
    fake.next({ kind: 'json', body: { id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] } });
    const res = await chat(key.key, { max_tokens: 100 });
    expect(res.statusCode).toBe(200);
    expect((await ledgerOf(key.id)).map((r) => r.cost_micros)).toEqual([10_100]);
    // The answer's cost is what was charged.
    expect(res.json().cost).toEqual({ amount: 0.0101, currency: 'USD' });
  });
});

describe('upstream detail stays private', () => {
  it('keeps an upstream 404 model_not_found (status and code), without the upstream model id or its URLs', async () => {
    fake.next({ kind: 'status', status: 404, body: { error: { message: 'The model `hidden-upstream-id` does not exist at https://internal.example/v1', type: 'invalid_request_error', code: 'model_not_found' } } });
    const res = await chat(gw.key, {});
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('model_not_found');
    expect(res.body).not.toContain('hidden-upstream-id');
    expect(res.body).not.toContain('internal.example');
  });

  it('keeps an upstream 400 useful but names the client model and hides URLs', async () => {
    fake.next({ kind: 'status', status: 400, body: { error: { message: 'hidden-upstream-id: context too long, see https://internal.example/docs' } } });
    const res = await chat(gw.key, {});
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toBe('upstream rejected the request: flat-chat: context too long, see [upstream]');
  });
});
