// Issue 21: a pass-through relays the client's request (model id mapped, nothing added), and billing follows the usage the
// upstream reports, priced by token class and bounded by the model's declared limits. Each case failed before the fix.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { issueApiKey } from '../src/auth/keys.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import { recordProviderId } from '../src/store/provider-ids.js';
import { captureLogs } from './kit/log-capture.js';

const logs = captureLogs();

let fake: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

/** 2.0 / 10.0 USD per million; o-model declares limits, plain-chat does not (the configured default applies). */
const openaiModels = `  - id: o-model
    upstream: o4-mini-upstream
    kind: chat
    limits: { contextTokens: 100000, maxOutputTokens: 1000 }
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }
  - id: plain-chat
    upstream: upstream-chat
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }
  - id: audio-chat
    upstream: upstream-audio
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0, audioInputPerMillion: 40.0, audioOutputPerMillion: 80.0 }
`;

const anthropicChannel = (baseUrl: string) => `id: claude
protocol: anthropic-messages
baseUrl: ${baseUrl}
models:
  - id: fake-claude
    upstream: upstream-claude
    kind: chat
    limits: { contextTokens: 200000, maxOutputTokens: 64000 }
    price: { inputPerMillion: 3.0, outputPerMillion: 15.0, cachedInputPerMillion: 0.3, cacheWritePerMillion: 3.75, cacheWrite1hPerMillion: 6.0 }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({
    channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: openaiModels }), claude: anthropicChannel(`${fake.url}/anthropic`) },
    listen: true,
    logger: logs.logger,
  });
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: gw.url, maxRetries: 0 });
  // A response this workspace was handed earlier: only such an id may be continued (issue 27 item 5).
  await recordProviderId(gw.services.db, 'response', 'resp_prev', gw.workspace.id);
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => fake.reset());

const ledgerOf = async (requestId: string) => (await ledgerForRequest(gw.services.db, requestId))[0];
const completion = (usage: Record<string, unknown>, finish = 'stop') => ({
  id: 'c1', object: 'chat.completion', created: 1, model: 'o4-mini-upstream',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, logprobs: null, finish_reason: finish }], usage,
});
const responseObject = (usage: Record<string, unknown>, status = 'completed') => ({
  id: 'resp_1', object: 'response', created_at: 1, status, model: 'o4-mini-upstream', output: [], usage,
  ...(status === 'incomplete' ? { incomplete_details: { reason: 'max_output_tokens' } } : {}),
});

describe('a pass-through request is the client request', () => {
  it('a reasoning-model chat without an output bound reaches the upstream with no max_tokens added', async () => {
    fake.next({ kind: 'json', body: completion({ prompt_tokens: 10, completion_tokens: 5 }) });
    const res = await openai.chat.completions.create({ model: 'o-model', messages: [{ role: 'user', content: 'think' }], reasoning_effort: 'high' });
    expect(res.choices[0].message.content).toBe('ok');
    expect(fake.last!.body).toEqual({ model: 'o4-mini-upstream', messages: [{ role: 'user', content: 'think' }], reasoning_effort: 'high' });
  });

  it('a stream without a bound gets only stream_options.include_usage, and the usage chunk is not passed on', async () => {
    fake.next({
      kind: 'sse',
      events: [
        { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-chat', choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: null }] } },
        { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-chat', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] } },
        { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-chat', choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } } },
        '[DONE]',
      ],
    });
    const stream = await openai.chat.completions.create({ model: 'plain-chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    const chunks = [];
    for await (const chunk of stream.data) chunks.push(chunk);
    expect(fake.last!.body).toEqual({ model: 'upstream-chat', stream: true, messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: true } });
    expect(chunks.some((c) => 'usage' in c && c.usage)).toBe(false);
    const row = await ledgerOf(stream.response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ input_tokens: 9, output_tokens: 2, cost_micros: 9 * 2 + 2 * 10 });
  });

  it('relays the body bytes: a seed of 2^53 + 1 keeps its digits, spelling and order stay the client\'s', async () => {
    fake.next({ kind: 'json', body: completion({ prompt_tokens: 1, completion_tokens: 1 }) });
    const text = '{"seed": 9007199254740993, "model":"o-model","temperature":1.0,"messages":[{"role":"user","content":"x\\u00e9"}]}';
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, payload: text });
    expect(res.statusCode).toBe(200);
    expect(fake.last!.raw.toString('utf8')).toBe(text.replace('"model":"o-model"', '"model":"o4-mini-upstream"'));
  });

  it('relays the upstream answer bytes too: the client model id and the cost set, a 2^53 + 1 integer keeps its digits', async () => {
    const answer = '{"id":"c9","object":"chat.completion","created":1,"model":"o4-mini-upstream","system_fingerprint":"fp","x_trace": 9007199254740993,"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}';
    fake.next({ kind: 'handler', fn: (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(answer); } });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'o-model', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.body).toBe(answer.replace('"o4-mini-upstream"', '"o-model"').replace(/}$/, ',"cost":{"amount":0.000016,"currency":"USD"}}'));
  });

  it('relays an Anthropic Messages body byte for byte but the model', async () => {
    const text = '{"model":"fake-claude","max_tokens":12,"metadata":{"user_id":"u"},"messages":[{"role":"user","content":"hi"}],"top_k":9007199254740993}';
    const res = await gw.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': gw.key, 'content-type': 'application/json' }, payload: text });
    expect(res.statusCode).toBe(200);
    expect(fake.last!.raw.toString('utf8')).toBe(text.replace('"fake-claude"', '"upstream-claude"'));
  });
});

describe('the estimate reads the model limits', () => {
  it('reserves the whole context for previous_response_id: refused under a cap the context does not fit', async () => {
    // 100,000 context x 2.0 + 1,000 output x 10.0 = 210,000 micro-USD reserved.
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 200_000 });
    const client = new OpenAI({ apiKey: key.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await expect(client.responses.create({ model: 'o-model', input: 'go on', previous_response_id: 'resp_prev' })).rejects.toMatchObject({ status: 402 });
    expect(fake.requests).toHaveLength(0);
    fake.next({ kind: 'json', body: responseObject({ input_tokens: 5, output_tokens: 5 }) });
    await client.responses.create({ model: 'o-model', input: 'hello' });
    expect(fake.requests).toHaveLength(1);
  });
});

describe('billing follows the usage the upstream reports', () => {
  it('previous_response_id: 20,000 reported input tokens are charged, and the answer cost equals the charge', async () => {
    fake.next({ kind: 'json', body: responseObject({ input_tokens: 20_000, output_tokens: 400 }) });
    const res = await openai.responses.create({ model: 'plain-chat', input: 'go on', previous_response_id: 'resp_prev' }).withResponse();
    const row = await ledgerOf(res.response.headers.get('x-request-id')!);
    // 20,000 x 2.0 + 400 x 10.0 = 44,000 micro-USD.
    expect(row.cost_micros).toBe(44_000);
    expect((res.data as unknown as { cost: unknown }).cost).toEqual({ amount: 0.044, currency: 'USD' });
  });

  it('a Responses stream that ends response.incomplete is charged the usage it reports', async () => {
    const incomplete = responseObject({ input_tokens: 199, output_tokens: 10 }, 'incomplete');
    fake.next({
      kind: 'sse',
      events: [
        { event: 'response.created', data: { type: 'response.created', sequence_number: 0, response: { ...incomplete, status: 'in_progress', usage: null } } },
        { event: 'response.incomplete', data: { type: 'response.incomplete', sequence_number: 1, response: incomplete } },
      ],
    });
    const res = await openai.responses.create({ model: 'o-model', input: 'x', stream: true }).withResponse();
    let last: Record<string, unknown> | undefined;
    for await (const event of res.data) if (event.type === 'response.incomplete') last = event.response as unknown as Record<string, unknown>;
    const row = await ledgerOf(res.response.headers.get('x-request-id')!);
    expect(row.cost_micros).toBe(199 * 2 + 10 * 10);
    expect(last?.cost).toEqual({ amount: 0.000498, currency: 'USD' });
  });

  it('usage above the estimate but within the limits is charged in full: overage on the ledger, a warning in the log', async () => {
    fake.next({ kind: 'json', body: completion({ prompt_tokens: 50_000, completion_tokens: 10 }) });
    const res = await openai.chat.completions.create({ model: 'o-model', max_completion_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    const requestId = res.response.headers.get('x-request-id')!;
    const row = await ledgerOf(requestId);
    expect(row.cost_micros).toBe(50_000 * 2 + 10 * 10);
    expect(Number(row.overage_micros)).toBeGreaterThan(0);
    expect((res.data as unknown as { cost: unknown }).cost).toEqual({ amount: row.cost_micros / 1e6, currency: 'USD' });
    const warning = await logs.next((line) => line.reqId === requestId && line.overageMicros !== undefined);
    expect(warning).toMatchObject({ level: 40, overageMicros: Number(row.overage_micros) });
  });

  it('usage beyond the model limits is malformed: 502, charged the reservation', async () => {
    fake.next({ kind: 'json', body: completion({ prompt_tokens: 100_000, completion_tokens: 1_001 }) });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'o-model', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('upstream_malformed');
    const row = await ledgerOf(res.headers['x-request-id'] as string);
    expect(row.cost_micros).toBeGreaterThan(10 * 10);
    expect(row.input_tokens).toBe(0);
  });

  it('a Responses call with a server-side tool may report more than one context window: charged as reported', async () => {
    fake.next({ kind: 'json', body: responseObject({ input_tokens: 150_000, output_tokens: 900 }) });
    const res = await openai.responses.create({ model: 'o-model', input: 'search', tools: [{ type: 'web_search_preview' }] }).withResponse();
    const row = await ledgerOf(res.response.headers.get('x-request-id')!);
    expect(row.cost_micros).toBe(150_000 * 2 + 900 * 10);
    expect((res.data as unknown as { cost: unknown }).cost).toEqual({ amount: 0.309, currency: 'USD' });
  });

  it('an answer cut by length with usage is charged that usage', async () => {
    fake.next({ kind: 'json', body: completion({ prompt_tokens: 30, completion_tokens: 10 }, 'length') });
    const res = await openai.chat.completions.create({ model: 'o-model', max_completion_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect((await ledgerOf(res.response.headers.get('x-request-id')!)).cost_micros).toBe(30 * 2 + 10 * 10);
  });
});

describe('every token class at its price', () => {
  it('prices Anthropic cache reads, 5-minute writes and 1-hour writes apart, and the answer cost equals the charge', async () => {
    fake.next({
      kind: 'json',
      body: {
        id: 'msg_1', type: 'message', role: 'assistant', model: 'upstream-claude', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null,
        usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 1000, cache_creation_input_tokens: 3000, cache_creation: { ephemeral_5m_input_tokens: 2000, ephemeral_1h_input_tokens: 1000 } },
      },
    });
    const res = await anthropic.messages.create({ model: 'fake-claude', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    // 100 x 3.0 + 1,000 x 0.3 + 2,000 x 3.75 + 1,000 x 6.0 + 20 x 15.0 = 300 + 300 + 7,500 + 6,000 + 300 micro-USD.
    const row = await ledgerOf(res.response.headers.get('x-request-id')!);
    expect(row.cost_micros).toBe(14_400);
    expect(row.input_tokens).toBe(4100);
    expect((res.data as unknown as { cost: unknown }).cost).toEqual({ amount: 0.0144, currency: 'USD' });
  });

  it('prices cache writes on a Messages stream too: message_start carries them, message_delta makes usage final', async () => {
    const start = { type: 'message_start', message: { id: 'msg_s', type: 'message', role: 'assistant', model: 'upstream-claude', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 100, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 2000, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 2000 } } } };
    fake.next({
      kind: 'sse',
      events: [
        { event: 'message_start', data: start },
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } } },
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 20 } } },
        { event: 'message_stop', data: { type: 'message_stop' } },
      ],
    });
    const stream = anthropic.messages.stream({ model: 'fake-claude', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    const message = await stream.finalMessage();
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'ok' });
    const requestId = (await stream.withResponse()).response.headers.get('x-request-id')!;
    // 100 x 3.0 + 2,000 x 6.0 (1-hour writes) + 20 x 15.0 = 300 + 12,000 + 300 micro-USD.
    expect((await ledgerOf(requestId)).cost_micros).toBe(12_600);
  });

  it('prices OpenAI audio tokens where the model declares an audio price', async () => {
    fake.next({ kind: 'json', body: completion({ prompt_tokens: 100, completion_tokens: 50, prompt_tokens_details: { cached_tokens: 0, audio_tokens: 40 }, completion_tokens_details: { audio_tokens: 30 } }) });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'audio-chat', messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.statusCode).toBe(200);
    // 60 x 2.0 + 40 x 40.0 + 20 x 10.0 + 30 x 80.0 = 120 + 1,600 + 200 + 2,400.
    expect((await ledgerOf(res.headers['x-request-id'] as string)).cost_micros).toBe(4320);
    expect(res.json().cost).toEqual({ amount: 0.00432, currency: 'USD' });
  });
});
