import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway, testModels } from './kit/gateway.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';

let fake: FakeUpstream;
let gw: TestGateway;

const evalModel = testModels.fakeChat + testModels.fakeEval;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: evalModel }) } });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

const post = (body: unknown, headers: Record<string, string> = {}) =>
  gw.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}`, ...headers }, payload: body as object });

describe('chat completions relay', () => {
  it('relays to the upstream model id and answers with the client model id and cost', async () => {
    fake.reset();
    const res = await post({ model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.statusCode).toBe(200);
    expect(fake.last!.body.model).toBe('upstream-chat');
    expect(fake.last!.path).toBe('/v1/chat/completions');
    const body = res.json();
    expect(body.model).toBe('fake-chat');
    expect(body.choices[0].message.content).toBe('Hello from the fake upstream.');
    // 12 input at 2.0/M + 7 output at 10.0/M = 24 + 70 micro-USD
    expect(body.cost).toEqual({ amount: 0.000094, currency: 'USD' });
    expect(res.headers['x-request-id']).toBeTruthy();
    const ledger = await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string);
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ model: 'fake-chat', input_tokens: 12, output_tokens: 7, cost_micros: 94 });
  });

  it('answers on the /v1 path form too', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { 'x-api-key': gw.key }, payload: { model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.statusCode).toBe(200);
  });

  it('streams, requesting usage upstream but hiding it from a client that did not ask', async () => {
    fake.reset();
    const res = await post({ model: 'fake-chat', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    expect(fake.last!.body.stream_options).toEqual({ include_usage: true });
    const events = res.body.split('\n\n').filter(Boolean).map((f) => f.replace(/^data: /, ''));
    expect(events.at(-1)).toBe('[DONE]');
    expect(events.some((e) => e.includes('"usage"'))).toBe(false);
    const ledger = await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string);
    expect(ledger[0]).toMatchObject({ input_tokens: 12, output_tokens: 7, cost_micros: 94 });
  });

  it('puts the cost on the final usage chunk when the client asked for usage', async () => {
    const res = await post({ model: 'fake-chat', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    const chunks = res.body.split('\n\n').filter(Boolean).map((f) => f.replace(/^data: /, '')).filter((e) => e !== '[DONE]').map((e) => JSON.parse(e));
    const last = chunks.at(-1);
    expect(last.usage.prompt_tokens).toBe(12);
    expect(last.cost).toEqual({ amount: 0.000094, currency: 'USD' });
  });

  it('refuses an evaluation model with 400 naming the evaluate endpoint', async () => {
    const res = await post({ model: 'fake-eval', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('/api/v1/evaluate');
    expect(res.json().error.code).toBe('evaluation_model_not_supported');
  });

  it('refuses an unknown model with 404 model_not_found, and a body without messages with 400', async () => {
    const unknown = await post({ model: 'nope', messages: [{ role: 'user', content: 'x' }] });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('model_not_found');
    const res = await post({ model: 'fake-chat' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('messages');
  });

  it('turns an upstream 500 into a 502 without leaking its body', async () => {
    fake.next({ kind: 'status', status: 500, body: { error: { message: 'secret internals' } } });
    const res = await post({ model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.statusCode).toBe(502);
    expect(res.body).not.toContain('secret internals');
  });

  it('requires a key, and refuses a key without llm.chat with 403', async () => {
    const none = await gw.app.inject({ method: 'POST', url: '/api/v1/chat/completions', payload: { model: 'fake-chat', messages: [] } });
    expect(none.statusCode).toBe(401);
    const key = await gw.newKey({ scopes: ['files.write'] });
    const res = await gw.app.inject({ method: 'POST', url: '/api/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload: { model: 'fake-chat', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.type).toBe('permission_error');
  });
});
