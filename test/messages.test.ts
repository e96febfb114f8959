// POST /v1/messages through HTTP: routing both ways, Anthropic-shaped errors, billing, and streams that stay streams.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway, testModels } from './kit/gateway.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';

let fake: FakeUpstream;
let gw: TestGateway;

const openaiModels = testModels.fakeChat + testModels.fakeEval;
const anthropicModels = `  - id: claude-fake
    upstream: claude-upstream
    kind: chat
    price: { inputPerMillion: 3.0, outputPerMillion: 15.0, cachedInputPerMillion: 0.3 }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({
    channels: {
      fake: chatChannel('fake', `${fake.url}/v1`, { models: openaiModels }),
      anthropic: chatChannel('anthropic', `${fake.url}/v1`, { protocol: 'anthropic-messages', models: anthropicModels }),
    },
    listen: true,
  });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.chat = { text: 'Hello from the fake upstream.', usage: { prompt_tokens: 12, completion_tokens: 7 } };
});

const headers = () => ({ 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' });
const post = (body: object, url = '/v1/messages', extra: Record<string, string> = {}) => gw.app.inject({ method: 'POST', url, headers: { ...headers(), ...extra }, payload: body });
const hi = (model: string, more: object = {}) => ({ model, max_tokens: 32, messages: [{ role: 'user', content: 'hi' }], ...more });
const sseEvents = (text: string) =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => ({ event: /^event: (.*)$/m.exec(frame)?.[1], data: /^data: (.*)$/m.exec(frame)?.[1] ?? '' }));

describe('POST /v1/messages to an openai-chat channel', () => {
  it('answers on /api/v1/messages and /v1/messages, with cost, and writes one ledger row', async () => {
    for (const url of ['/api/v1/messages', '/v1/messages']) {
      const res = await post(hi('fake-chat'), url);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ type: 'message', model: 'fake-chat', cost: { amount: 0.000094, currency: 'USD' } });
      const ledger = await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string);
      expect(ledger).toHaveLength(1);
      expect(ledger[0]).toMatchObject({ model: 'fake-chat', channel: 'fake', input_tokens: 12, output_tokens: 7, cost_micros: 94 });
    }
  });

  it('accepts the key as a bearer token too', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/messages', headers: { authorization: `Bearer ${gw.key}` }, payload: hi('fake-chat') });
    expect(res.statusCode).toBe(200);
  });

  it('sends no thinking to a model that does not reason, and refuses top_k by name', async () => {
    const res = await post(hi('fake-chat', { thinking: { type: 'enabled', budget_tokens: 1024 } }));
    expect(res.statusCode).toBe(200);
    expect(fake.last!.body).not.toHaveProperty('thinking');
    expect(fake.last!.body).not.toHaveProperty('reasoning_effort');
    const refused = await post(hi('fake-chat', { top_k: 5 }));
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.message).toContain('"top_k"');
  });

  it('refuses an untranslatable block with an Anthropic 400 before calling the upstream', async () => {
    const res = await post({ model: 'fake-chat', max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'search_result', source: 'https://example.com', title: 't', content: [] }] }] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(res.json().error.message).toContain('search_result');
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses an evaluation model with an Anthropic 400 naming the evaluate endpoint', async () => {
    const res = await post(hi('fake-eval'));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'evaluation_model_not_supported' } });
    expect(res.json().error.message).toContain('/api/v1/evaluate');
  });

  it('refuses a malformed block with an Anthropic 400', async () => {
    const res = await post({ model: 'fake-chat', max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'image' }] }] });
    expect(res.statusCode).toBe(400);
    expect(res.json().type).toBe('error');
    expect(res.json().error.message).toContain('source');
  });

  it('answers 401 in the Anthropic envelope without a key', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/messages', payload: hi('fake-chat') });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  it('turns upstream failures into Anthropic errors with the right status, never leaking the upstream body', async () => {
    fake.next({ kind: 'status', status: 500, body: { error: { message: 'secret internals' } } });
    const failed = await post(hi('fake-chat'));
    expect(failed.statusCode).toBe(502);
    expect(failed.json()).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    expect(failed.body).not.toContain('secret internals');

    fake.next({ kind: 'status', status: 429, headers: { 'retry-after': '7' } });
    const limited = await post(hi('fake-chat'));
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('7');
    expect(limited.json().error.type).toBe('rate_limit_error');

    fake.next({ kind: 'status', status: 400, body: { error: { message: 'max_tokens is too large' } } });
    const rejected = await post(hi('fake-chat'));
    expect(rejected.statusCode).toBe(400);
    expect(rejected.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(rejected.json().error.message).toContain('max_tokens is too large');
  });

  it('ends a stream the upstream cuts off with an Anthropic error event', async () => {
    const chunk = (delta: object) => JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }] });
    fake.next({
      kind: 'handler',
      fn: (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${chunk({ role: 'assistant', content: '' })}\n\ndata: ${chunk({ content: 'Hel' })}\n\n`);
        // Close the connection mid-body: the chunked response never completes.
        res.socket!.end();
      },
    });
    const res = await post(hi('fake-chat', { stream: true }));
    expect(res.statusCode).toBe(200);
    const events = sseEvents(res.body);
    expect(events.map((e) => e.event)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'error']);
    expect(JSON.parse(events.at(-1)!.data)).toMatchObject({ type: 'error', error: { type: 'api_error' } });
  });

  it('forwards each event as it arrives instead of waiting for the whole upstream stream', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    fake.next({
      kind: 'handler',
      fn: async (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk({ role: 'assistant', content: 'first' }));
        await released;
        res.end(`${chunk({}, 'stop')}data: [DONE]\n\n`);
      },
    });
    const response = await fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { ...headers(), 'content-type': 'application/json' }, body: JSON.stringify(hi('fake-chat', { stream: true })) });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let received = '';
    while (!received.includes('"text":"first"')) received += (await reader.read()).value ?? '';
    // The upstream is still holding the stream open: the first delta got through on its own.
    release();
    while (!received.includes('message_stop')) {
      const { value, done } = await reader.read();
      if (done) break;
      received += value;
    }
    expect(received).toContain('"stop_reason":"end_turn"');
  });
});

describe('POST /v1/messages to an anthropic-messages channel (pass-through)', () => {
  it('maps the model, keeps the body, and adds cost from the upstream usage', async () => {
    const res = await post(hi('claude-fake', { top_k: 3, thinking: { type: 'enabled', budget_tokens: 1024 } }));
    expect(res.statusCode).toBe(200);
    expect(fake.last!.path).toBe('/v1/messages');
    expect(fake.last!.body).toEqual({ ...hi('claude-upstream'), top_k: 3, thinking: { type: 'enabled', budget_tokens: 1024 } });
    // 12 input at 3.0/M + 7 output at 15.0/M = 36 + 105 micro-USD
    expect(res.json()).toMatchObject({ id: 'msg_fake', model: 'claude-fake', usage: { input_tokens: 12, output_tokens: 7 }, cost: { amount: 0.000141, currency: 'USD' } });
  });

  it('streams events through, rewriting the model and billing from message_start and message_delta', async () => {
    fake.chat = { text: 'Hi there.', usage: { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 60 } };
    const res = await post(hi('claude-fake', { stream: true }));
    const events = sseEvents(res.body);
    expect(events[0].event).toBe('message_start');
    expect(JSON.parse(events[0].data).message.model).toBe('claude-fake');
    const delta = JSON.parse(events.find((e) => e.event === 'message_delta')!.data);
    // 40 input at 3.0/M + 60 cached at 0.3/M + 20 output at 15.0/M = 120 + 18 + 300 micro-USD
    expect(delta.cost).toEqual({ amount: 0.000438, currency: 'USD' });
    expect(events.at(-1)!.event).toBe('message_stop');
    const ledger = await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string);
    expect(ledger[0]).toMatchObject({ input_tokens: 100, cached_input_tokens: 60, output_tokens: 20, cost_micros: 438 });
  });
});
